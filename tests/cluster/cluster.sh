#!/bin/bash
# A real one-node Kubernetes v1.31 cluster for tests/cluster, in namespaces of its own
# (adapted from ../shared/cluster/start-cluster.sh; docs/daemons-testing.md, "Kubernetes").
#
#   cluster.sh start STATE    start it; STATE gets "DIR=..." (or "SKIP=1", exit 77, after one line)
#   cluster.sh stop STATE     end it (also after a killed start): SIGKILL to the namespace's init,
#                             remove its cgroups and DIR
#   cluster.sh host-snapshot  what the cluster must not change on this machine (start keeps it in
#                             DIR/host-before)
#   cluster.sh ns-init DIR    (internal) PID 1 of the cluster's namespaces
#
# The cluster runs in its own mount, PID, network and UTS namespaces (unshare): the node's default
# paths are the cluster's own. /etc, /usr, /var and /opt are overlays (writes land in DIR), /run and
# /tmp are tmpfs (DIR bound back in), /var/lib/containerd and /var/lib/kubelet are DIR's,
# /usr/bin/containerd is containerd 2.x, and the node's runc (/usr/local/sbin/runc, first on PATH)
# drops CAP_SYS_RESOURCE, which this machine cannot give, from what it creates. So the installer DaemonSet, which mounts the node's "/", edits this cluster's
# /etc/containerd/config.toml and /usr/local/bin, never the machine's; kubelet's hard-coded paths
# (/var/lib/kubelet/device-plugins, /var/log/containers) are private; the sysctls kubelet sets are
# files of DIR bind-mounted over /proc/sys; its ports (etcd 2379, API 6443, kubelet 10250, the
# plugin's 9464) are in its own network namespace, on lo and the node address 10.244.0.1, so a
# second cluster or CRI-O next to it never collides. The node is named oci-rlimit-node-1 (its
# hostname too), which is not its address.
# containerd runs under a supervisor loop that starts it again whenever it exits (as systemd
# does): the installer's restart (SIGHUP, without systemd) is real. DIR/containerd-starts counts.
# Everything in the namespaces dies with their init (a SIGKILL to it), so "stop" cannot leave a
# daemon behind even after ctest killed "start" at its timeout.
#
# Environment:
#   OCI_RLIMIT_CLUSTER_DIR  kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kubectl,
#                           or k8s-all(.xz) (one binary for all, as in ../shared/cluster). Unset: the
#                           default DEFAULT_CLUSTER_DIR is tried; nothing there: skip (exit 77). Set:
#                           anything missing fails.
#   CONTAINERD_BIN          containerd 2.x's containerd, containerd-shim-runc-v2, ctr
#   SOURCE_DIR              the repository (the Dockerfiles' context, with build-portable-amd64/bin)
#   BIN_CACHE               where k8s-all.xz is unpacked (once per checksum)
#   K8S_TIMEOUT             seconds to wait for each component [120]
set -u
HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
NODE=oci-rlimit-node-1
NODE_IP=10.244.0.1
PAUSE=registry.k8s.io/pause:3.10
: "${K8S_TIMEOUT:=120}"

log() { echo "[cluster $(date +%T.%3N)] $*" >&2; }
fail() { log "FAILED: $*"; return 1; }

