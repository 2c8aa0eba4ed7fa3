#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan+UBSan) and runs each for a
# bounded time from its committed corpus. Fails on any crash. Prints one
# line per target with the execs reached, for docs/reliability.md.
#   fuzz/run.sh [SECONDS_PER_TARGET]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DOCI_RLIMIT_FUZZ=ON -DOCI_RLIMIT_BUILD_TESTS=OFF >/dev/null
cmake --build build-fuzz --target fuzz_rlimit fuzz_config fuzz_state fuzz_spec_merge fuzz_nri >/dev/null
status=0
for target in rlimit config state spec_merge nri; do
  work=$(mktemp -d)
  cp -r "fuzz/corpus/$target/." "$work/"
  log=$work/log
  # -timeout: any single input that takes a second is a hang worth failing on.
  if ! "build-fuzz/bin/fuzz_$target" -max_total_time="$seconds" -timeout=1 -rss_limit_mb=1024 \
       -print_final_stats=1 "$work" >"$log" 2>&1; then
    echo "fuzz_$target: FAILED"; tail -40 "$log"; status=1
  fi
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
  echo "fuzz_$target: ${execs:-0} execs in ${seconds} s, corpus $(ls "fuzz/corpus/$target" | wc -l) seeds"
  rm -rf "$work"
done
exit $status
