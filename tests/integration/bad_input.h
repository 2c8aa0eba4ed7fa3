// The bad-input catalogue: tables of cases over oci-rlimit-hook,
// oci-rlimit-runtime, oci-prlimit-helper and oci-rlimit-nri, each run as the
// real executable (and the admin CLI oci-rlimit), one table per file
// (bad_input_<program>*_test.cc). Every case asserts three things (the one TEST_P, in
// bad_input.cc):
//
//  1. the exact exit status;
//  2. a single-line error: stderr is exactly one line (one trailing newline,
//     no other), it starts with "PROGRAM: ", and it contains every needle of
//     the case (the offending field, value or path); stdout is empty;
//  3. nothing was modified: every entry under the case's directory (config
//     files, the bundle, mounts inside it) has the same type, inode, mode,
//     owner, size, mtime, ctime and content (or symlink target) before and
//     after, so no new file (no `.oci-rlimit.*` temp file) and no rewrite;
//     a directory is compared by inode, mode, owner and its entries.
//     When the case has a live target process, its /proc/PID/limits is
//     unchanged too; for the runtime wrapper, the stand-in runtime (which
//     records that it ran, outside the snapshotted directory) never ran.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <functional>
#include <initializer_list>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "harness.h"
#include "tests/testing/log_record.h"

namespace ocirlimit::itest::badinput {

enum class Prog { kHook, kRuntime, kHelper, kNri, kCli };

const char* ProgName(Prog p);

constexpr const char* kMinimalSpec =
    R"({"ociVersion":"1.0.2","process":{"args":["sh"],"cwd":"/",)"
    R"("rlimits":[{"type":"RLIMIT_NOFILE","hard":1024,"soft":1024}]},"root":{"path":"rootfs"}})";

// Everything one case may touch. `dir` is snapshotted; `outside` holds the
// stand-in runtime and its record and is not.
struct World {
  TempDir dir;
  TempDir outside;
  std::string config = dir / "config.toml";
  std::string bundle = dir / "bundle";
  std::vector<std::string> args;  // after the program path
  std::string stdin_data;
  std::vector<std::string> env;
  bool as_nobody = false;
  pid_t live = 0;    // a sleeping child, when a case needs a live target
  pid_t zombie = 0;  // an exited child not yet reaped
  std::map<std::string, std::string> vars;

  World() = default;
  World(const World&) = delete;
  World& operator=(const World&) = delete;
  ~World();
  std::string State(const std::string& pid_json, const std::string& extra = "") const;
  pid_t Live();
  pid_t Zombie();
};

struct Case {
  const char* name;
  Prog prog;
  int status;
  std::vector<std::string> needles;  // {dir}, {bundle}, {config}, {pid}, {live}, {outside}
  std::function<void(World&)> setup;
  // The program applies (exit 0 with one warning line): the live target's
  // limits are then expected to change, and the wrapper's stand-in runtime
  // to run.
  bool applies = false;
  // Where the one line goes when not on stderr (which must then be empty):
  // a log outside the snapshot ("{outside}/runtime.log"), as the wrapper
  // keeps its warnings out of the container's and the exec session's stdio.
  std::string line_in = "";
  // Paths under `dir`, as the snapshot names them ("bundle/config.json"),
  // that an applying wrapper or precreate rewrites: left out of "nothing
  // modified" (their temp files are not).
  std::vector<std::string> rewrites = {};
  // Stdout is the program's output (precreate's spec): not required empty.
  bool prints = false;
  // What an applying case's program did besides its one line (the limits
  // it wrote, the log-file record), checked after the shared asserts.
  std::function<void(World&, const CmdResult&)> then = nullptr;
};
// gtest prints a parameter with PrintTo: the case's name, not a hex dump.
void PrintTo(const Case& c, std::ostream* os);
// The test name of a case: its `name`.
std::string CaseName(const ::testing::TestParamInfo<Case>& info);

// The one test every case runs; each table file instantiates it.
class BadInput : public ::testing::TestWithParam<Case> {};

// The tables, one per file, and all of them (for the catalogue's own check).
std::vector<Case> HookStateCases();    // bad_input_hook_state_test.cc
std::vector<Case> HookConfigCases();   // bad_input_hook_config_test.cc
std::vector<Case> RuntimeSpecCases();  // bad_input_runtime_spec_test.cc
std::vector<Case> RuntimeCases();      // bad_input_runtime_test.cc
std::vector<Case> HelperCases();       // bad_input_helper_test.cc
std::vector<Case> NriCases();          // bad_input_nri_test.cc
std::vector<Case> CliCases();          // bad_input_cli_test.cc
const std::vector<Case>& AllCases();

// A table from its parts (the builder functions of one file).
std::vector<Case> Join(std::initializer_list<std::vector<Case>> parts);

// ---- shared by the tables ----

// Runtime wrapper config with a different first part (the [runtime] table
// pointing at the stand-in is kept).
void RuntimeConfig(World& w, const std::string& top);

std::string Big(size_t n);

// 50,000 levels of {"a":...}: enough to overflow the stack of any recursive
// dump or copy, as an outside review found.
std::string Deep(size_t levels = 50000);

// A runc-like spec with a deep value under an unknown key.
std::string DeepSpec();

// "a.a.a..." with `parts` parts: nested past what toml++ survives.
std::string DeepToml(int parts);

// A drop-in beside the case's config (config.d/, core/config.h DropInDir).
void DeepDropIn(World& w, const std::string& text);

// {dir}/full/x.log on a full tmpfs, its last page full too: no room for one
// more byte. Returns its path.
std::string FullDiskLog(World& w);

// config.d/20-gone.toml, a dangling symlink: a drop-in that is gone when it
// is opened (removed or renamed after the directory was listed).
void GoneDropIn(World& w);
// The warning each program gives for it, after "PROGRAM: warning: ".
inline constexpr const char* kGoneDropInWarning =
    "config drop-in \"{dir}/config.d/20-gone.toml\" is gone";

// The memlock entry of a spec's or process file's process.rlimits,
// "soft:hard", or "none".
std::string MemlockIn(const std::string& json_text);
// HostileRequest() and ExpectOneEscapedRecord() are tests/testing/log_record.h's.

// Something at `path` that is not a regular file and must never be waited on.
enum class NotAFile { kFifo, kDirectory, kSocket };
void MakeNotAFile(const std::string& path, NotAFile kind);

void HookState(World& w, const std::string& state);

// Root reads any mode; "unreadable" for root means not a readable regular
// file (a FIFO with no writer, a socket, a directory). For a mode that
// denies reading, the case runs the program as nobody (uid 65534).
void ForNobody(World& w, const std::string& path);

}  // namespace ocirlimit::itest::badinput
