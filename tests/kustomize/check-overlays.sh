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
elif [ -x "$dir/k8s-all" ]; then
  kubectl="$dir/k8s-all kubectl"
elif [ -f "$dir/k8s-all.xz" ]; then
  sum=$(sha256sum "$dir/k8s-all.xz" | cut -c1-12)
  bin=$cache/k8s-all-$sum
  if [ ! -x "$bin" ]; then
    xz -dc "$dir/k8s-all.xz" >"$bin.tmp.$$" && chmod 755 "$bin.tmp.$$" && mv "$bin.tmp.$$" "$bin" ||
      { rm -f "$bin.tmp.$$"; echo "kustomize.overlays: cannot unpack $dir/k8s-all.xz"; exit 1; }
  fi
  kubectl="$bin kubectl"
else
  echo "kustomize.overlays: OCI_RLIMIT_CLUSTER_DIR=$dir: no kubectl, k8s-all or k8s-all.xz"
  exit 1
fi
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
for o in handler handler-nvidia nri audit admission; do
  $kubectl kustomize "$src/packaging/kubernetes/$o" >"$out/$o.yaml" ||
    { echo "kustomize.overlays: kubectl kustomize packaging/kubernetes/$o failed"; exit 1; }
done
exec python3 "$(dirname "$0")/check-overlays.py" "$src/packaging/kubernetes" "$out"
