#!/usr/bin/env bash
# portable.bullseye_amd64: the portable amd64 programs run on an
# older distribution. A Debian 11 (glibc 2.31) minbase root from this
# machine's own mirror (scripts/fetch-bullseye-root.sh, cached), entered with
# a private mount namespace and pivot_root (tests/portable/in-root.sh):
#  - each program's --help and --version work there;
#  - the Debian 12 (dynamic) build does not (the control: this root really is old);
#  - install.sh with that root as the node installs the portable build and
#    refuses the dynamic one in one line, changing no file;
#  - the installer image's layout, made by following the Dockerfile's COPY
#    lines for TARGETARCH amd64 and arm64 into one tree: install.sh with no
#    --source picks bin/amd64 and installs it.
#   tests/portable/bullseye-test.sh PORTABLE_BINDIR DYNAMIC_BINDIR [PORTABLE_ARM64_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
# shellcheck source=tests/portable/common.sh
. "$here/common.sh"
portable=$(readlink -f "$1") dynamic=$(readlink -f "$2") arm64=${3:+$(readlink -f "$3")}
root=$("$src/scripts/fetch-bullseye-root.sh")
inroot() { "$here/in-root.sh" "$root" "$@"; }

libc=$(inroot "$portable" /lib/x86_64-linux-gnu/libc.so.6 | head -n1)
if [[ $libc == *"release version 2.31"* ]]; then pass "the root's glibc: $libc"; else fail "the root's libc is not 2.31: $libc"; fi
[[ $(inroot "$portable" cat /etc/debian_version) == 11.* ]] || fail "the root is not Debian 11"

for p in $(node_programs "$portable"); do
  for arg in --help --version; do
    if out=$(inroot "$portable" sh -c "$fake_runtime_setup && exec /opt/oci-rlimit/bin/$p $arg" 2>&1); then
      if [[ $p == oci-rlimit-runtime ]]; then want="fake-runc $arg"; elif [[ $arg == --version ]]; then want="$p "; else want="$p"; fi
      if [[ $out == *"$want"* ]]; then pass "bullseye: $p $arg"; else fail "bullseye: $p $arg printed \"${out:0:200}\", not \"$want\""; fi
    else
      fail "bullseye: $p $arg failed: ${out:0:300}"
    fi
  done
done

# The control: the Debian 12 build needs a newer glibc than this root has.
if out=$(inroot "$dynamic" /opt/oci-rlimit/bin/oci-rlimit-hook --version 2>&1); then
  fail "control: the dynamic Debian 12 hook ran on glibc 2.31; this test proves nothing"
else
  if [[ $out == *"GLIBC_2.3"*"not found"* ]]; then pass "control: dynamic hook refused by glibc 2.31"
  else fail "control: dynamic hook failed for another reason: ${out:0:300}"; fi
fi

# install.sh with the bullseye root as the node (an overlay, so the cache is untouched).
installer() { # BINDIR [INSTALL_SH] -> status; output (and the files it wrote) in $out
  local rc=0
  # shellcheck disable=SC2016 # expanded by the inner bash
  out=$(unshare --mount --propagation private -- bash -c '
    set -e
    mount -t tmpfs oci-rlimit-node /mnt
    mkdir /mnt/up /mnt/work /mnt/node
    mount -t overlay overlay -o "lowerdir=$1,upperdir=/mnt/up,workdir=/mnt/work" /mnt/node
    rc=0
    if [ -n "$3" ]; then set -- "$2" --source "$3"; else set -- "$2"; fi
    bash "$@" --host-root /mnt/node --runtime containerd 2>&1 || rc=$?
    echo "written: $(cd /mnt/up && find . -type f | sort | tr "\n" " ")"
    if [ "$rc" = 0 ]; then chroot /mnt/node /usr/local/bin/oci-rlimit-hook --version; fi
    exit "$rc"
  ' node "$root" "${2:-$src/packaging/kubernetes/install.sh}" "$1") || rc=$?
  return "$rc"
}
if installer "$portable"; then
  if [[ $out == *"written: "*"./usr/local/bin/oci-rlimit-hook"* && $out == *"oci-rlimit-hook 0."* ]]; then
    pass "install.sh installed the portable build on bullseye, and the installed hook runs"
  else
    fail "install.sh on bullseye: ${out:0:600}"
  fi
else
  fail "install.sh refused the portable build on bullseye: ${out:0:600}"
fi
if installer "$dynamic"; then
  fail "install.sh installed the Debian 12 build on bullseye: ${out:0:600}"
else
  first=$(head -n1 <<<"$out")
  if [[ $first == "install.sh: $dynamic/oci-rlimit-hook cannot run on this amd64 node, nothing installed: "*"GLIBC_2.3"* ]] \
    && [[ $(grep -c . <<<"$out") == 2 ]] && grep -qx 'written: ' <<<"$out"; then
    pass "install.sh refused the Debian 12 build on bullseye in one line, writing nothing: $first"
  else
    fail "install.sh's refusal: ${out:0:600}"
  fi
fi

# The image, as the Dockerfile lays it out for both architectures.
image=$(mktemp -d)
trap 'rm -rf "$image"' EXIT
declare -A tree=([amd64]=$(dirname "$portable") [arm64]=$arm64)
for arch in amd64 arm64; do
  [[ -n ${tree[$arch]} ]] || continue
  while read -r -a words; do
    dest=$image${words[-1]//\$\{TARGETARCH\}/$arch}
    if [[ $dest == */ ]]; then mkdir -p "$dest"; else mkdir -p "$(dirname "$dest")"; fi
    for ((i = 1; i < ${#words[@]} - 1; i++)); do
      pattern=${words[i]//\$\{TARGETARCH\}/$arch}
      if [[ $pattern == build-portable-$arch/* ]]; then
        pattern=${tree[$arch]}/${pattern#build-portable-"$arch"/}
      else
        pattern=$src/$pattern
      fi
      # shellcheck disable=SC2206 # the Dockerfile's glob, expanded here
      matches=($pattern)
      [[ -e ${matches[0]} ]] || fail "Dockerfile: COPY source ${words[i]} ($arch) matches nothing"
      cp "${matches[@]}" "$dest"
    done
  done < <(grep '^COPY ' "$src/packaging/kubernetes/Dockerfile")
done
entry=$(sed -n 's/^ENTRYPOINT \["\(.*\)"\]/\1/p' "$src/packaging/kubernetes/Dockerfile")
for p in oci-rlimit-hook oci-rlimit-runtime oci-prlimit-helper oci-rlimit; do
  [[ -x $image/opt/oci-rlimit/bin/amd64/$p ]] || fail "image: no bin/amd64/$p"
  [[ -z $arm64 || -x $image/opt/oci-rlimit/bin/arm64/$p ]] || fail "image: no bin/arm64/$p"
done
if installer "" "$image$entry"; then
  if [[ $out == *"written: "*"./usr/local/bin/oci-rlimit-hook"* && $out == *"oci-rlimit-hook 0."* ]]; then
    pass "the image's install.sh (no --source) picked bin/amd64 and installed it on bullseye"
  else
    fail "the image's install.sh on bullseye: ${out:0:600}"
  fi
else
  fail "the image's install.sh refused on bullseye: ${out:0:600}"
fi
finish