# --- the binaries --------------------------------------------------------------------------------
# find_kube: sets KBIN to a directory with the five commands, or says why not (exit 77 = skip)
find_kube() {
  local dir=${OCI_RLIMIT_CLUSTER_DIR:-} c x sum d
  if [ -z "$dir" ]; then
    dir=${DEFAULT_CLUSTER_DIR:-}
    if [ -z "$dir" ] || { [ ! -e "$dir/k8s-all.xz" ] && [ ! -x "$dir/kube-apiserver" ] && [ ! -x "$dir/k8s-all" ]; }; then
      echo "cluster tests skipped: OCI_RLIMIT_CLUSTER_DIR is unset and ${dir:-no default} has no Kubernetes binaries"
      return 77
    fi
  fi
  if [ -x "$dir/kube-apiserver" ]; then
    KBIN=$dir
  elif [ -x "$dir/k8s-all" ] || [ -f "$dir/k8s-all.xz" ]; then
    x=$dir/k8s-all; [ -x "$x" ] || x=$dir/k8s-all.xz
    sum=$(sha256sum "$x" | cut -c1-12) || return 1
    d=${BIN_CACHE:?}/k8s-bin-$sum
    if [ ! -x "$d/k8s-all" ]; then
      mkdir -p "$d.tmp.$$" || return 1
      case "$x" in *.xz) xz -dc "$x" >"$d.tmp.$$/k8s-all" ;; *) cp "$x" "$d.tmp.$$/k8s-all" ;; esac || return 1
      chmod 755 "$d.tmp.$$/k8s-all"
      for c in kube-apiserver kubelet kubectl kube-controller-manager kube-scheduler; do ln -sf k8s-all "$d.tmp.$$/$c"; done
      mv -T "$d.tmp.$$" "$d" 2>/dev/null || rm -rf "$d.tmp.$$"
    fi
    KBIN=$d
  else
    KBIN=$dir
  fi
  for c in kube-apiserver kubelet kubectl kube-controller-manager kube-scheduler; do
    [ -x "$KBIN/$c" ] || { echo "cluster: OCI_RLIMIT_CLUSTER_DIR=$dir: no $c (nor k8s-all or k8s-all.xz)"; return 1; }
  done
  for c in containerd containerd-shim-runc-v2 ctr; do
    [ -x "${CONTAINERD_BIN:-}/$c" ] || { echo "cluster: no containerd 2.x $c in \"${CONTAINERD_BIN:-}\" (scripts/fetch-containerd.sh)"; return 1; }
  done
  for c in /usr/sbin/runc /usr/bin/etcd /bin/busybox /bin/bash /usr/bin/openssl /usr/bin/unshare /usr/bin/nsenter /usr/sbin/ip python3; do
    command -v "$c" >/dev/null || { echo "cluster: no $c (scripts/install-deps.sh: runc etcd-server busybox-static openssl util-linux iproute2)"; return 1; }
  done
  for c in oci-rlimit oci-rlimit-hook oci-rlimit-runtime oci-prlimit-helper oci-rlimit-nri; do
    [ -x "$SOURCE_DIR/build-portable-amd64/bin/$c" ] ||
      { echo "cluster: no $SOURCE_DIR/build-portable-amd64/bin/$c (scripts/build-node.sh amd64 build-portable-amd64)"; return 1; }
  done
}

# --- what start prepares on the host side (files only, all in DIR) --------------------------------
pki() { # CA, apiserver serving cert, client certs, service-account keys, kubeconfigs
  local d=$DIR/pki
  mkdir -p "$d" || return 1
  (
    cd "$d" || exit 1
    set -e
    exec 2>>"$DIR/log/openssl.log"
    openssl ecparam -name prime256v1 -genkey -noout -out ca.key
    openssl req -x509 -new -key ca.key -sha256 -days 3 -subj "/CN=oci-rlimit-test-ca" -out ca.crt \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
    cert() { # NAME SUBJECT EXTENSIONS
      openssl ecparam -name prime256v1 -genkey -noout -out "$1.key"
      openssl req -new -key "$1.key" -subj "$2" -out "$1.csr"
      printf '%s\n' "$3" >"$1.ext"
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3 -sha256 -extfile "$1.ext" -out "$1.crt"
      rm -f "$1.csr"
    }
    cli="basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
    cert apiserver "/CN=kube-apiserver" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:$NODE_IP,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
    cert admin "/O=system:masters/CN=oci-rlimit-test-admin" "$cli"
    cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$cli"
    cert kubelet "/O=system:nodes/CN=system:node:$NODE" "$cli"
    openssl ecparam -name prime256v1 -genkey -noout -out sa.key
    openssl ec -in sa.key -pubout -out sa.pub
    for u in admin kubelet; do
      cat >"$u.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: $(base64 -w0 ca.crt)
users:
- name: $u
  user:
    client-certificate-data: $(base64 -w0 "$u.crt")
    client-key-data: $(base64 -w0 "$u.key")
contexts:
- name: test
  context: {cluster: test, user: $u}
current-context: test
EOF
    done
  ) || fail "openssl (see $DIR/log/openssl.log)"
}

