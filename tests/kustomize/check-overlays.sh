#!/bin/bash
# ctest kustomize.overlays: `kubectl kustomize` of every overlay in packaging/kubernetes, with the
# cluster's own kubectl (kustomize built in), checked by check-overlays.py.
#   check-overlays.sh SOURCE_DIR CACHE_DIR
# kubectl: OCI_RLIMIT_CLUSTER_DIR's kubectl, k8s-all or k8s-all.xz (unpacked into CACHE_DIR).
# Unset, and none in SOURCE_DIR/../shared/cluster: skip (exit 77) with one line; set and none
# there: fail.
set -u
src=$1 cache=$2
dir=${OCI_RLIMIT_CLUSTER_DIR:-}
if [ -z "$dir" ]; then
  dir=$src/../shared/cluster
  if [ ! -e "$dir/k8s-all.xz" ] && [ ! -x "$dir/k8s-all" ] && [ ! -x "$dir/kubectl" ]; then
    echo "kustomize.overlays skipped: OCI_RLIMIT_CLUSTER_DIR is unset and $dir has no kubectl"
    exit 77
  fi
fi
if [ -x "$dir/kubectl" ]; then
  kubectl=$dir/kubectl
elif [ -x "$dir/k8s-all" ] || [ -f "$dir/k8s-all.xz" ]; then
  # k8s-all dispatches on the name it is called by: a kubectl symlink to it.
  x=$dir/k8s-all; [ -x "$x" ] || x=$dir/k8s-all.xz
  d=$cache/kubectl-$(sha256sum "$x" | cut -c1-12)
  if [ ! -x "$d/kubectl" ]; then
    rm -rf "$d.tmp.$$" && mkdir -p "$d.tmp.$$" || exit 1
    case "$x" in *.xz) xz -dc "$x" >"$d.tmp.$$/k8s-all" ;; *) cp "$x" "$d.tmp.$$/k8s-all" ;; esac &&
      chmod 755 "$d.tmp.$$/k8s-all" && ln -s k8s-all "$d.tmp.$$/kubectl" &&
      { mv -T "$d.tmp.$$" "$d" 2>/dev/null || rm -rf "$d.tmp.$$"; } ||
      { rm -rf "$d.tmp.$$"; echo "kustomize.overlays: cannot unpack $x"; exit 1; }
  fi
  kubectl=$d/kubectl
else
  echo "kustomize.overlays: OCI_RLIMIT_CLUSTER_DIR=$dir: no kubectl, k8s-all or k8s-all.xz"
  exit 1
fi
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
for o in handler handler-nvidia nri audit audit-crio admission; do
  $kubectl kustomize "$src/packaging/kubernetes/$o" >"$out/$o.yaml" ||
    { echo "kustomize.overlays: kubectl kustomize packaging/kubernetes/$o failed"; exit 1; }
done
exec python3 "$(dirname "$0")/check-overlays.py" "$src/packaging/kubernetes" "$out"
