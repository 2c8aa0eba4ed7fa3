#!/bin/bash
# output_test.sh OCI_RLIMIT SOURCE_DIR: `oci-rlimit admission-policy`'s write errors, with the real
# command: stdout to /dev/full and closed, `> FILE` and --output FILE on a full tmpfs (a private
# mount namespace, `unshare -rm`), `--output -`, and no config anywhere. Each must exit 1 with
# one line, and leave no partial policy. Skips (77) where unshare -rm cannot mount a tmpfs.
set -u
bin=$(readlink -f "$1") src=$(readlink -f "$2")
cfg=$src/configs/spec16.toml
fails=0
check() {   # check NAME WANT_RC WANT_STDERR_PREFIX RC STDERR
  local name=$1 want_rc=$2 want=$3 rc=$4 err=$5
  if [ "$rc" != "$want_rc" ] || [[ $err != "$want"* ]] || [ "$(printf '%s' "$err" | wc -l)" -gt 0 ]; then
    echo "FAIL $name: rc $rc (want $want_rc), stderr: $err"
    fails=$((fails + 1))
  else
    echo "ok   $name"
  fi
}
size=$("$bin" admission-policy --config "$cfg" --ulimits-field | wc -c)
[ "$size" -gt 40000 ] || { echo "FAIL: the policy is only $size bytes"; exit 1; }

err=$("$bin" admission-policy --config "$cfg" --ulimits-field 2>&1 >/dev/full); rc=$?
check "stdout is /dev/full" 1 "oci-rlimit admission-policy: stdout: write (" "$rc" "$err"
err=$("$bin" admission-policy --config "$cfg" --ulimits-field 2>&1 >&-); rc=$?
check "stdout is closed" 1 "oci-rlimit admission-policy: stdout: write (" "$rc" "$err"

work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
( cd "$work" && "$bin" admission-policy --config "$cfg" --output - >stdout ); rc=$?
if [ "$rc" = 0 ] && [ ! -e "$work/-" ] && grep -q '^kind: ValidatingAdmissionPolicy$' "$work/stdout"; then
  echo "ok   --output - is stdout"
else echo "FAIL --output -: rc $rc, $(ls "$work")"; fails=$((fails + 1)); fi

# A tmpfs with room for less than the policy: nothing half-written stays.
if ! unshare -rm true 2>/dev/null; then echo "SKIPPED: unshare -rm (a tmpfs of our own)"; exit 77; fi
mkdir -p "$work/fs"
# shellcheck disable=SC2016  # expanded by the inner bash
out=$(cd "$work" && unshare -rm bash -c '
  bin=$1 cfg=$2 fs=$3
  mount -t tmpfs -o size=16k tmpfs "$fs" || exit 99
  "$bin" admission-policy --config "$cfg" --ulimits-field --output "$fs/new.yaml" 2>e1; echo "new $? [$(ls "$fs")]"
  echo old >"$fs/old.yaml"
  "$bin" admission-policy --config "$cfg" --ulimits-field --output "$fs/old.yaml" 2>e2; echo "old $? $(cat "$fs/old.yaml") [$(ls "$fs" | tr "\n" " ")]"
  "$bin" admission-policy --config "$cfg" --ulimits-field >"$fs/redirect.yaml" 2>e3; echo "redirect $? $(wc -c <"$fs/redirect.yaml")"
  if [ -e /etc/oci-rlimit ]; then mount -t tmpfs tmpfs /etc/oci-rlimit || exit 99; fi
  unset OCI_RLIMIT_CONFIG
  "$bin" admission-policy 2>e4; echo "none $?"
' _ "$bin" "$cfg" "$work/fs" 2>&1)
printf '%s\n' "$out"
expect() {   # expect NAME LINE STDERR_FILE PREFIX
  if grep -qxF -- "$2" <<<"$out" && [[ $(cat "$work/$3") == "$4"* ]] && [ "$(wc -l <"$work/$3")" = 1 ]; then
    echo "ok   $1"
  else echo "FAIL $1: want line '$2', stderr $(cat "$work/$3")"; fails=$((fails + 1)); fi
}
expect "--output on a full tmpfs: no new file" "new 1 []" e1 "oci-rlimit admission-policy: --output \"$work/fs/new.yaml\": create"
expect "--output on a full tmpfs: the old file kept" "old 1 old [old.yaml ]" e2 "oci-rlimit admission-policy: --output \"$work/fs/old.yaml\": replace"
expect "> FILE on a full tmpfs: cut back, no partial policy" "redirect 1 0" e3 "oci-rlimit admission-policy: stdout: write ("
expect "no config anywhere" "none 1" e4 "oci-rlimit admission-policy: no config found: \"/etc/oci-rlimit/config.toml\" does not exist"
[ "$fails" = 0 ]
