#!/usr/bin/env bash
# Installs the Debian 12 packages that building and testing oci-rlimit need.
# Only missing packages are installed, so a warm machine pays nothing.
set -euo pipefail

# The demo (scripts/demo.sh): what configuring without tests and without the
# NRI plugin needs (CMake finds the JSON and TOML headers, libcap and libyaml), what
# builds the hook and the probe, and what runs them (runc, the busybox rootfs,
# jq for the spec, util-linux's prlimit).
demo=(build-essential cmake ninja-build pkg-config
      nlohmann-json3-dev libtomlplusplus-dev libcap-dev libyaml-dev runc busybox-static util-linux jq)
# The build with its unit tests, and the .deb: `file` is what cpack's
# CPACK_DEBIAN_PACKAGE_SHLIBDEPS (dpkg-shlibdeps) runs on every binary;
# ccache lets scripts/test.sh's trees share what they compile alike.
build=(build-essential cmake ninja-build pkg-config git ca-certificates file ccache
       nlohmann-json3-dev libtomlplusplus-dev libcap-dev libyaml-dev googletest libgtest-dev libgmock-dev)
# The tests: the real runtimes and daemons (on a machine running systemd, the
# docker.io, containerd and podman packages may start system services), the
# demo's rootfs, lint, ASan/fuzz (clang), man-page checks (man-db, groff-base),
# debootstrap for the fresh-root CI step (tests/fresh-root/run.sh), strace (the
# processes `oci-rlimit audit` spawns, bench.auditbench_smoke), and prometheus
# (its promtool checks the metrics and the alert rules; its server scrapes the
# NRI plugin in tests/cri/metrics_test.cc; on a machine running systemd the
# package starts a prometheus service on :9090). CRI-O (tests/crio: crio and
# pinns come from OCI_RLIMIT_CLUSTER_DIR) needs conmon, skopeo (to put the
# test image into its storage), and the libraries crio links; etcd-server,
# openssl and xz-utils serve the one-node Kubernetes cluster of tests/cluster
# (its kube binaries come from OCI_RLIMIT_CLUSTER_DIR; docs/daemons-testing.md).
runtimes=(runc crun podman docker.io containerd busybox-static util-linux libcap2-bin
          conmon skopeo libsqlite3-0 libseccomp2
          iproute2 hyperfine jq strace clang-format clang-tidy clang libclang-rt-14-dev python3-yaml shellcheck
          protobuf-compiler libprotobuf-dev libgrpc++-dev protobuf-compiler-grpc
          uidmap slirp4netns man-db groff-base debootstrap prometheus
          etcd-server openssl xz-utils)
# The portable node builds (scripts/build-node.sh) and their tests: the arm64
# cross compiler and qemu to run arm64 programs directly (debootstrap, above,
# makes the Debian 11 root). The arm64 -dev libraries are fetched, not installed.
portable=(g++-aarch64-linux-gnu binutils qemu-user-static)

case "${1:-all}" in
  build) want=("${build[@]}") ;;
  demo) want=("${demo[@]}") ;;
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
  # Another apt (unattended-upgrades on a fresh VM) may hold the dpkg lock:
  # wait up to 10 minutes for it instead of failing at once.
  lock=(-o DPkg::Lock::Timeout=600)
  apt-get "${lock[@]}" update -qq
  apt-get "${lock[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# containerd 1.7 and 2.x and the CRI and NRI protos, from newer Debian suites,
# unpacked (never installed) into /var/cache/oci-rlimit (scripts/fetch-containerd.sh).
if [[ ${1:-all} == all ]]; then
  "$(dirname "$0")/fetch-containerd.sh"
fi

# Rootless podman tests (tests/rootless/rootless_test.cc): a user with
# /etc/subuid and /etc/subgid ranges, which useradd -m writes. Idempotent.
rootless_user=oci-rlimit-test
if [[ ${1:-all} == all ]] && ! id -u "$rootless_user" >/dev/null 2>&1; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: user $rootless_user missing; run as root" >&2
    exit 1
  fi
  echo "install-deps: adding user $rootless_user (rootless podman tests)"
  useradd -m -s /bin/sh "$rootless_user"
fi
