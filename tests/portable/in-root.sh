#!/usr/bin/env bash
# Runs CMD inside another distribution's root, the way a node would run our
# programs: a private mount namespace, the root bind-mounted read-only and
# entered with pivot_root (so nothing of this host's / stays reachable, unlike
# chroot), with fresh /proc, /dev from the host, a tmpfs /tmp, and BINDIR
# bind-mounted read-only at /opt/oci-rlimit/bin.
#   tests/portable/in-root.sh ROOT BINDIR CMD [ARG...]
# CMD runs with the root's own loader and libc; its exit status is ours.
set -euo pipefail
(($# >= 3)) || { echo "usage: $0 ROOT BINDIR CMD [ARG...]" >&2; exit 2; }
[[ -d $1/usr && -d $1/proc && -d $1/mnt ]] || { echo "in-root: \"$1\" is not a root file system" >&2; exit 2; }
[[ -d $2 ]] || { echo "in-root: BINDIR \"$2\" is not a directory" >&2; exit 2; }
root=$(readlink -f "$1") bindir=$(readlink -f "$2")
shift 2
# shellcheck disable=SC2016 # expanded by the inner bash
exec unshare --mount --propagation private -- bash -c '
  set -euo pipefail
  root=$1 bindir=$2; shift 2
  # The mount point lives on a tmpfs that only this namespace sees.
  mount -t tmpfs -o mode=0755 oci-rlimit-stage /mnt
  new=/mnt/root
  mkdir "$new"
  mount --bind "$root" "$new"
  mount -o remount,bind,ro "$new"
  mount -t proc proc "$new/proc"
  mount --rbind /dev "$new/dev"
  mount -t tmpfs -o mode=1777 tmp "$new/tmp"
  mount -t tmpfs -o mode=0755 opt "$new/opt"
  mkdir -p "$new/opt/oci-rlimit/bin"
  mount --bind "$bindir" "$new/opt/oci-rlimit/bin"
  mount -o remount,bind,ro "$new/opt/oci-rlimit/bin"
  cd "$new"
  pivot_root . mnt
  cd /
  # From here every program comes from the other root (its umount included).
  umount -l /mnt
  export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  exec "$@"
' in-root "$root" "$bindir" "$@"
