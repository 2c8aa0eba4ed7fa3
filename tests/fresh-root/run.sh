#!/usr/bin/env bash
# The fresh-machine check: a Debian 12 minbase root (plus git and
# ca-certificates) from this machine's own mirror, entered with a private
# mount and PID namespace and pivot_root (not chroot: in a chroot `runc exec`
# lands in the host's root, DEVELOPERS.md), where the repo is cloned and
# README's two commands run, so scripts/install-deps.sh must install
# everything itself:
#  1. README's first command (the demo) exactly as written; its output must
#     show the mlock failing without oci-rlimit and working with it
#     (tests/readme/run-demo.sh, the same check as tests/readme/readme_test.sh);
#  2. README's test command, with the bounded scope below.
#
# Scope of 2, to fit CI's budget: README's test command with
#   OCI_RLIMIT_TEST_PHASES=ctest            (no ASan or fuzz phase)
#   OCI_RLIMIT_BUILD_TARGETS="unit_tests packaging_integration_test"
#   ctest args -L '^(unit|packaging|man)$'  (unit tests, the .deb test, man pages)
# The runtimes' integration tests, lint, ASan and fuzzing run on the host
# (.ci/run step 1), not here.
#
# Cached under /var/cache/oci-rlimit/fresh-root (outside any clone): the
# debootstrap tarball, and the .debs apt downloads inside the root.
# Nothing is left behind: the root is a temp dir, every mount is in the
# private namespace, and the namespace's PID 1 takes every process with it.
#   tests/fresh-root/run.sh [SOURCE_DIR]
set -euo pipefail
src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
start=$SECONDS
say() { printf 'fresh-root: %s (%ds)\n' "$*" "$((SECONDS - start))"; }
[[ $(id -u) -eq 0 ]] || { echo "fresh-root: must run as root" >&2; exit 1; }
for p in debootstrap unshare pivot_root git; do
  command -v "$p" >/dev/null || { echo "fresh-root: $p is missing (scripts/install-deps.sh all)" >&2; exit 1; }
done

cache=/var/cache/oci-rlimit/fresh-root
mkdir -p "$cache/archives/partial"
# The mirror this machine already uses (the first URIs line of its deb822 sources).
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
[[ -n $mirror ]] || { echo "fresh-root: no URIs line in /etc/apt/sources.list.d/debian.sources" >&2; exit 1; }
suite=bookworm
include=git,ca-certificates
tarball=$cache/$suite-minbase-${include//,/-}.tgz

work=$(mktemp -d /var/tmp/oci-rlimit-fresh-root.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [[ ! -s $tarball ]]; then
  say "downloading $suite minbase + $include from $mirror into $tarball"
  debootstrap --variant=minbase --include="$include" --make-tarball="$work/new.tgz" \
    "$suite" "$work/make" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  mv "$work/new.tgz" "$tarball"
fi
root=$work/root
say "debootstrap --unpack-tarball $tarball"
debootstrap --variant=minbase --include="$include" --unpack-tarball="$tarball" \
  "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log" >&2; exit 1; }
# A root that is not booted: packages must not start their daemons inside it
# (the Debian convention for chroots and image builds).
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
# The repo, as a bare clone of HEAD, to be cloned inside the root.
git clone -q --bare "$src" "$work/origin.git"
mkdir -p "$root/mnt/origin.git" "$root/mnt/old" "$root/var/cache/apt/archives"

# Inside the namespaces: mounts, pivot_root, then a plain login-like env.
# shellcheck disable=SC2016 # expanded by the inner shell
inner='set -euo pipefail
root=$1 work=$2 cache=$3
mount --make-rprivate /
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
mount -t tmpfs -o mode=755 tmpfs "$root/run"
mount --bind "$cache/archives" "$root/var/cache/apt/archives"
mount --bind -o ro "$work/origin.git" "$root/mnt/origin.git"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
cd "$root"
pivot_root . mnt/old
umount -l /mnt/old
cd /
exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  TERM=dumb OCI_RLIMIT_FUZZ_SECONDS=1 /bin/bash -c "$4"'
# Run inside the new root: clone, README's first command exactly as written
# (tests/readme/run-demo.sh: it must show mlock failing without oci-rlimit and
# working with it), then README's test command with the scope above.
# shellcheck disable=SC2016 # expanded inside the root
script='set -euo pipefail
git clone -q /mnt/origin.git /root/oci-rlimit
cd /root/oci-rlimit
t0=$SECONDS
tests/readme/run-demo.sh /root/oci-rlimit
echo "fresh-root: phase demo: $((SECONDS - t0)) s"
t0=$SECONDS
trap '"'"'echo "fresh-root: phase test-command: $((SECONDS - t0)) s"'"'"' EXIT
line=$(.ci/readme-command 2)
cmd=${line%%#*}
echo "fresh-root: + OCI_RLIMIT_TEST_PHASES=ctest $cmd -L ^(unit|packaging|man)$"
export OCI_RLIMIT_TEST_PHASES=ctest
export OCI_RLIMIT_BUILD_TARGETS="unit_tests packaging_integration_test"
bash -c "$cmd \"\$@\"" readme-test-command -L "^(unit|packaging|man)$"'
say "entering $root (private mount and PID namespace, pivot_root)"
rc=0
unshare --mount --pid --fork --kill-child bash -c "$inner" fresh-root "$root" "$work" "$cache" \
  "$script" || rc=$?
say "README's test command in the fresh root exited $rc"
exit "$rc"