# The base image: busybox, bash and bash's libraries (what install.sh and the manifests' shell
# commands need); the images: the Dockerfiles' own, built offline on it (build-image.py).
images() {
  local r=$DIR/image/base lib a
  mkdir -p "$r"/{bin,usr/bin,proc,sys,dev,tmp,etc,run,root,var,host} || return 1
  cp /bin/busybox "$r/bin/busybox" && cp /bin/bash "$r/bin/bash" || return 1
  for a in $(/bin/busybox --list); do [ "$a" = busybox ] || [ -e "$r/bin/$a" ] || ln -s busybox "$r/bin/$a"; done
  ln -s ../../bin/busybox "$r/usr/bin/env"
  for lib in $(ldd /bin/bash | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^\t\(\/[^ ]*\) .*/\1/p' | sort -u); do
    mkdir -p "$r$(dirname "$lib")" && cp -L "$lib" "$r$lib" || return 1
  done
  printf 'root:x:0:0:root:/root:/bin/sh\n' >"$r/etc/passwd"; printf 'root:x:0:\n' >"$r/etc/group"
  chmod 1777 "$r/tmp"
  local k=$SOURCE_DIR/packaging/kubernetes
  python3 "$HERE/build-image.py" "$DIR/image/images.tar" "$r" \
    "$PAUSE=base:/bin/sleep,2147483647" \
    "docker.io/library/busybox:1.36=base" \
    "docker.io/library/oci-rlimit-installer:0.1.0=$k/Dockerfile:$SOURCE_DIR:BASE=oci-rlimit-test-base:local" \
    "docker.io/library/oci-rlimit-nri:0.1.0=$k/Dockerfile.nri:$SOURCE_DIR:BASE=oci-rlimit-test-base:local" \
    2>>"$DIR/log/images.log" || { cat "$DIR/log/images.log" >&2; fail "image build"; return 1; }
  rm -rf "$r"
}

configs() {
  mkdir -p "$DIR/etc/containerd" "$DIR/kubelet-root" "$DIR/containerd-root" "$DIR/sysctl" "$DIR/cni" || return 1
  # A node's stock containerd 2.x config: the default paths (root /var/lib/containerd, state
  # /run/containerd, runc's root /run/containerd/runc), runc from PATH, NRI on at
  # /var/run/nri/nri.sock. Only what this machine needs differs: oom_score_adj (no
  # CAP_SYS_RESOURCE) and a placeholder CNI network.
  cat >"$DIR/etc/containerd/config.toml" <<EOF
version = 3
[plugins]
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = '$PAUSE'
  [plugins.'io.containerd.cri.v1.runtime']
    restrict_oom_score_adj = true
    enable_cdi = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ['/opt/cni/bin']
      conf_dir = '/etc/cni/net.d'
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          SystemdCgroup = false
  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = '127.0.0.1'
    stream_server_port = '0'
EOF
  printf '{"cniVersion":"1.0.0","name":"oci-rlimit-test-none","plugins":[{"type":"oci-rlimit-test-no-such-plugin"}]}\n' \
    >"$DIR/cni/10-none.conflist"
  cat >"$DIR/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 0.0.0.0
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: $CGROOT
cgroupsPerQOS: true
failSwapOn: false
makeIPTablesUtilChains: false
oomScoreAdj: $(cat /proc/self/oom_score_adj)
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%"}
serializeImagePulls: false
registerNode: true
syncFrequency: 5s
fileCheckFrequency: 5s
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $DIR/pki/ca.crt}
authorization:
  mode: Webhook
EOF
}

