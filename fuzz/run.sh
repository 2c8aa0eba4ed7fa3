#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan+UBSan) and runs each for a
# bounded time from its committed corpus. Fails on any crash. Prints one
# line per target with the execs reached and the largest input it ran, for
# docs/reliability.md. Inputs go up to 1 MiB (-max_len; libFuzzer's default
# is 4096 bytes, far below what a deep or wide spec needs), and the corpus
# seeds deep (5,000 levels) and wide (thousands of entries) documents, and
# TOML nested past the guard (60,000-part dotted keys, 80,000-part headers).
#   fuzz/run.sh [SECONDS_PER_TARGET]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DOCI_RLIMIT_FUZZ=ON -DOCI_RLIMIT_BUILD_TESTS=OFF >/dev/null
cmake --build build-fuzz --target fuzz_rlimit fuzz_config fuzz_state fuzz_spec_merge fuzz_nri fuzz_toml \
  fuzz_containerd_meta fuzz_ulimit_yaml fuzz_metrics_http \
  >/dev/null
status=0
for target in rlimit config state spec_merge nri toml containerd_meta ulimit_yaml metrics_http; do
  work=$(mktemp -d)
  cp -r "fuzz/corpus/$target/." "$work/"
  log=$work/log
  # -timeout: any single input that takes a second is a hang worth failing on.
  if ! "build-fuzz/bin/fuzz_$target" -max_total_time="$seconds" -timeout=1 -rss_limit_mb=2048 \
       -max_len=1048576 -print_final_stats=1 "$work" >"$log" 2>&1; then
    echo "fuzz_$target: FAILED"; tail -40 "$log"; status=1
  fi
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
  largest=$(find "$work" -maxdepth 1 -type f ! -name log -printf '%s\n' | sort -n | tail -1)
  echo "fuzz_$target: ${execs:-0} execs in ${seconds} s, largest input ${largest:-0} bytes," \
       "corpus $(ls "fuzz/corpus/$target" | wc -l) seeds"
  rm -rf "$work"
done
exit $status
