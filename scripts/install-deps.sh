#!/usr/bin/env bash
# Installs the Debian 12 packages that building and testing oci-rlimit need.
# Only missing packages are installed, so a warm machine pays nothing.
set -euo pipefail

build=(build-essential cmake ninja-build pkg-config git
       nlohmann-json3-dev libtomlplusplus-dev libcap-dev googletest libgtest-dev libgmock-dev)
runtimes=(runc crun podman docker.io containerd busybox-static util-linux libcap2-bin
          iproute2 hyperfine jq clang-format clang-tidy clang libclang-rt-14-dev python3-yaml shellcheck)
# The portable node builds (scripts/build-node.sh) and their tests: the arm64
# cross compiler, qemu to run arm64 programs directly, debootstrap for the
# Debian 11 root. (The arm64 -dev libraries are fetched, not installed.)
portable=(g++-aarch64-linux-gnu binutils qemu-user-static debootstrap)

case "${1:-all}" in
  build) want=("${build[@]}") ;;
  demo) want=("${build[@]}" runc busybox-static util-linux jq) ;;
  portable) want=("${build[@]}" "${portable[@]}") ;;
  all) want=("${build[@]}" "${runtimes[@]}" "${portable[@]}") ;;
  *) echo "usage: $0 [build|demo|portable|all]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: missing packages ${missing[*]}; run as root" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
