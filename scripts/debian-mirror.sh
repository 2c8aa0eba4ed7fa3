#!/usr/bin/env bash
# Prints the Debian archive URI this machine's apt already uses (the first
# `URIs:` line of debian.sources, or the first `deb` line of sources.list), so
# that every download of another suite or architecture goes to the same mirror.
set -euo pipefail
src=/etc/apt/sources.list.d/debian.sources
if [[ -r $src ]]; then
  uri=$(awk '/^URIs:/ {print $2; exit}' "$src")
else
  uri=$(awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; exit}}' /etc/apt/sources.list 2>/dev/null || true)
fi
[[ -n ${uri:-} ]] || { echo "debian-mirror: no Debian archive URI in $src or /etc/apt/sources.list" >&2; exit 1; }
echo "${uri%/}"
