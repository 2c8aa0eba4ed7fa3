#!/usr/bin/env bash
# Fetches newer containerd releases and the CRI and NRI API protos from Debian's
# own archive, for the CRI and NRI tests, without installing anything:
#   trixie (Debian 13): containerd 1.7.x      -> $CACHE/containerd-1.7/
#                       golang-github-kubernetes-cri-api-dev -> $CACHE/cri-api/
#   forky (testing):    containerd 2.x        -> $CACHE/containerd-2/
#                       golang-github-containerd-nri-dev     -> $CACHE/nri-api/
# CACHE is $OCI_RLIMIT_CACHE, default /var/cache/oci-rlimit (outside any clone,
# so CI's clean clone reuses it). Each directory is a `dpkg -x` of the package
# plus a .fetched stamp naming suite, package and version; a directory with its
# stamp is reused as is. Packages are chosen by suite, never by exact version
# (point releases replace versions); the version found is printed.
#
# The mirror is the one this machine already uses (the first URIs: line of
# /etc/apt/sources.list.d/debian.sources, else the first deb line of
# /etc/apt/sources.list). A private sources list and lists directory under
# $CACHE/apt-SUITE keep the system's apt state untouched: nothing is ever
# dpkg -i'ed, and no suite is added to the system's sources.
#
#   scripts/fetch-containerd.sh          fetch what is missing, print versions
#   scripts/fetch-containerd.sh --print  print what the cache holds; exit 1 if incomplete
set -euo pipefail

cache="${OCI_RLIMIT_CACHE:-/var/cache/oci-rlimit}"

# dir suite package expected-version-prefix (a check that the directory name
# tells the truth about what the suite ships).
entries=(
  "containerd-1.7 trixie containerd 1.7."
  "containerd-2 forky containerd 2."
  "cri-api trixie golang-github-kubernetes-cri-api-dev "
  "nri-api forky golang-github-containerd-nri-dev "
)

die() {
  echo "fetch-containerd: $*" >&2
  exit 1
}

stamp_version() {  # dir -> version recorded in its stamp, or nothing
  local stamp="$cache/$1/.fetched"
  [[ -f $stamp ]] && sed -n 's/^version=//p' "$stamp"
  return 0
}

print_all() {
  local missing=0 e dir suite pkg v
  for e in "${entries[@]}"; do
    read -r dir suite pkg _ <<<"$e"
    v=$(stamp_version "$dir")
    if [[ -n $v ]]; then
      echo "fetch-containerd: $pkg $v ($suite) in $cache/$dir"
    else
      echo "fetch-containerd: $pkg ($suite) missing from $cache/$dir"
      missing=1
    fi
  done
  return "$missing"
}

if [[ ${1:-} == --print ]]; then
  print_all
  exit $?
fi
[[ $# -eq 0 ]] || die "usage: $0 [--print]"

mirror() {
  local f=/etc/apt/sources.list.d/debian.sources uri=""
  if [[ -f $f ]]; then
    uri=$(awk '/^URIs:/ {print $2; exit}' "$f")
  fi
  if [[ -z $uri && -f /etc/apt/sources.list ]]; then
    uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' \
      /etc/apt/sources.list)
  fi
  [[ -n $uri ]] || die "no Debian mirror found in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list"
  echo "$uri"
}

# apt-get (or apt-cache: suite_apt SUITE apt-cache ARGS) with a private sources
# list, lists, archive cache and an empty dpkg status for one suite. A mirror
# may serve a snapshot whose Release date has passed (testing's expires in a
# week): signatures are still checked, the expiry date is not.
suite_apt() {
  local suite=$1 tool=apt-get
  shift
  if [[ $1 == apt-cache ]]; then
    tool=apt-cache
    shift
  fi
  local d="$cache/apt-$suite"
  "$tool" -q \
    -o Dir::State::status="$d/status" \
    -o Dir::Etc::SourceList="$d/sources.list" \
    -o Dir::Etc::SourceParts=/dev/null \
    -o Dir::State::Lists="$d/lists" \
    -o Dir::Cache="$d/cache" \
    -o Dir::Cache::archives="$d/cache/archives" \
    -o Debug::NoLocking=1 \
    -o APT::Sandbox::User=root \
    -o Acquire::Check-Valid-Until=false \
    "$@"
}

declare -A updated=()
update_suite() {
  local suite=$1
  [[ -n ${updated[$suite]:-} ]] && return 0
  local d="$cache/apt-$suite" keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
  : >"$d/status"
  echo "deb [signed-by=$keyring] $(mirror) $suite main" >"$d/sources.list"
  echo "fetch-containerd: apt-get update for suite $suite"
  suite_apt "$suite" update >/dev/null || die "apt-get update for suite $suite failed (mirror $(mirror))"
  updated[$suite]=1
}

fetch_one() {
  local dir=$1 suite=$2 pkg=$3 want=$4
  local dest="$cache/$dir"
  if [[ -n $(stamp_version "$dir") ]]; then
    return 0
  fi
  update_suite "$suite"
  local version
  version=$(suite_apt "$suite" apt-cache show --no-all-versions "$pkg" | sed -n 's/^Version: //p' | head -n1)
  [[ -n $version ]] || die "suite $suite has no package $pkg"
  if [[ -n $want && $version != *"$want"* ]]; then
    # Debian versions may carry an epoch; the upstream version follows it.
    [[ ${version#*:} == "$want"* ]] || die "suite $suite ships $pkg $version, not $want*: $dest would be misnamed"
  fi
  local work
  work=$(mktemp -d "$cache/.fetch-$dir.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" EXIT
  (cd "$work" && suite_apt "$suite" -q download "$pkg=$version" >/dev/null) ||
    die "apt-get download $pkg=$version ($suite) failed"
  local deb
  deb=$(ls "$work"/*.deb)
  mkdir "$work/root"
  dpkg-deb -x "$deb" "$work/root"
  printf 'suite=%s\npackage=%s\nversion=%s\n' "$suite" "$pkg" "$version" >"$work/root/.fetched"
  rm -rf "$dest"
  mv "$work/root" "$dest"
  rm -rf "$work"
  trap - EXIT
}

mkdir -p "$cache"
# One fetch at a time: helpers and CI jobs may share the cache.
exec 9>"$cache/.fetch-containerd.lock"
flock -w 600 9 || die "another fetch holds $cache/.fetch-containerd.lock"

for e in "${entries[@]}"; do
  read -r dir suite pkg want <<<"$e"
  fetch_one "$dir" "$suite" "$pkg" "${want:-}"
done
print_all
