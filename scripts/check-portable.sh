#!/usr/bin/env bash
# Fails unless every given program can run on any node of its architecture:
# fully static, or dynamic needing only libc (and its loader) and no glibc
# symbol version newer than 2.28 (RHEL 8). Also fails on symbols that break
# in a static glibc (NSS lookups, iconv, dlopen), and on the wrong machine.
#   scripts/check-portable.sh --arch amd64|arm64 [--objects BUILDDIR] PROGRAM...
#   scripts/check-portable.sh --arch amd64|arm64 --tree BUILDDIR
# --tree: the programs BUILDDIR/node-programs.txt lists (cmake/Portable.cmake),
# in BUILDDIR/bin, plus --objects BUILDDIR.
# --objects also scans every object file under BUILDDIR (the project's own
# code) for calls to dlopen, dlmopen and iconv_open: a static glibc and
# libstdc++ carry those for named locales and gconv, which no program here
# uses, so in the binaries they prove nothing; a call from our code would.
# One line per program: "check-portable: PROGRAM: ok (static, aarch64)" or
# the reason it is not portable. Exit 1 when any program fails.
set -euo pipefail
max_glibc=2.28
arch=""
objects=""
if [[ ${1:-} == --arch ]]; then arch=${2:?--arch: missing amd64|arm64}; shift 2; fi
if [[ ${1:-} == --objects ]]; then objects=${2:?--objects: missing BUILDDIR}; shift 2; fi
if [[ ${1:-} == --tree ]]; then
  objects=${2:?--tree: missing BUILDDIR}
  shift 2
  [[ -f $objects/node-programs.txt ]] || { echo "check-portable: --tree: no $objects/node-programs.txt" >&2; exit 2; }
  mapfile -t listed <"$objects/node-programs.txt"
  set -- "$@" "${listed[@]/#/$objects/bin/}"
fi
(($#)) || { echo "usage: $0 --arch amd64|arm64 [--objects BUILDDIR] PROGRAM... | --tree BUILDDIR" >&2; exit 2; }
case "$arch" in
  amd64) machine="Advanced Micro Devices X86-64" ;;
  arm64) machine="AArch64" ;;
  *) echo "check-portable: --arch: \"$arch\" is not amd64 or arm64" >&2; exit 2 ;;
esac
command -v readelf >/dev/null || { echo "check-portable: readelf (binutils) is not installed" >&2; exit 2; }

# NSS lookups: a static glibc serves them only by loading the node's libnss_*
# at run time, which need not match. None may be linked in at all.
nss='^(getpw(nam|uid|ent)(_r)?|getgr(nam|gid|ent|ouplist)(_r)?|initgroups|getspnam(_r)?|getaddrinfo|getnameinfo|gethostbyname2?(_r)?|gethostbyaddr(_r)?|getservbyname(_r)?|getprotobyname(_r)?|getlogin(_r)?)$'
# Loading code at run time: our own objects must not call these.
loaders='^(dlopen|dlmopen|iconv_open|'"${nss:2:-2}"')$'

newer() { # is glibc version $1 newer than $max_glibc?
  [[ $1 != "$max_glibc" && $(printf '%s\n%s\n' "$1" "$max_glibc" | sort -V | tail -1) == "$1" ]]
}

failed=0
for f in "$@"; do
  why=()
  if [[ ! -f $f ]]; then
    echo "check-portable: $f: no such file" >&2; failed=1; continue
  fi
  header=$(readelf -h "$f" 2>&1) || { echo "check-portable: $f: not an ELF file" >&2; failed=1; continue; }
  got=$(sed -n 's/^ *Machine: *//p' <<<"$header")
  [[ $got == "$machine" ]] || why+=("machine is \"$got\", not $arch")

  needed=$(readelf -dW "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  kind=static
  if readelf -lW "$f" | grep -q 'INTERP'; then kind="dynamic"; fi
  for lib in $needed; do
    case "$lib" in
      libc.so.6|ld-linux-x86-64.so.2|ld-linux-aarch64.so.1) ;;
      *) why+=("needs shared library $lib") ;;
    esac
  done

  # Symbol versions it needs (dynamic only): name@GLIBC_x.y.
  too_new=()
  while read -r sym ver; do
    if newer "$ver"; then too_new+=("$sym@GLIBC_$ver"); fi
  done < <(readelf --dyn-syms -W "$f" | sed -n 's/.* UND \([^@ ]*\)@GLIBC_\([0-9.]*\).*/\1 \2/p' | sort -u)
  ((${#too_new[@]} == 0)) || why+=("needs glibc newer than $max_glibc: ${too_new[*]}")

  # The symbol table (present unless stripped): what static glibc cannot do.
  syms=$(readelf -sW "$f" | awk '$4 == "FUNC" && $7 != "UND" {sub(/@.*/, "", $8); print $8}' | sort -u)
  if [[ -z $syms && $kind == static ]]; then
    why+=("has no symbol table (stripped), so it cannot be checked for NSS, iconv or dlopen")
  fi
  bad=$(grep -E "$nss" <<<"$syms" | tr '\n' ' ' || true)
  [[ -z $bad ]] || why+=("contains the NSS lookup(s) ${bad% }, which break under a static glibc")

  if ((${#why[@]})); then
    failed=1
    for w in "${why[@]}"; do echo "check-portable: $f: $w" >&2; done
  else
    echo "check-portable: $f: ok ($kind, $arch)"
  fi
done
if [[ -n $objects ]]; then
  n=0
  while IFS= read -r -d '' o; do
    n=$((n + 1))
    calls=$(readelf -sW "$o" | awk '$7 == "UND" {print $8}' | grep -E "$loaders" | sort -u | tr '\n' ' ' || true)
    if [[ -n $calls ]]; then
      echo "check-portable: $o calls ${calls% }, which break under a static glibc" >&2
      failed=1
    fi
  done < <(find "$objects" -name '*.o' -print0)
  ((n > 0)) || { echo "check-portable: --objects: no object files under $objects" >&2; failed=1; }
  ((failed)) || echo "check-portable: $n object files under $objects call no NSS, dlopen or iconv"
fi
exit "$failed"
