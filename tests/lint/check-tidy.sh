#!/usr/bin/env bash
# clang-tidy over every non-test source of every layer and program folder,
# with the build's compile commands.
set -euo pipefail
build=${1:?usage: check-tidy.sh BUILD_DIR}
cd "$(dirname "$0")/../.."
mapfile -t files < <(git ls-files 'core/*.cc' 'adapters/*.cc' 'effects/*.cc' 'hook/*.cc' \
  'runtime/*.cc' 'prlimit-helper/*.cc' 'cli/*.cc' 'nri/*.cc' | grep -v '_test\.cc$')
# GCC-only flags in compile_commands.json (-Wno-restrict) are not clang's to judge.
clang-tidy -p "$build" --quiet --extra-arg=-Wno-unknown-warning-option "${files[@]}"
echo "clang-tidy: ${#files[@]} files clean"
