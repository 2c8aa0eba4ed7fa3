#!/bin/bash
# apiserver.sh: a real etcd + kube-apiserver for the admission tests (no kubelet, no containerd; of
# kube-controller-manager only the policies' type checker), all state in one directory; the ctest
# fixture (tests/admission/CMakeLists.txt) starts one for the suite.
#
#   apiserver.sh start DIR   start etcd, kube-apiserver (and the type checker), wait for /readyz, write DIR/env
#                            (KUBECONFIG, K8S_KUBECTL); prints one line and exits 77 (skip) when the
#                            binaries are absent and OCI_RLIMIT_CLUSTER_DIR is unset, 1 when it is set
#                            and they are missing
#   apiserver.sh stop DIR    stop what "start DIR" started (by PID, checked against DIR), remove DIR
#
# The binaries: OCI_RLIMIT_CLUSTER_DIR (default: ../shared/cluster beside the source tree) holds
# k8s-all.xz and start-cluster.sh (../shared/cluster/README.md); etcd is Debian's etcd-server.
set -u
here=$(dirname "$(readlink -f "$0")")
cmd=${1:-} dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then echo "usage: $0 start|stop DIR" >&2; exit 2; fi

stop() {
  local n p _
  [ -f "$dir/pids" ] || { rm -rf "$dir"; return 0; }
  for n in kube-controller-manager kube-apiserver etcd; do
    p=$(awk -v n="$n" '$1==n {print $2}' "$dir/pids")
    [ -n "$p" ] || continue
    grep -qF -- "$dir" "/proc/$p/cmdline" 2>/dev/null || continue   # not ours (any more)
    kill -TERM "$p" 2>/dev/null
    for _ in $(seq 1 50); do   # until it is gone or a zombie
      if [ ! -d "/proc/$p" ] || grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; then break; fi
      sleep 0.1
    done
    kill -KILL "$p" 2>/dev/null
  done
  rm -rf "$dir"
}
if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

cluster=${OCI_RLIMIT_CLUSTER_DIR:-$here/../../../shared/cluster}
if [ ! -f "$cluster/k8s-all.xz" ] || [ ! -f "$cluster/start-cluster.sh" ] || [ ! -x /usr/bin/etcd ]; then
  what="no $cluster/k8s-all.xz, $cluster/start-cluster.sh or /usr/bin/etcd (apt-get install etcd-server)"
  if [ -n "${OCI_RLIMIT_CLUSTER_DIR:-}" ]; then echo "FAILED: OCI_RLIMIT_CLUSTER_DIR is set: $what" >&2; exit 1; fi
  echo "SKIPPED: $what; set OCI_RLIMIT_CLUSTER_DIR to the folder of k8s-all.xz"
  exit 77
fi
rm -rf "$dir" && mkdir -p "$dir/log" && : >"$dir/pids" || exit 1
# shellcheck source=/dev/null
. "$cluster/start-cluster.sh" || { echo "FAILED: sourcing $cluster/start-cluster.sh" >&2; exit 1; }
# the variables start-cluster.sh's functions read
K8S_DIR=$dir K8S_TIMEOUT=${K8S_TIMEOUT:-90}
export K8S_DIR K8S_NODE_NAME=127.0.0.1 K8S_PORTS_TAKEN=""
for c in K8S_ETCD_PORT K8S_ETCD_PEER_PORT K8S_API_PORT; do k8s_port $c; done
fail() { echo "FAILED: $*" >&2; tail -n 20 "$dir"/log/*.log >&2; stop; exit 1; }
k8s_pki || fail "certificates"
k8s_daemon etcd /usr/bin/etcd --name k8s-test --data-dir "$dir/etcd" \
  --listen-client-urls "http://127.0.0.1:$K8S_ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$K8S_ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$K8S_ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$K8S_ETCD_PEER_PORT" \
  --initial-cluster "k8s-test=http://127.0.0.1:$K8S_ETCD_PEER_PORT" --initial-cluster-state new
k8s_wait etcd "etcd healthy" k8s_http_ok "$K8S_ETCD_PORT" /health || fail "etcd"
p=$dir/pki
k8s_daemon kube-apiserver "$K8S_BIN/kube-apiserver" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$K8S_API_PORT" \
  --etcd-servers="http://127.0.0.1:$K8S_ETCD_PORT" \
  --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" --client-ca-file="$p/ca.crt" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
  --service-cluster-ip-range=10.0.0.0/24 --endpoint-reconciler-type=none \
  --authorization-mode=RBAC --profiling=false --cert-dir="$dir/kube-apiserver"
k8s_wait kube-apiserver "kube-apiserver ready" kc get --raw /readyz || fail "kube-apiserver"
# Only the controller that type-checks a ValidatingAdmissionPolicy against the kinds it matches
# (status.typeChecking): the suite checks that its policies draw no warning.
k8s_daemon kube-controller-manager "$K8S_BIN/kube-controller-manager" \
  --kubeconfig="$dir/pki/admin.kubeconfig" --leader-elect=false --secure-port=0 \
  --controllers=validatingadmissionpolicy-status-controller
# The ServiceAccount admission plugin refuses pods until serviceaccount default/default exists
# (the controller manager makes it; none runs here).
k8s_wait kube-apiserver "namespace default" kc get namespace default || fail "namespace default"
kc -n default create serviceaccount default >/dev/null 2>&1
cat >"$dir/env" <<EOT
export KUBECONFIG='$dir/pki/admin.kubeconfig'
export K8S_KUBECTL='$K8S_BIN/kubectl'
EOT
echo "apiserver up in $SECONDS s: $dir"
