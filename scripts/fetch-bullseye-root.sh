#!/usr/bin/env bash
# Makes (once) a Debian 11 "bullseye" minbase root for this machine's
# architecture, from this machine's own Debian mirror, and prints its path.
#   scripts/fetch-bullseye-root.sh
# Cached outside any clone: the downloaded .debs as a debootstrap tarball
# (/var/cache/oci-rlimit/debootstrap/), and the unpacked root
# (/var/cache/oci-rlimit/roots/). The tests only ever mount the root read-only.
set -euo pipefail
cache=${OCI_RLIMIT_CACHE:-/var/cache/oci-rlimit}
arch=$(dpkg --print-architecture)
suite=bullseye
name=$suite-minbase-$arch
tarball=$cache/debootstrap/$name.tgz
root=$cache/roots/$name
if [[ -f $root/.oci-rlimit-complete ]]; then
  echo "$root"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "fetch-bullseye-root: debootstrap is not installed (scripts/install-deps.sh)" >&2; exit 1; }
mirror=$(dirname "$0")/debian-mirror.sh
mirror=$("$mirror")
mkdir -p "$cache/debootstrap" "$cache/roots"
# One maker at a time (CI and a developer's ctest may race).
exec 9>"$cache/roots/.$name.lock"
flock 9
if [[ -f $root/.oci-rlimit-complete ]]; then echo "$root"; exit 0; fi
work=$(mktemp -d "$cache/roots/.$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [[ ! -f $tarball ]]; then
  echo "fetch-bullseye-root: downloading $suite minbase from $mirror" >&2
  debootstrap --variant=minbase --arch="$arch" --make-tarball="$work/t.tgz" "$suite" "$work/dl" "$mirror" >"$work/dl.log" 2>&1 \
    || { tail -20 "$work/dl.log" >&2; echo "fetch-bullseye-root: debootstrap --make-tarball failed" >&2; exit 1; }
  mv "$work/t.tgz" "$tarball"
  rm -rf "$work/dl"
fi
echo "fetch-bullseye-root: unpacking $suite into $root" >&2
debootstrap --variant=minbase --arch="$arch" --unpack-tarball="$tarball" "$suite" "$work/root" "$mirror" >"$work/log" 2>&1 \
  || { tail -20 "$work/log" >&2; echo "fetch-bullseye-root: debootstrap failed (log above)" >&2; exit 1; }
touch "$work/root/.oci-rlimit-complete"
rm -rf "$root"
mv "$work/root" "$root"
echo "$root"
