#!/usr/bin/env bash
# guides_test.py can fail: a planted guide with a package path the package does
# not install, a step not run whose reason the reader cannot see, a step whose
# output lacks what the guide says, and no Undo section is refused, each with
# its own line. Exit 77 (skip) when not root, as guides_test.py.
#   refuses_planted.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$(cd "${1:?usage: refuses_planted.sh SOURCE_DIR BUILD_DIR}" && pwd)
build=${2:?usage: refuses_planted.sh SOURCE_DIR BUILD_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/planted.md" <<'MD'
# A planted guide

<!-- guide: run -->
```sh
ls /usr/share/oci-rlimit/kubernetes/handler/runtimeclass.yaml
```

<!-- guide: output -->
```text
what the step does not print
```

Then apply `/usr/share/oci-rlimit/kubernetes/nri-daemonset.yaml`.

<!-- guide: not run: no Kubernetes API server for kubectl on the test machine -->
```sh
kubectl apply -k /usr/share/oci-rlimit/kubernetes/handler
```
MD
set +e
out=$(python3 "$src/tests/guides/guides_test.py" "$src" "$build" "$tmp/planted.md" 2>&1)
rc=$?
set -e
[[ $rc == 77 ]] && { echo "$out"; exit 77; }
fails=0
want() {
  grep -qF -- "$1" <<<"$out" || { echo "refuses_planted: FAIL: no line saying: $1"; fails=1; }
}
[[ $rc == 1 ]] || { echo "refuses_planted: FAIL: exit $rc, want 1"; fails=1; }
want 'output lacks "what the step does not print"'
want "/usr/share/oci-rlimit/kubernetes/nri-daemonset.yaml is named but the package does not install it"
want 'must say "Not run here: no Kubernetes API server for kubectl on the test machine"'
want 'no "Undo" or "Uninstall" section'
((fails == 0)) || { echo "$out"; exit 1; }
echo "refuses_planted: the planted guide was refused 4 ways"