cgroups_make() { # kubelet's cgroup root in every v1 hierarchy (cpuset copied from the parent), or v2
  local c
  if [ ! -f /sys/fs/cgroup/cgroup.controllers ]; then
    for c in /sys/fs/cgroup/*/; do
      if [ ! -f "$c/cgroup.procs" ] || [ "$c" = /sys/fs/cgroup/unified/ ]; then continue; fi
      mkdir -p "$c$CGROOT" || return 1
      if [ -f "$c/cpuset.cpus" ]; then
        cat "$c/cpuset.cpus" >"$c$CGROOT/cpuset.cpus"; cat "$c/cpuset.mems" >"$c$CGROOT/cpuset.mems"
      fi
    done
  else
    mkdir -p "/sys/fs/cgroup$CGROOT"
  fi
}

cgroups_remove() { # kill what is left in them, then remove them, deepest first
  local p c
  case "$1" in /oci-rlimit-cluster-?*) ;; *) return 0 ;; esac
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    p=$(find /sys/fs/cgroup/ -path "*$1/*" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u)
    [ -n "$p" ] || break
    # shellcheck disable=SC2086 # one PID a word
    kill -KILL $p 2>/dev/null; sleep 0.2
  done
  for _ in 1 2 3 4 5; do
    for c in "/sys/fs/cgroup$1" /sys/fs/cgroup/*"$1"; do
      [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null
    done
    ls -d "/sys/fs/cgroup$1" /sys/fs/cgroup/*"$1" >/dev/null 2>&1 || return 0
    sleep 0.3
  done
  log "cgroups $1 not removed"; return 1
}

# --- inside the namespaces ------------------------------------------------------------------------
ns_mounts() {
  local d s
  mount -t proc proc /proc || return 1
  for d in etc usr var opt; do
    mkdir -p "$DIR/ov/$d/u" "$DIR/ov/$d/w" || return 1
    mount -t overlay overlay -o "lowerdir=/$d,upperdir=$DIR/ov/$d/u,workdir=$DIR/ov/$d/w" "/$d" || return 1
  done
  mount -t tmpfs -o mode=755 tmpfs /run || return 1
  [ -L /var/run ] || mount --bind /run /var/run
  # a private /tmp (install.sh probes there and removes root's stale probes), with DIR kept in it
  mkdir /run/.cluster-dir && mount --bind "$DIR" /run/.cluster-dir && mount -t tmpfs -o mode=1777 tmpfs /tmp &&
    mkdir -p "$DIR" && mount --bind /run/.cluster-dir "$DIR" && umount /run/.cluster-dir && rmdir /run/.cluster-dir || return 1
  # what a node installed with containerd 2.x has; Debian's own containerd (1.6) is hidden
  mkdir -p /etc/containerd /etc/cni/net.d /opt/cni/bin /var/lib/containerd /var/lib/kubelet /var/log || return 1
  rm -rf /etc/containerd/* /etc/cni/net.d/* /etc/oci-rlimit /var/lib/oci-rlimit /usr/local/bin/oci-rlimit* \
    /usr/local/bin/oci-prlimit-helper /var/lib/node_exporter
  cp "$DIR/etc/containerd/config.toml" /etc/containerd/config.toml && cp "$DIR/cni/10-none.conflist" /etc/cni/net.d/ || return 1
  for d in containerd containerd-shim-runc-v2 ctr; do
    [ -e "/usr/bin/$d" ] || : >"/usr/bin/$d"
    mount --bind "$CONTAINERD_BIN/$d" "/usr/bin/$d" || return 1
  done
  # No CAP_SYS_RESOURCE on this machine, so runc cannot give it to a container (the NRI and audit
  # DaemonSets add it): the node's runc (first on PATH) drops it from a bundle it creates. The
  # plugin then cannot heal (it reports), which nothing here needs.
  mkdir -p /usr/local/sbin && cat >/usr/local/sbin/runc <<'EOF' && chmod 755 /usr/local/sbin/runc || return 1
#!/bin/sh
# tests/cluster: drops CAP_SYS_RESOURCE, which this machine lacks, from a bundle runc creates
case " $* " in
  *" create "*|*" run "*)
    python3 - "$@" <<'PY' || exit 1
import json, sys
a = sys.argv[1:]
b = a[a.index("--bundle") + 1] if "--bundle" in a else (a[a.index("-b") + 1] if "-b" in a else ".")
p = b + "/config.json"
c = json.load(open(p))
caps = c.get("process", {}).get("capabilities", {})
if any("CAP_SYS_RESOURCE" in v for v in caps.values()):
    for k in caps:
        caps[k] = [x for x in caps[k] if x != "CAP_SYS_RESOURCE"]
    json.dump(c, open(p, "w"))
PY
    ;;
esac
exec /usr/sbin/runc "$@"
EOF
  mount --bind "$DIR/containerd-root" /var/lib/containerd && mount --bind "$DIR/kubelet-root" /var/lib/kubelet || return 1
  # the sysctls kubelet sets are files of DIR here: the machine's stay as they are
  for s in vm/overcommit_memory kernel/panic kernel/panic_on_oops; do
    cat "/proc/sys/$s" >"$DIR/sysctl/${s//\//.}" && mount --bind "$DIR/sysctl/${s//\//.}" "/proc/sys/$s" || return 1
  done
  # HostToContainer mounts (the audit DaemonSet's /run) need shared or slave sources; these
  # peer groups are the namespace's own
  mount --make-rshared / || return 1
  ip link set lo up && ip addr add "$NODE_IP/32" dev lo && hostname "$NODE"
}

daemon() { # NAME CMD...: in the background, output to DIR/log/NAME.log, PID (inside) in DIR/pids
  local n=$1; shift
  "$@" </dev/null >"$DIR/log/$n.log" 2>&1 &
  echo "$n $!" >>"$DIR/pids"
}
alive() { local p; p=$(awk -v n="$1" '$1==n {p=$2} END {print p}' "$DIR/pids"); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
wait_for() { # NAME WHAT CMD...
  local n=$1 what=$2 t0=$SECONDS; shift 2
  until "$@" >/dev/null 2>&1; do
    if [ -n "$n" ] && ! alive "$n"; then tail -n 20 "$DIR/log/$n.log" >&2; fail "$n exited while waiting for $what"; return 1; fi
    [ $((SECONDS - t0)) -ge "$K8S_TIMEOUT" ] && { [ -n "$n" ] && tail -n 20 "$DIR/log/$n.log" >&2; fail "timeout waiting for $what"; return 1; }
    sleep 0.2
  done
  log "$what after $((SECONDS - t0)) s"
}
kc() { "$KBIN/kubectl" --kubeconfig "$DIR/pki/admin.kubeconfig" "$@"; }
node_ready() { kc get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' | grep -qx True; }

# containerd as systemd runs it: started again whenever it exits (SIGHUP included), on
# /etc/containerd/config.toml as it is then. Memlock 1 MiB soft / 8 MiB hard, so a pod without
# oci-rlimit reads 1048576 and one with it what the policy gives (up to 8 MiB: this machine
# cannot raise a hard limit).
supervise_containerd() {
  while [ ! -e "$DIR/stopping" ]; do
    date +%s.%N >>"$DIR/containerd-starts"
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      prlimit --memlock=1048576:8388608 /usr/bin/containerd >>"$DIR/log/containerd.log" 2>&1
    echo "containerd exited ($?)" >>"$DIR/log/containerd.log"
    sleep 0.2
  done
}

ns_start() {
  local p=$DIR/pki
  ns_mounts || return 1
  daemon etcd /usr/bin/etcd --name node --data-dir "$DIR/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster node=http://127.0.0.1:2380 --initial-cluster-state new
  daemon containerd-supervisor supervise_containerd
  daemon kube-apiserver "$KBIN/kube-apiserver" \
    --bind-address=0.0.0.0 --advertise-address="$NODE_IP" --secure-port=6443 \
    --etcd-servers=http://127.0.0.1:2379 \
    --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" --client-ca-file="$p/ca.crt" \
    --kubelet-client-certificate="$p/apiserver-kubelet-client.crt" --kubelet-client-key="$p/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types=InternalIP \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 --endpoint-reconciler-type=none \
    --authorization-mode=Node,RBAC --allow-privileged=true --profiling=false \
    --cert-dir="$DIR/kube-apiserver"
  wait_for "" "containerd up" ctr -a /run/containerd/containerd.sock version || return 1
  ctr -a /run/containerd/containerd.sock -n k8s.io images import "$DIR/image/images.tar" \
    >"$DIR/log/import.log" 2>&1 || { cat "$DIR/log/import.log" >&2; fail "image import"; return 1; }
  wait_for kube-apiserver "kube-apiserver ready" kc get --raw /readyz || return 1
  daemon kubelet "$KBIN/kubelet" --config="$DIR/kubelet.yaml" \
    --kubeconfig="$p/kubelet.kubeconfig" --cert-dir="$DIR/kubelet-pki" \
    --hostname-override="$NODE" --node-ip="$NODE_IP" --pod-infra-container-image="$PAUSE" --v=1
  daemon kube-controller-manager "$KBIN/kube-controller-manager" --kubeconfig="$p/admin.kubeconfig" \
    --leader-elect=false --secure-port=0 --use-service-account-credentials=false \
    --service-account-private-key-file="$p/sa.key" --root-ca-file="$p/ca.crt" \
    --cluster-signing-cert-file="$p/ca.crt" --cluster-signing-key-file="$p/ca.key" \
    --controllers='*,-nodeipam,-service-lb-controller,-cloud-node-lifecycle-controller,-node-route-controller'
  daemon kube-scheduler "$KBIN/kube-scheduler" --kubeconfig="$p/admin.kubeconfig" --leader-elect=false --secure-port=0
  wait_for kubelet "node $NODE Ready" node_ready || return 1
  wait_for kube-controller-manager "serviceaccount default/default" kc -n default get serviceaccount default || return 1
}

ns_init() {
  DIR=$1
  # shellcheck source=/dev/null
  . "$DIR/vars" || exit 1
  if ns_start; then touch "$DIR/ready"; else touch "$DIR/failed"; exit 1; fi
  # PID 1 of the namespace: stays, and reaps what is re-parented to it, until stop kills it
  while :; do sleep 3600 & wait $!; done
}

# What the cluster must never change on this machine: the node paths the installer, the plugin and
# the audit write, and the sysctls kubelet sets (start records it; the tests compare).
host_snapshot() {
  local s
  # Not the decision records: the other suites' engines on this host (CRI-O's, the lifecycle
  # test's) write and remove theirs there meanwhile; the cluster's own are in its namespace.
  { find /etc/containerd /etc/oci-rlimit /var/lib/oci-rlimit /var/lib/node_exporter /run/oci-rlimit /run/nri \
      /etc/cni/net.d -maxdepth 3 -not -path '/run/oci-rlimit/decisions*' -printf '%p %y %s %m %T@\n'
    find /usr/local/bin -maxdepth 1 -name 'oci-*' -printf '%p %y %s %m %T@\n'; } 2>/dev/null | sort
  find /etc/containerd /etc/oci-rlimit -maxdepth 3 -type f -exec sha256sum {} + 2>/dev/null | sort
  for s in vm/overcommit_memory kernel/panic kernel/panic_on_oops; do echo "$s $(cat "/proc/sys/$s")"; done
}

# --- host side --------------------------------------------------------------------------------------
start() {
  local state=$1 t0=$SECONDS rc upid
  rm -f "$state"
  find_kube; rc=$?
  if [ $rc = 77 ]; then echo "SKIP=1" >"$state"; return 77; fi
  [ $rc = 0 ] || return 1
  DIR=$(mktemp -d /tmp/oci-rlimit-cluster.XXXXXX) || return 1
  CGROOT=/oci-rlimit-cluster-$(basename "$DIR" | tr -c 'a-zA-Z0-9\n' -)
  echo "DIR=$DIR" >"$state"
  mkdir -p "$DIR/log" && : >"$DIR/pids" || return 1
  { echo "KBIN='$KBIN'"; echo "CONTAINERD_BIN='$CONTAINERD_BIN'"; echo "CGROOT='$CGROOT'"
    echo "PATH='$PATH'"; echo "K8S_TIMEOUT='$K8S_TIMEOUT'"; } >"$DIR/vars"
  log "dir $DIR"
  host_snapshot >"$DIR/host-before"
  pki && images && configs && cgroups_make || return 1
  setsid unshare --mount --pid --net --uts --fork --propagation private --kill-child \
    "$HERE/cluster.sh" ns-init "$DIR" </dev/null >"$DIR/log/ns-init.log" 2>&1 &
  upid=$!
  echo "$upid" >"$DIR/unshare.pid"
  until [ -e "$DIR/ready" ] || [ -e "$DIR/failed" ]; do
    kill -0 "$upid" 2>/dev/null || break
    [ $((SECONDS - t0)) -ge $((K8S_TIMEOUT * 2)) ] && break
    sleep 0.2
  done
  [ -e "$DIR/ready" ] || { cat "$DIR/log/ns-init.log" >&2; fail "the cluster did not start (logs: $DIR/log)"; return 1; }
  init=$(awk '{print $1}' "/proc/$upid/task/$upid/children")
  echo "$init" >"$DIR/init.pid"
  # DIR/in CMD...: CMD inside the cluster's namespaces; DIR/kubectl: kubectl as the admin
  printf '#!/bin/sh\nexec nsenter -t %s -m -p -n -u -- "$@"\n' "$init" >"$DIR/in"
  printf '#!/bin/sh\nexec "%s/in" "%s/kubectl" --kubeconfig "%s/pki/admin.kubeconfig" "$@"\n' "$DIR" "$KBIN" "$DIR" >"$DIR/kubectl"
  chmod 755 "$DIR/in" "$DIR/kubectl"
  cat >"$DIR/env" <<EOF
DIR=$DIR
NODE=$NODE
NODE_IP=$NODE_IP
INIT_PID=$init
KUBECTL=$DIR/kubectl
IN=$DIR/in
EOF
  log "cluster up in $((SECONDS - t0)) s: node $NODE ($NODE_IP) Ready"
}

stop() {
  local state=$1 dir upid init cg
  [ -f "$state" ] || { log "stop: no $state"; return 0; }
  dir=$(sed -n 's/^DIR=//p' "$state")
  rm -f "$state"
  case "$dir" in /tmp/oci-rlimit-cluster.?*) ;; *) return 0 ;; esac
  [ -d "$dir" ] || return 0
  touch "$dir/stopping"
  upid=$(cat "$dir/unshare.pid" 2>/dev/null)
  # a start killed before it wrote unshare.pid: find unshare by its argv (ns-init DIR)
  if [ -z "$upid" ]; then
    for f in /proc/[0-9]*/cmdline; do
      tr '\0' ' ' <"$f" 2>/dev/null | grep -q "^unshare .* ns-init $dir $" && { upid=${f#/proc/}; upid=${upid%/cmdline}; break; }
    done
  fi
  cg=$(sed -n "s/^CGROOT='\(.*\)'$/\1/p" "$dir/vars" 2>/dev/null)
  # the namespace's init, only if it is still ours (its argv names DIR)
  if [ -n "$upid" ] && grep -qF -- "$dir" "/proc/$upid/cmdline" 2>/dev/null; then
    init=$(awk '{print $1}' "/proc/$upid/task/$upid/children" 2>/dev/null)
    [ -n "$init" ] && kill -KILL "$init" 2>/dev/null
    kill -KILL "$upid" 2>/dev/null
    for _ in $(seq 1 50); do
      [ -e "/proc/$upid" ] || { [ -n "$init" ] && [ -e "/proc/$init" ]; } || break
      sleep 0.1
    done
  fi
  cgroups_remove "$cg"
  # the namespace's mounts went with it; none of DIR is mounted here
  if grep -qF " $dir/" /proc/self/mountinfo; then log "mounts left under $dir; not removed"; return 1; fi
  [ "${KEEP:-0}" = 1 ] || rm -rf "$dir"
  log "stopped $dir"
}

case "${1:-}" in
  start)
    start "${2:?STATE}"; rc=$?
    if [ $rc != 0 ] && [ $rc != 77 ]; then
      for f in "${DIR:-/nonexistent}"/log/*.log; do [ -s "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }; done >&2
      stop "$2"
    fi
    exit $rc ;;
  stop) stop "${2:?STATE}" ;;
  ns-init) ns_init "${2:?DIR}" ;;
  host-snapshot) host_snapshot ;;
  *) echo "usage: $0 start STATE | stop STATE" >&2; exit 2 ;;
esac
