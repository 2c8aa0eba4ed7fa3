#!/usr/bin/env bash
# oci-prlimit-helper reads no config, so it must not link the TOML parser
# (it once carried 485 toml++ symbols through LoadConfig). The CLI,
# which does parse TOML, is the control: nm must see toml++ there, so this
# check can tell "no symbols" from "nm saw nothing".
#   check-helper-symbols.sh BIN_DIR
set -euo pipefail
bin=${1:?usage: check-helper-symbols.sh BIN_DIR}
count() { nm -C "$1" | grep -ci toml || true; }
control=$(count "$bin/oci-rlimit")
helper=$(count "$bin/oci-prlimit-helper")
if [[ $control -eq 0 ]]; then
  echo "check-helper-symbols: nm finds no toml symbols in $bin/oci-rlimit either; is it stripped?" >&2
  exit 1
fi
if [[ $helper -ne 0 ]]; then
  echo "check-helper-symbols: $bin/oci-prlimit-helper has $helper toml symbols; it must link no config parser" >&2
  nm -C "$bin/oci-prlimit-helper" | grep -i toml | head -5 >&2
  exit 1
fi
echo "check-helper-symbols: oci-prlimit-helper 0 toml symbols (oci-rlimit: $control)"
