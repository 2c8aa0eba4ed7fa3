#!/usr/bin/env bash
# build-image.py, the offline `docker build` of tests/cluster: the shipped Dockerfiles give images
# with the files their COPY lines name, where they name them, and their ENTRYPOINT; what the
# builder does not know (RUN, a FROM other than the BASE argument, a missing source) is refused.
#   tests/cluster/build-image-test.sh SOURCE_DIR
set -euo pipefail
src=${1:?usage: build-image-test.sh SOURCE_DIR}
here=$(dirname "$(readlink -f "$0")")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "build-image-test: $*" >&2; exit 1; }

# a context as the repository lays it out, with stand-in programs
mkdir -p "$tmp/ctx/build-portable-amd64/bin" "$tmp/ctx/packaging/kubernetes" "$tmp/base/bin"
for p in oci-rlimit oci-rlimit-hook oci-rlimit-runtime oci-prlimit-helper oci-rlimit-nri; do
  echo "$p" >"$tmp/ctx/build-portable-amd64/bin/$p"
done
cp "$src/packaging/kubernetes/"{Dockerfile,Dockerfile.nri,install.sh} "$tmp/ctx/packaging/kubernetes/"
echo base >"$tmp/base/bin/sh"
k=$tmp/ctx/packaging/kubernetes
python3 "$here/build-image.py" "$tmp/images.tar" "$tmp/base" \
  "example.org/installer:1=$k/Dockerfile:$tmp/ctx:BASE=b" "example.org/nri:1=$k/Dockerfile.nri:$tmp/ctx:BASE=b" \
  "example.org/pause:1=base:/bin/sleep,1"
mkdir "$tmp/oci" && tar -C "$tmp/oci" -xf "$tmp/images.tar"
python3 - "$tmp/oci" <<'PY'
import json, sys, tarfile
d = sys.argv[1]
blob = lambda digest: d + "/blobs/sha256/" + digest.split(":")[1]
want = {
    "example.org/installer:1": ({"opt/oci-rlimit/bin/amd64/oci-rlimit", "opt/oci-rlimit/bin/amd64/oci-rlimit-hook",
                                 "opt/oci-rlimit/bin/amd64/oci-rlimit-runtime", "opt/oci-rlimit/bin/amd64/oci-prlimit-helper",
                                 "opt/oci-rlimit/bin/amd64/oci-rlimit-nri", "opt/oci-rlimit/install.sh"},
                                ["/opt/oci-rlimit/install.sh"]),
    "example.org/nri:1": ({"usr/bin/oci-rlimit-nri"}, ["/usr/bin/oci-rlimit-nri"]),
    "example.org/pause:1": (set(), None),
}
got = {}
for m in json.load(open(d + "/index.json"))["manifests"]:
    name = m["annotations"]["io.containerd.image.name"]
    man = json.load(open(blob(m["digest"])))
    cfg = json.load(open(blob(man["config"]["digest"])))
    files = set()
    for layer in man["layers"]:
        files |= {i.name for i in tarfile.open(blob(layer["digest"])) if i.isfile()}
    assert "bin/sh" in files, (name, "no base layer")
    files.discard("bin/sh")
    got[name] = (files, cfg["config"].get("Entrypoint"))
    if name.endswith("pause:1"):
        assert cfg["config"]["Cmd"] == ["/bin/sleep", "1"], cfg
assert got == want, got
print("build-image-test: 3 images as their Dockerfiles say")
PY

refused() { # WHY DOCKERFILE-TEXT [BUILD-ARGS]: the builder must refuse it, naming WHY
  printf '%s\n' "$2" >"$tmp/Dockerfile.bad"
  if python3 "$here/build-image.py" "$tmp/bad.tar" "$tmp/base" "x=$tmp/Dockerfile.bad:$tmp/ctx:${3:-BASE=b}" 2>"$tmp/err"; then
    fail "accepted a Dockerfile with $1"
  fi
  grep -q "$1" "$tmp/err" || fail "refused $1 without naming it: $(cat "$tmp/err")"
}
refused "RUN is not supported" $'ARG BASE\nFROM ${BASE}\nRUN true'
refused "only the base image" $'FROM debian:12-slim\nCOPY a /a'
refused "no such file" $'ARG BASE\nFROM ${BASE}\nCOPY build-portable-amd64/bin/nothing /x'
refused "COPY flags are not supported" $'ARG BASE\nFROM ${BASE}\nCOPY --chown=1 packaging/kubernetes/install.sh /x'
echo "build-image-test: refuses what it does not know"
