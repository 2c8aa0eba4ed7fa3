#!/usr/bin/env bash
# Fetches the Debian 12 arm64 -dev libraries the arm64 cross build links
# (cmake/toolchain-aarch64.cmake), unpacked, never installed, and prints the
# directory they are unpacked in (the toolchain's OCI_RLIMIT_ARM64_ROOT).
#   scripts/fetch-arm64-deps.sh
# Uses a private apt config (own sources list, lists, cache and status) that
# points at this machine's own mirror with APT::Architecture=arm64, then
# `apt-get download` and `dpkg -x`. The system's apt state is not touched.
# Cached in /var/cache/oci-rlimit/arm64/ (outside any clone).
set -euo pipefail
cache=${OCI_RLIMIT_CACHE:-/var/cache/oci-rlimit}/arm64
suite=bookworm
# libcap.a and sys/capability.h; gtest/gmock static libs for the unit tests;
# the header-only JSON and TOML libraries (with their CMake configs); protobuf
# (static) for the NRI plugin; libyaml.a (the ulimit-adjuster annotation).
packages=(libcap-dev libcap2 libyaml-dev libgtest-dev libgmock-dev nlohmann-json3-dev
          libtomlplusplus-dev libtomlplusplus3 libprotobuf-dev libprotobuf32 libprotobuf-lite32
          zlib1g-dev zlib1g)
root=$cache/root
stamp=$root/.oci-rlimit-packages
if [[ -f $stamp && $(cat "$stamp") == "${packages[*]}" ]]; then
  echo "$root"
  exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [[ -f $stamp && $(cat "$stamp") == "${packages[*]}" ]]; then echo "$root"; exit 0; fi

mirror=$("$(dirname "$0")/debian-mirror.sh")
mkdir -p "$cache/lists/partial" "$cache/archives/partial" "$cache/debs"
echo "deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" >"$cache/sources.list"
: >"$cache/status"
apt=(apt-get -q
     -o APT::Architecture=arm64 -o APT::Architectures=arm64
     -o Dir::Etc::SourceList="$cache/sources.list" -o Dir::Etc::SourceParts=/dev/null
     -o Dir::State::Lists="$cache/lists" -o Dir::State::status="$cache/status"
     -o Dir::Cache="$cache" -o Dir::Cache::archives="$cache/archives"
     -o Debug::NoLocking=1 -o APT::Sandbox::User=root -o Acquire::Check-Valid-Until=false)
echo "fetch-arm64-deps: arm64 package lists from $mirror ($suite)" >&2
"${apt[@]}" update >"$cache/update.log" 2>&1 || { cat "$cache/update.log" >&2; exit 1; }
(cd "$cache/debs" && "${apt[@]}" download "${packages[@]/%/:arm64}" >"$cache/download.log" 2>&1) \
  || { cat "$cache/download.log" >&2; echo "fetch-arm64-deps: apt-get download failed" >&2; exit 1; }
tmp=$(mktemp -d "$cache/.root.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for p in "${packages[@]}"; do
  debs=("$cache/debs/${p}_"*_{arm64,all}.deb)
  deb=""
  for d in "${debs[@]}"; do [[ -f $d ]] && deb=$d; done
  [[ -n $deb ]] || { echo "fetch-arm64-deps: $p was not downloaded" >&2; exit 1; }
  dpkg -x "$deb" "$tmp"
  echo "fetch-arm64-deps: $(basename "$deb")" >&2
done
echo "${packages[*]}" >"$tmp/.oci-rlimit-packages"
rm -rf "$root"
mv "$tmp" "$root"
echo "$root"
