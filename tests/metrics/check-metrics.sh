#!/usr/bin/env bash
# `promtool check metrics` on both of oci-rlimit's Prometheus outputs: the
# NRI plugin's /metrics (over TCP on a free loopback port, and over a Unix
# socket) and `oci-rlimit audit --format prometheus --output FILE`. Each
# must also hold its metric names (an empty page would pass promtool).
#   tests/metrics/check-metrics.sh BIN_DIR
set -euo pipefail
bin=${1:?usage: check-metrics.sh BIN_DIR}
command -v promtool >/dev/null ||
  { echo "check-metrics: promtool is missing (scripts/install-deps.sh all: prometheus)" >&2; exit 1; }
tmp=$(mktemp -d)
pid=
cleanup() { [[ -z $pid ]] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
printf 'rlimits = ["nofile=1024:4096"]\n' >"$tmp/config.toml"

# GET /metrics from a TCP port or a Unix socket, body only; fails on non-200.
scrape() {
  python3 - "$1" <<'PY'
import socket, sys, time
where = sys.argv[1]
for _ in range(100):
    try:
        if where.startswith("unix:"):
            s = socket.socket(socket.AF_UNIX); s.connect(where[5:])
        else:
            s = socket.create_connection(("127.0.0.1", int(where)))
        break
    except OSError:
        time.sleep(0.05)
else:
    sys.exit("check-metrics: cannot connect to " + where)
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
data = b""
while chunk := s.recv(65536):
    data += chunk
head, _, body = data.partition(b"\r\n\r\n")
if not head.startswith(b"HTTP/1.1 200 "):
    sys.exit("check-metrics: " + head.decode(errors="replace"))
sys.stdout.write(body.decode())
PY
}

check() {  # NAME FILE METRIC...
  local name=$1 file=$2
  shift 2
  promtool check metrics <"$file" || { echo "check-metrics: $name: promtool refused it" >&2; cat "$file" >&2; exit 1; }
  for m in "$@"; do
    grep -q "^# TYPE $m " "$file" || { echo "check-metrics: $name: no $m" >&2; exit 1; }
  done
  echo "check-metrics: $name: ok ($(grep -c '^# TYPE' "$file") families)"
}

nri_metrics=(oci_rlimit_nri_containers_total oci_rlimit_nri_requests_total oci_rlimit_nri_heals_total
             oci_rlimit_nri_connected oci_rlimit_nri_last_synchronize_timestamp_seconds oci_rlimit_build_info
             process_start_time_seconds oci_rlimit_nri_config_last_reload_successful
             oci_rlimit_nri_config_last_reload_success_timestamp_seconds oci_rlimit_nri_replies_given_up_total
             oci_rlimit_nri_refused_running_containers oci_rlimit_nri_unhealed_containers
             oci_rlimit_nri_last_successful_heal_timestamp_seconds)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for where in "$port" "unix:$tmp/m.sock"; do
  addr=$where
  [[ $where == unix:* ]] || addr=:$where  # every address (issue 38)
  NODE_NAME=node-check "$bin/oci-rlimit-nri" --config "$tmp/config.toml" --socket "$tmp/no-runtime.sock" \
    --status-file "$tmp/nri.status" --metrics-address "$addr" 2>"$tmp/nri.err" &
  pid=$!
  scrape "$where" >"$tmp/nri.prom"
  kill "$pid"
  wait "$pid" || true
  pid=
  check "oci-rlimit-nri on $addr" "$tmp/nri.prom" "${nri_metrics[@]}"
  # every sample names the node (NODE_NAME)
  if grep -v '^#' "$tmp/nri.prom" | grep -qv 'node="node-check"}'; then
    echo "check-metrics: oci-rlimit-nri on $addr: a sample without node=\"node-check\"" >&2; exit 1
  fi
  # SIGTERM removes the unix socket (issue 38)
  if [[ $where == unix:* && -e ${where#unix:} ]]; then
    echo "check-metrics: oci-rlimit-nri left ${where#unix:} after SIGTERM" >&2; exit 1
  fi
done

mkdir "$tmp/textfile" "$tmp/root"
status=0
# Under umask 077, over a 0600 file from before: the textfile comes out 0644 (issue 38).
(umask 077 && echo old >"$tmp/textfile/oci-rlimit.prom")
(umask 077 && exec "$bin/oci-rlimit" audit --config "$tmp/config.toml" --no-default-roots \
  --runtime-root "$tmp/root" --format prometheus --output "$tmp/textfile/oci-rlimit.prom") || status=$?
mode=$(stat -c %a "$tmp/textfile/oci-rlimit.prom")
[[ $mode == 644 ]] || { echo "check-metrics: the textfile is mode $mode under umask 077, want 644" >&2; exit 1; }
((status <= 1)) || { echo "check-metrics: audit exited $status" >&2; exit 1; }
[[ $(ls -A "$tmp/textfile") == oci-rlimit.prom ]] ||
  { echo "check-metrics: audit left more than its file: $(ls -A "$tmp/textfile")" >&2; exit 1; }
check "oci-rlimit audit --format prometheus" "$tmp/textfile/oci-rlimit.prom" \
  oci_rlimit_audit_containers oci_rlimit_audit_root_containers oci_rlimit_audit_attention_containers \
  oci_rlimit_build_info
