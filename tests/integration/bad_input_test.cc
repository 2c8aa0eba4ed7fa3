// The bad-input catalogue: one table of cases over
// oci-rlimit-hook, oci-rlimit-runtime and oci-prlimit-helper, each run as the
// real executable. Every case asserts three things:
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
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "harness.h"

namespace ocirlimit::itest {
namespace {

namespace fs = std::filesystem;

enum class Prog { kHook, kRuntime, kHelper, kNri };

const char* ProgName(Prog p) {
  switch (p) {
    case Prog::kHook:
      return "oci-rlimit-hook";
    case Prog::kRuntime:
      return "oci-rlimit-runtime";
    case Prog::kHelper:
      return "oci-prlimit-helper";
    case Prog::kNri:
      return "oci-rlimit-nri";
  }
  return "?";
}

// A pid that belonged to a process which has exited and been reaped.
pid_t ReapedPid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  int st = 0;
  waitpid(pid, &st, 0);
  return pid;
}

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

  std::string State(const std::string& pid_json, const std::string& extra = "") const {
    return R"({"ociVersion":"1.0.2","id":"bad-input","status":"creating","pid":)" + pid_json +
           R"(,"bundle":")" + bundle + "\"" + extra + "}";
  }
  pid_t Live() {
    if (live == 0) {
      live = fork();
      if (live == 0) {
        execl("/bin/sleep", "sleep", "600", nullptr);
        _exit(127);
      }
      vars["{live}"] = std::to_string(live);
    }
    return live;
  }
  pid_t Zombie() {
    if (zombie == 0) {
      zombie = fork();
      if (zombie == 0) _exit(0);
      // Exited once its stat says so; not reaped until the World goes.
      for (int i = 0; i < 500; ++i) {
        std::string stat = ReadFile("/proc/" + std::to_string(zombie) + "/stat");
        if (stat.find(") Z ") != std::string::npos) break;
        usleep(2000);
      }
      vars["{zombie}"] = std::to_string(zombie);
    }
    return zombie;
  }
  ~World() {
    if (zombie > 0) waitpid(zombie, nullptr, 0);
    if (live > 0) {
      kill(live, SIGKILL);
      waitpid(live, nullptr, 0);
    }
  }
};

struct Case {
  const char* name;
  Prog prog;
  int status;
  std::vector<std::string> needles;  // {dir}, {bundle}, {config}, {pid}, {live} are replaced
  std::function<void(World&)> setup;
  // The program applies (exit 0 with one warning line): the live target's
  // limits are then expected to change.
  bool applies = false;
};
// gtest prints a parameter with PrintTo: the case's name, not a hex dump.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// Defaults per program; a case's setup then changes what it tests.
void DefaultWorld(Prog prog, World& w) {
  fs::create_directories(w.bundle);
  WriteFile(w.bundle + "/config.json", kMinimalSpec);
  const pid_t reaped = ReapedPid();
  w.vars["{pid}"] = std::to_string(reaped);
  w.vars["{dir}"] = w.dir.path();
  w.vars["{bundle}"] = w.bundle;
  w.vars["{config}"] = w.config;
  switch (prog) {
    case Prog::kHook:
      WriteFile(w.config, "rlimits = [\"memlock=1M:4M\"]\n");
      w.args = {"--config", w.config, "createRuntime"};
      w.stdin_data = w.State(std::to_string(reaped));
      break;
    case Prog::kRuntime: {
      const std::string standin = w.outside / "runtime.sh";
      WriteFile(standin, "#!/bin/sh\necho \"$@\" > " + (w.outside / "ran") + "\n", 0755);
      WriteFile(w.config,
                "rlimits = [\"memlock=1M:4M\"]\n[runtime]\nruntimes = [\"" + standin + "\"]\n");
      w.env = {"OCI_RLIMIT_CONFIG=" + w.config};
      w.args = {"create", "--bundle", w.bundle, "bad-input"};
      break;
    }
    case Prog::kHelper:
      w.args = {"--pid", std::to_string(reaped), "memlock=1M:4M"};
      break;
    case Prog::kNri:
      // A config error ends it before it connects: no socket needed.
      WriteFile(w.config, "rlimits = [\"memlock=1M:4M\"]\n");
      w.args = {"--config", w.config, "--socket", w.outside / "nri.sock"};
      break;
  }
}

// Runtime wrapper config with a different first part (the [runtime] table
// pointing at the stand-in is kept).
void RuntimeConfig(World& w, const std::string& top) {
  WriteFile(w.config, top + "[runtime]\nruntimes = [\"" + (w.outside / "runtime.sh") + "\"]\n");
}

std::string Big(size_t n) { return std::string(n, 'x'); }

// 50,000 levels of {"a":...}: enough to overflow the stack of any recursive
// dump or copy, as an outside review found.
std::string Deep(size_t levels = 50000) {
  std::string out;
  for (size_t i = 0; i < levels; ++i) out += "{\"a\":";
  out += "1";
  out += std::string(levels, '}');
  return out;
}

// A runc-like spec with a deep value under an unknown key.
std::string DeepSpec() { return R"({"process":{"args":["sh"]},"x-deep":)" + Deep() + "}"; }

// "a.a.a..." with `parts` parts: nested past what toml++ survives.
std::string DeepToml(int parts) {
  std::string s = "a";
  for (int i = 1; i < parts; ++i) s += ".a";
  return s;
}

// A drop-in beside the case's config (config.d/, core/config.h DropInDir).
void DeepDropIn(World& w, const std::string& text) {
  fs::create_directories(w.dir / "config.d");
  WriteFile(w.dir / "config.d/50-deep.toml", text);
}

// The hook's log-file on a full tmpfs, its last page full too: no room for
// one more byte.
void HookLogOnFullDisk(World& w) {
  const std::string mnt = w.dir / "full";
  fs::create_directories(mnt);
  ASSERT_EQ(mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k,mode=0755"), 0) << strerror(errno);
  WriteFile(mnt + "/hook.log", std::string(4095, 'x') + "\n");
  Sh("dd if=/dev/zero of=" + mnt + "/filler bs=1k 2>/dev/null; sync");
  WriteFile(w.config,
            "rlimits = [\"memlock=1M:4M\"]\nlog-file = \"" + (mnt + "/hook.log") + "\"\n");
}

// ---- the snapshot ----

std::string Describe(const fs::path& p) {
  struct stat st {};
  if (lstat(p.c_str(), &st) != 0) return "lstat failed";
  std::ostringstream os;
  os << "ino=" << st.st_ino << " mode=" << std::oct << st.st_mode << std::dec
     << " uid=" << st.st_uid << " gid=" << st.st_gid << " size=" << st.st_size
     << " mtime=" << st.st_mtim.tv_sec << "." << st.st_mtim.tv_nsec
     << " ctime=" << st.st_ctim.tv_sec << "." << st.st_ctim.tv_nsec;
  // A directory is compared by its entries (the snapshot lists them): a temp
  // file created and removed again updates its mtime and nothing else.
  if (S_ISDIR(st.st_mode)) {
    return "dir ino=" + std::to_string(st.st_ino) + " mode=" + std::to_string(st.st_mode) +
           " uid=" + std::to_string(st.st_uid) + " gid=" + std::to_string(st.st_gid);
  }
  if (S_ISREG(st.st_mode)) os << " content=" << std::hash<std::string>{}(ReadFile(p));
  if (S_ISLNK(st.st_mode)) os << " target=" << fs::read_symlink(p).string();
  return os.str();
}

std::map<std::string, std::string> Snapshot(const std::string& root) {
  std::map<std::string, std::string> out;
  out[root] = Describe(root);
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    out[e.path().string()] = Describe(e.path());
  }
  return out;
}

std::vector<std::string> TempFiles(const std::map<std::string, std::string>& snap) {
  std::vector<std::string> out;
  for (const auto& [path, _] : snap) {
    if (fs::path(path).filename().string().starts_with(".oci-rlimit.")) out.push_back(path);
  }
  return out;
}

std::string Replace(std::string s, const std::map<std::string, std::string>& vars) {
  for (const auto& [k, v] : vars) {
    for (size_t at; (at = s.find(k)) != std::string::npos;) s.replace(at, k.size(), v);
  }
  return s;
}

// ---- the cases ----

// Something at `path` that is not a regular file and must never be waited on.
enum class NotAFile { kFifo, kDirectory, kSocket };
void MakeNotAFile(const std::string& path, NotAFile kind) {
  switch (kind) {
    case NotAFile::kFifo:
      ASSERT_EQ(mkfifo(path.c_str(), 0644), 0) << strerror(errno);
      break;
    case NotAFile::kDirectory:
      ASSERT_EQ(mkdir(path.c_str(), 0755), 0) << strerror(errno);
      break;
    case NotAFile::kSocket: {
      int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      ASSERT_GE(sock, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      ASSERT_LT(path.size(), sizeof addr.sun_path);
      path.copy(addr.sun_path, path.size());
      ASSERT_EQ(bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << strerror(errno);
      close(sock);  // the socket file stays; nothing listens on it
      break;
    }
  }
}

// The hook applies to a live target, then cannot log: one warning, exit 0.
void HookLogNotAFile(World& w, NotAFile kind) {
  MakeNotAFile(w.dir / "hook.log", kind);
  WriteFile(w.config,
            "rlimits = [\"memlock=1M:4M\"]\nlog-file = \"" + (w.dir / "hook.log") + "\"\n");
  w.stdin_data = w.State(std::to_string(w.Live()));
}

// The wrapper fails (a bad spec) and cannot write runc's JSON error log.
void RuntimeLogNotAFile(World& w, NotAFile kind) {
  MakeNotAFile(w.dir / "runtime.log", kind);
  WriteFile(w.bundle + "/config.json", "{\"process\": ");
  w.args = {
      "--log",    w.dir / "runtime.log", "--log-format", "json", "create", "--bundle", w.bundle,
      "bad-input"};
}

void HookState(World& w, const std::string& state) { w.stdin_data = state; }

// A tmpfs of 64 KiB holding the bundle, filled to the last block.
void FullDisk(World& w) {
  const std::string mnt = w.dir / "full";
  fs::create_directories(mnt);
  ASSERT_EQ(mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k,mode=0755"), 0) << strerror(errno);
  w.bundle = mnt + "/bundle";
  w.vars["{bundle}"] = w.bundle;
  fs::create_directories(w.bundle);
  // A spec that, merged, needs more room than is left.
  Json spec = Json::parse(kMinimalSpec);
  spec["annotations"]["padding"] = Big(8000);
  WriteFile(w.bundle + "/config.json", spec.dump());
  Sh("dd if=/dev/zero of=" + mnt + "/filler bs=1k 2>/dev/null; sync");
  w.args = {"create", "--bundle", w.bundle, "bad-input"};
}

void ReadOnlyBundle(World& w) {
  ASSERT_EQ(mount(w.bundle.c_str(), w.bundle.c_str(), nullptr, MS_BIND, nullptr), 0)
      << strerror(errno);
  ASSERT_EQ(mount(nullptr, w.bundle.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr), 0)
      << strerror(errno);
}

// Root reads any mode; "unreadable" for root means not a readable regular
// file (a FIFO with no writer, a socket, a directory). For a mode that
// denies reading, the case runs the program as nobody (uid 65534).
void ForNobody(World& w, const std::string& path) {
  chmod(w.dir.path().c_str(), 0711);
  chmod(path.c_str(), 0600);
  w.as_nobody = true;
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      // ---------------- oci-rlimit-hook: the state on stdin ----------------
      {"HookStateEmpty",
       Prog::kHook,
       1,
       {"state: not valid JSON"},
       [](World& w) { HookState(w, ""); }},
      {"HookStateMalformed",
       Prog::kHook,
       1,
       {"state: not valid JSON"},
       [](World& w) { HookState(w, "{id: bad-input}"); }},
      {"HookStateTruncated",
       Prog::kHook,
       1,
       {"state: not valid JSON"},
       [](World& w) { HookState(w, R"({"ociVersion":"1.0.2","id":"bad-in)"); }},
      {"HookStateNotObject",
       Prog::kHook,
       1,
       {"state: must be a JSON object"},
       [](World& w) { HookState(w, "[1,2]"); }},
      {"HookStatePidMissing",
       Prog::kHook,
       1,
       {"state.pid: missing"},
       [](World& w) { HookState(w, R"({"id":"x","status":"creating"})"); }},
      {"HookStatePidString",
       Prog::kHook,
       1,
       {"state.pid: \"42\" is not an integer"},
       [](World& w) { HookState(w, w.State("\"42\"")); }},
      {"HookStatePidNegative",
       Prog::kHook,
       1,
       {"state.pid: -7 is not a valid pid"},
       [](World& w) { HookState(w, w.State("-7")); }},
      {"HookStatePidZero",
       Prog::kHook,
       1,
       {"state.pid: 0 is not a valid pid"},
       [](World& w) { HookState(w, w.State("0")); }},
      {"HookStatePidFloat",
       Prog::kHook,
       1,
       {"state.pid: 1.5 is not an integer"},
       [](World& w) { HookState(w, w.State("1.5")); }},
      {"HookStatePidOverflow",
       Prog::kHook,
       1,
       {"state.pid: 4294967297 is not a valid pid"},
       [](World& w) { HookState(w, w.State("4294967297")); }},
      {"HookStatePidOne",
       Prog::kHook,
       1,
       {"pid 1: refusing to touch pid 0 or 1"},
       [](World& w) { HookState(w, w.State("1")); }},
      {"HookStateOver1MiB",
       Prog::kHook,
       1,
       {"input is larger than 1048576 bytes"},
       [](World& w) {
         HookState(w, w.State(w.vars["{pid}"], R"(,"annotations":{"a":")" + Big(1 << 20) + "\"}"));
       }},
      {"HookStateIdWrongType",
       Prog::kHook,
       1,
       {"state.id: must be a string"},
       [](World& w) {
         HookState(w, R"({"id":7,"status":"creating","pid":)" + w.vars["{pid}"] + "}");
       }},
      {"HookStateAnnotationsWrongType",
       Prog::kHook,
       1,
       {"state.annotations: must be an object"},
       [](World& w) { HookState(w, w.State(w.vars["{pid}"], R"(,"annotations":[])")); }},
      {"HookStateAnnotationValueWrongType",
       Prog::kHook,
       1,
       {"state.annotations[\"k\"]: must be a string"},
       [](World& w) { HookState(w, w.State(w.vars["{pid}"], R"(,"annotations":{"k":1})")); }},
      {"HookStateInvalidUtf8",
       Prog::kHook,
       1,
       {"state: not valid JSON"},
       [](World& w) {
         HookState(w, R"({"id":"bad-)" + std::string("\xff\xfe") +
                          R"(","status":"creating","pid":)" + w.vars["{pid}"] + "}");
       }},
      {"HookStateNulInId",
       Prog::kHook,
       1,
       {"state.id: ", "NUL"},
       [](World& w) {
         HookState(w, R"({"id":"a\u0000b","status":"creating","pid":)" + w.vars["{pid}"] + "}");
       }},
      {"HookStateNewlineInId",
       Prog::kHook,
       1,
       {"state.id: ", "control character"},
       [](World& w) {
         HookState(w, R"({"id":"a\nb","status":"creating","pid":)" + w.vars["{pid}"] + "}");
       }},
      {"HookStateNulInBundle",
       Prog::kHook,
       1,
       {"state.bundle: ", "NUL"},
       [](World& w) {
         HookState(w, R"({"id":"x","status":"creating","pid":)" + w.vars["{pid}"] +
                          R"(,"bundle":")" + w.bundle + R"(\u0000/elsewhere"})");
       }},
      {"HookStateStatusRunning",
       Prog::kHook,
       1,
       {"state.status: \"running\" is too late"},
       [](World& w) {
         HookState(w, R"({"id":"x","status":"running","pid":)" + w.vars["{pid}"] + "}");
       }},
      {"HookStateStatusUnknown",
       Prog::kHook,
       1,
       {"state.status: \"paused\" is not a known"},
       [](World& w) {
         HookState(w, R"({"id":"x","status":"paused","pid":)" + w.vars["{pid}"] + "}");
       }},
      {"HookStateDeeplyNested",
       Prog::kHook,
       1,
       {"state: nested deeper than 64 levels"},
       [](World& w) { HookState(w, w.State(w.vars["{pid}"], R"(,"annotations":)" + Deep())); }},
      {"HookSpecDeeplyNestedWithRules",
       Prog::kHook,
       1,
       {"{bundle}/config.json: nested deeper than 64 levels"},
       [](World& w) {
         WriteFile(w.config,
                   "[[rule]]\nname = \"all\"\nrlimits = [\"memlock=1M:4M\"]\nmatch = { always "
                   "= true }\n");
         WriteFile(w.bundle + "/config.json", DeepSpec());
         w.stdin_data = w.State(std::to_string(w.Live()));
       }},
      // Without rules the spec is read only for the conflict check, whose
      // failure is a warning: the limits still apply.
      {"HookSpecDeeplyNestedConflictCheckWarns",
       Prog::kHook,
       0,
       {"warning: cannot check the bundle for conflicts: {bundle}/config.json: nested deeper than "
        "64 levels"},
       [](World& w) {
         WriteFile(w.bundle + "/config.json", DeepSpec());
         w.stdin_data = w.State(std::to_string(w.Live()));
       },
       true},
      {"HookPrecreateDeeplyNested",
       Prog::kHook,
       1,
       {"precreate spec: nested deeper than 64 levels"},
       [](World& w) {
         w.args = {"--config", w.config, "precreate"};
         HookState(w, DeepSpec());
       }},
      {"HookStateHugeIdIsCutInTheMessage",
       Prog::kHook,
       1,
       {"container \"aaaa", "\u2026\" (900000 bytes): pid {pid}: no such process"},
       [](World& w) {
         HookState(w, R"({"id":")" + std::string(900000, 'a') + R"(","status":"creating","pid":)" +
                          w.vars["{pid}"] + R"(,"bundle":")" + w.bundle + "\"}");
       }},
      {"HookStatePidHugeStringIsCut",
       Prog::kHook,
       1,
       {"state.pid: \"4444", "\u2026\" (60000 bytes) is not an integer"},
       [](World& w) { HookState(w, w.State("\"" + std::string(60000, '4') + "\"")); }},
      {"HookStatePidArrayIsNotDumped",
       Prog::kHook,
       1,
       {"state.pid: an array of 20000 elements is not an integer"},
       [](World& w) {
         std::string many = "[";
         for (int i = 0; i < 20000; ++i) many += i ? ",1" : "1";
         HookState(w, w.State(many + "]"));
       }},
      {"HookTargetExitedBeforeApply",
       Prog::kHook,
       1,
       {"container \"bad-input\": pid {pid}: no such process"},
       [](World&) {}},
      {"HookPrecreateMalformedSpec",
       Prog::kHook,
       1,
       {"precreate spec: not valid JSON"},
       [](World& w) {
         w.args = {"--config", w.config, "precreate"};
         HookState(w, R"({"ociVersion":"1.0.2","process":{)");
       }},
      {"HookUnknownStage",
       Prog::kHook,
       2,
       {"poststop"},
       [](World& w) {
         w.args = {"--config", w.config, "poststop"};
       }},
      // ---------------- oci-rlimit-hook: its config ----------------
      {"HookConfigUnknownKey",
       Prog::kHook,
       1,
       {"{config}", "unknown key \"rlimit\""},
       [](World& w) { WriteFile(w.config, "rlimit = [\"memlock=1M\"]\n"); }},
      {"HookConfigRlimitNameTypo",
       Prog::kHook,
       1,
       {"unknown name \"memlok\""},
       [](World& w) { WriteFile(w.config, "rlimits = [\"memlok=1M\"]\n"); }},
      {"HookConfigSoftAboveHard",
       Prog::kHook,
       1,
       {"rlimit \"memlock=4M:1M\"", "soft 4194304 is greater than hard 1048576"},
       [](World& w) { WriteFile(w.config, "rlimits = [\"memlock=4M:1M\"]\n"); }},
      {"HookConfigOverflow",
       Prog::kHook,
       1,
       {"\"18446744073709551616\" overflows 64 bits"},
       [](World& w) { WriteFile(w.config, "rlimits = [\"nofile=18446744073709551616\"]\n"); }},
      {"HookConfigSuffixOverflow",
       Prog::kHook,
       1,
       {"\"16777216T\" overflows 64 bits"},
       [](World& w) { WriteFile(w.config, "rlimits = [\"memlock=16777216T\"]\n"); }},
      {"HookConfigDuplicate",
       Prog::kHook,
       1,
       {"rlimit \"MEMLOCK=2M\"", "memlock is given twice"},
       [](World& w) { WriteFile(w.config, "rlimits = [\"memlock=1M\", \"MEMLOCK=2M\"]\n"); }},
      {"HookConfigWrongType",
       Prog::kHook,
       1,
       {"rlimits: must be an array of strings"},
       [](World& w) { WriteFile(w.config, "rlimits = \"memlock=1M\"\n"); }},
      {"HookConfigOnErrorWrongType",
       Prog::kHook,
       1,
       {"on-error: must be a string"},
       [](World& w) { WriteFile(w.config, "rlimits = [\"memlock=1M\"]\non-error = true\n"); }},
      {"HookConfigMalformedToml",
       Prog::kHook,
       1,
       {"{config}", "line 1"},
       [](World& w) { WriteFile(w.config, "rlimits = [\"memlock=1M\"\n"); }},
      {"HookConfigInvalidUtf8",
       Prog::kHook,
       1,
       {"{config}", "UTF-8"},
       [](World& w) { WriteFile(w.config, "rlimits = [\"memlock=1M\xc3\x28\"]\n"); }},
      {"HookConfigNulInLogFile",
       Prog::kHook,
       1,
       {"log-file", "NUL"},
       [](World& w) {
         WriteFile(w.config, "rlimits = [\"memlock=1M\"]\nlog-file = \"" + w.dir.path() +
                                 "/log\\u0000.txt\"\n");
       }},
      {"HookConfigMissing",
       Prog::kHook,
       1,
       {"{dir}/missing.toml", "No such file or directory"},
       [](World& w) {
         w.args = {"--config", w.dir / "missing.toml", "createRuntime"};
       }},
      {"HookConfigDirectory",
       Prog::kHook,
       1,
       {"{config}", "is not a regular file"},
       [](World& w) {
         fs::remove(w.config);
         fs::create_directory(w.config);
       }},
      {"HookConfigFifo",
       Prog::kHook,
       1,
       {"{config}", "is not a regular file"},
       [](World& w) {
         fs::remove(w.config);
         ASSERT_EQ(mkfifo(w.config.c_str(), 0644), 0);
       }},
      {"HookConfigUnreadableAsNobody",
       Prog::kHook,
       1,
       {"{config}", "Permission denied"},
       [](World& w) { ForNobody(w, w.config); }},
      {"HookEnvOverrideBad",
       Prog::kHook,
       1,
       {"environment OCI_RLIMIT_RLIMITS", "\"memlock=lots\""},
       [](World& w) { w.env = {"OCI_RLIMIT_RLIMITS=memlock=lots"}; }},
      {"HookChainRelative",
       Prog::kHook,
       1,
       {"hook.chain", "\"next-hook\" must be an absolute path"},
       [](World& w) {
         WriteFile(w.config, "rlimits = [\"memlock=1M\"]\n[hook]\nchain = \"next-hook\"\n");
       }},
      {"HookLogFifoWarnsAndApplies",
       Prog::kHook,
       0,
       {"warning: open log \"{dir}/hook.log\": No such device or address"},
       [](World& w) { HookLogNotAFile(w, NotAFile::kFifo); },
       true},
      {"HookLogDirectoryWarnsAndApplies",
       Prog::kHook,
       0,
       {"warning: open log \"{dir}/hook.log\": Is a directory"},
       [](World& w) { HookLogNotAFile(w, NotAFile::kDirectory); },
       true},
      {"HookLogSocketWarnsAndApplies",
       Prog::kHook,
       0,
       {"warning: open log \"{dir}/hook.log\": No such device or address"},
       [](World& w) { HookLogNotAFile(w, NotAFile::kSocket); },
       true},
      // ---------------- oci-rlimit-runtime create ----------------
      {"RuntimeSpecMissing",
       Prog::kRuntime,
       1,
       {"{bundle}/config.json", "No such file"},
       [](World& w) { fs::remove(w.bundle + "/config.json"); }},
      {"RuntimeSpecDirectory",
       Prog::kRuntime,
       1,
       {"{bundle}/config.json", "not a regular file"},
       [](World& w) {
         fs::remove(w.bundle + "/config.json");
         fs::create_directory(w.bundle + "/config.json");
       }},
      {"RuntimeSpecFifo",
       Prog::kRuntime,
       1,
       {"{bundle}/config.json", "not a regular file"},
       [](World& w) {
         fs::remove(w.bundle + "/config.json");
         ASSERT_EQ(mkfifo((w.bundle + "/config.json").c_str(), 0644), 0);
       }},
      {"RuntimeSpecUnreadableAsNobody",
       Prog::kRuntime,
       1,
       {"{bundle}/config.json", "Permission denied"},
       [](World& w) {
         chmod(w.bundle.c_str(), 0755);
         chmod(w.config.c_str(), 0644);
         chmod(w.outside.path().c_str(), 0755);  // the stand-in runtime stays reachable
         ForNobody(w, w.bundle + "/config.json");
       }},
      {"RuntimeSpecSymlink",
       Prog::kRuntime,
       1,
       {"{bundle}/config.json", "is a symlink"},
       [](World& w) {
         fs::rename(w.bundle + "/config.json", w.dir / "real.json");
         fs::create_symlink(w.dir / "real.json", w.bundle + "/config.json");
       }},
      {"RuntimeSpecMalformed",
       Prog::kRuntime,
       1,
       {"{bundle}/config.json\": not valid JSON"},
       [](World& w) { WriteFile(w.bundle + "/config.json", "{\"process\": "); }},
      {"RuntimeSpecInvalidUtf8",
       Prog::kRuntime,
       1,
       {"{bundle}/config.json\": not valid JSON"},
       [](World& w) {
         WriteFile(w.bundle + "/config.json",
                   R"({"process":{"args":[")" + std::string("\xc0\xaf") + R"("]}})");
       }},
      {"RuntimeSpecNotObject",
       Prog::kRuntime,
       1,
       {"{bundle}/config.json\": must be a JSON object"},
       [](World& w) { WriteFile(w.bundle + "/config.json", "[]"); }},
      {"RuntimeSpecDeeplyNested",
       Prog::kRuntime,
       1,
       {"\"{bundle}/config.json\": nested deeper than 64 levels"},
       [](World& w) { WriteFile(w.bundle + "/config.json", DeepSpec()); }},
      {"RuntimeExecProcessDeeplyNested",
       Prog::kRuntime,
       1,
       {"--process \"{dir}/process.json\": nested deeper than 64 levels"},
       [](World& w) {
         WriteFile(w.dir / "process.json", R"({"args":["sh"],"x":)" + Deep() + "}");
         w.args = {"exec", "--process", w.dir / "process.json", "bad-input"};
       }},
      {"RuntimeSpecProcessKeyCase",
       Prog::kRuntime,
       1,
       {"\"{bundle}/config.json\": key \"Process\" in the spec differs only by case from "
        "\"process\""},
       [](World& w) {
         WriteFile(w.bundle + "/config.json",
                   R"({"ociVersion":"1.0.2","Process":{"args":["sh"]}})");
       }},
      {"RuntimeSpecProcessTwice",
       Prog::kRuntime,
       1,
       {"\"{bundle}/config.json\": key \"process\" appears twice in the spec"},
       [](World& w) {
         WriteFile(w.bundle + "/config.json",
                   R"({"process":{"args":["sh"]},"process":{"args":["sh"]}})");
       }},
      {"RuntimeSpecRlimitsUpperCase",
       Prog::kRuntime,
       1,
       {"\"{bundle}/config.json\": key \"RLIMITS\" in process differs only by case from "
        "\"rlimits\""},
       [](World& w) {
         WriteFile(
             w.bundle + "/config.json",
             R"({"process":{"args":["sh"],"RLIMITS":[{"type":"RLIMIT_CORE","soft":0,"hard":0}]}})");
       }},
      {"RuntimeSpecRlimitsTwice",
       Prog::kRuntime,
       1,
       {"\"{bundle}/config.json\": key \"rlimits\" appears twice in process"},
       [](World& w) {
         WriteFile(w.bundle + "/config.json",
                   R"({"process":{"args":["sh"],"rlimits":[],"rlimits":[]}})");
       }},
      {"RuntimeSpecEntryTypeCase",
       Prog::kRuntime,
       1,
       {"\"{bundle}/config.json\": key \"TYPE\" in process.rlimits[] differs only by case from "
        "\"type\""},
       [](World& w) {
         WriteFile(
             w.bundle + "/config.json",
             R"({"process":{"rlimits":[{"TYPE":"RLIMIT_CORE","type":"RLIMIT_CORE","soft":0,"hard":0}]}})");
       }},
      {"RuntimeSpecEntrySoftTwice",
       Prog::kRuntime,
       1,
       {"\"{bundle}/config.json\": key \"soft\" appears twice in process.rlimits[]"},
       [](World& w) {
         WriteFile(
             w.bundle + "/config.json",
             R"({"process":{"rlimits":[{"type":"RLIMIT_CORE","soft":0,"soft":1,"hard":1}]}})");
       }},
      {"RuntimeSpecEntryHardCase",
       Prog::kRuntime,
       1,
       {"\"{bundle}/config.json\": key \"Hard\" in process.rlimits[] differs only by case from "
        "\"hard\""},
       [](World& w) {
         WriteFile(
             w.bundle + "/config.json",
             R"({"process":{"rlimits":[{"type":"RLIMIT_CORE","soft":0,"Hard":1,"hard":1}]}})");
       }},
      {"RuntimeExecProcessRlimitsCase",
       Prog::kRuntime,
       1,
       {"--process \"{dir}/process.json\": key \"Rlimits\" in process differs only by case from "
        "\"rlimits\""},
       [](World& w) {
         WriteFile(w.dir / "process.json", R"({"args":["sh"],"Rlimits":[]})");
         w.args = {"exec", "--process", w.dir / "process.json", "bad-input"};
       }},
      {"RuntimeExecProcessHardTwice",
       Prog::kRuntime,
       1,
       {"--process \"{dir}/process.json\": key \"hard\" appears twice in process.rlimits[]"},
       [](World& w) {
         WriteFile(
             w.dir / "process.json",
             R"({"args":["sh"],"rlimits":[{"type":"RLIMIT_CORE","soft":0,"hard":0,"hard":1}]})");
         w.args = {"exec", "--process", w.dir / "process.json", "bad-input"};
       }},
      {"RuntimeSpecHugeRlimitTypeIsCut",
       Prog::kRuntime,
       1,
       {"rlimits[0].type: unknown rlimit \"RLIMIT_XXXX", "\u2026\" (60007 bytes)"},
       [](World& w) {
         WriteFile(w.bundle + "/config.json", R"({"process":{"rlimits":[{"type":"RLIMIT_)" +
                                                  std::string(60000, 'X') +
                                                  R"(","soft":1,"hard":1}]}})");
       }},
      {"RuntimeSpecRlimitsWrongType",
       Prog::kRuntime,
       1,
       {"rlimits: must be an array"},
       [](World& w) {
         WriteFile(w.bundle + "/config.json", R"({"process":{"args":["sh"],"rlimits":"many"}})");
       }},
      {"RuntimeSpecRlimitTypeTypo",
       Prog::kRuntime,
       1,
       {"rlimits[0].type: unknown rlimit \"RLIMIT_MEMLOK\""},
       [](World& w) {
         WriteFile(
             w.bundle + "/config.json",
             R"({"process":{"args":["sh"],"rlimits":[{"type":"RLIMIT_MEMLOK","soft":1,"hard":1}]}})");
       }},
      {"RuntimeSpecRlimitNegative",
       Prog::kRuntime,
       1,
       {"rlimits[0].soft: -1 is not an unsigned integer"},
       [](World& w) {
         WriteFile(
             w.bundle + "/config.json",
             R"({"process":{"args":["sh"],"rlimits":[{"type":"RLIMIT_CORE","soft":-1,"hard":1}]}})");
       }},
      {"RuntimeReadOnlyBundle",
       Prog::kRuntime,
       1,
       {"replace \"{bundle}/config.json\"", "Read-only file system"},
       [](World& w) { ReadOnlyBundle(w); }},
      {"RuntimeFullDisk",
       Prog::kRuntime,
       1,
       {"replace \"{bundle}/config.json\"", "No space left on device"},
       [](World& w) { FullDisk(w); }},
      {"RuntimeRejectedCreateKeeps6644SpecInode",
       Prog::kRuntime,
       1,
       {"rlimits[0].soft: -1 is not an unsigned integer"},
       [](World& w) {
         WriteFile(
             w.bundle + "/config.json",
             R"({"process":{"args":["sh"],"rlimits":[{"type":"RLIMIT_CORE","soft":-1,"hard":1}]}})");
         ASSERT_EQ(chown((w.bundle + "/config.json").c_str(), 65534, 65534), 0);
         ASSERT_EQ(chmod((w.bundle + "/config.json").c_str(), 06644), 0);
       }},
      {"RuntimeLogFifoNamedOnTheErrorLine",
       Prog::kRuntime,
       1,
       {"not valid JSON", "(warning: not logged: open log \"{dir}/runtime.log\": No such device"},
       [](World& w) { RuntimeLogNotAFile(w, NotAFile::kFifo); }},
      {"RuntimeLogDirectoryNamedOnTheErrorLine",
       Prog::kRuntime,
       1,
       {"not valid JSON", "(warning: not logged: open log \"{dir}/runtime.log\": Is a directory"},
       [](World& w) { RuntimeLogNotAFile(w, NotAFile::kDirectory); }},
      {"RuntimeLogSocketNamedOnTheErrorLine",
       Prog::kRuntime,
       1,
       {"not valid JSON", "(warning: not logged: open log \"{dir}/runtime.log\": No such device"},
       [](World& w) { RuntimeLogNotAFile(w, NotAFile::kSocket); }},
      {"RuntimeConfigUnknownKey",
       Prog::kRuntime,
       1,
       {"unknown key \"runtime.runtime\""},
       [](World& w) {
         WriteFile(w.config, "rlimits = [\"memlock=1M\"]\n[runtime]\nruntime = [\"runc\"]\n");
       }},
      {"RuntimeConfigRlimitTypo",
       Prog::kRuntime,
       1,
       {"unknown name \"memlok\""},
       [](World& w) { RuntimeConfig(w, "rlimits = [\"memlok=1M\"]\n"); }},
      {"RuntimeConfigSoftAboveHard",
       Prog::kRuntime,
       1,
       {"soft 2097152 is greater than hard 1048576"},
       [](World& w) { RuntimeConfig(w, "rlimits = [\"memlock=2M:1M\"]\n"); }},
      {"RuntimeConfigEmptyRuntimes",
       Prog::kRuntime,
       1,
       {"runtime.runtimes: must name at least one runtime"},
       [](World& w) {
         WriteFile(w.config, "rlimits = [\"memlock=1M\"]\n[runtime]\nruntimes = []\n");
       }},
      {"RuntimeConfigNulInRuntime",
       Prog::kRuntime,
       1,
       {"runtime.runtimes[0]", "NUL"},
       [](World& w) {
         WriteFile(w.config, "rlimits = [\"memlock=1M\"]\n[runtime]\nruntimes = [\"" +
                                 (w.outside / "runtime.sh") + "\\u0000x\"]\n");
       }},
      {"RuntimeConfigNamedButMissing",
       Prog::kRuntime,
       1,
       {"{dir}/nope.toml", "No such file"},
       [](World& w) { w.env = {"OCI_RLIMIT_CONFIG=" + (w.dir / "nope.toml")}; }},
      {"RuntimeNoRuntimeFound",
       Prog::kRuntime,
       1,
       {"/nonexistent/runc"},
       [](World& w) {
         WriteFile(w.config,
                   "rlimits = [\"memlock=1M\"]\n[runtime]\nruntimes = [\"/nonexistent/runc\"]\n");
       }},
      {"RuntimeBundleFlagWithoutValue",
       Prog::kRuntime,
       1,
       {"--bundle"},
       [](World& w) {
         w.args = {"create", "--bundle"};
       }},
      {"RuntimeExecProcessSymlink",
       Prog::kRuntime,
       1,
       {"{dir}/process.json", "is a symlink"},
       [](World& w) {
         WriteFile(w.dir / "real-process.json", R"({"args":["sh"],"cwd":"/"})");
         fs::create_symlink(w.dir / "real-process.json", w.dir / "process.json");
         w.args = {"exec", "--process", w.dir / "process.json", "--detach", "bad-input"};
       }},
      {"RuntimeExecProcessMalformed",
       Prog::kRuntime,
       1,
       {"{dir}/process.json\": not valid JSON"},
       [](World& w) {
         WriteFile(w.dir / "process.json", R"({"args":["sh"],)");
         w.args = {"exec", "--process", w.dir / "process.json", "bad-input"};
       }},
      // ---------------- every config reader: TOML nested past the guard ----------------
      // toml++ recursed once per level of these and crashed (SIGSEGV, rc 139).
      {"HookConfigDeepDottedKey",
       Prog::kHook,
       1,
       {"config \"{config}\": line 1, column 200: keys nested deeper than 100 levels",
        "the limit is 100"},
       [](World& w) { WriteFile(w.config, DeepToml(60000) + " = 1\n"); }},
      {"HookConfigDeepHeaderInADropIn",
       Prog::kHook,
       1,
       {"config \"{dir}/config.d/50-deep.toml\": line 1", "the limit is 100"},
       [](World& w) { DeepDropIn(w, "[" + DeepToml(80000) + "]\n"); }},
      {"HookPrecreateConfigDeepDottedKey",
       Prog::kHook,
       1,
       {"config \"{config}\"", "keys nested deeper than 100 levels"},
       [](World& w) {
         WriteFile(w.config, DeepToml(60000) + " = 1\n");
         w.args = {"--config", w.config, "precreate"};
         HookState(w, kMinimalSpec);
       }},
      {"HookPrecreateConfigDeepHeaderInADropIn",
       Prog::kHook,
       1,
       {"config \"{dir}/config.d/50-deep.toml\"", "the limit is 100"},
       [](World& w) {
         DeepDropIn(w, "[" + DeepToml(80000) + "]\n");
         w.args = {"--config", w.config, "precreate"};
         HookState(w, kMinimalSpec);
       }},
      {"RuntimeCreateConfigDeepDottedKey",
       Prog::kRuntime,
       1,
       {"config \"{config}\": line 1, column 200: keys nested deeper than 100 levels"},
       [](World& w) { RuntimeConfig(w, DeepToml(60000) + " = 1\n"); }},
      {"RuntimeCreateConfigDeepHeaderInADropIn",
       Prog::kRuntime,
       1,
       {"config \"{dir}/config.d/50-deep.toml\"", "the limit is 100"},
       [](World& w) { DeepDropIn(w, "[" + DeepToml(80000) + "]\n"); }},
      {"RuntimeExecConfigDeepHeaderInADropIn",
       Prog::kRuntime,
       1,
       {"config \"{dir}/config.d/50-deep.toml\"", "the limit is 100"},
       [](World& w) {
         DeepDropIn(w, "[" + DeepToml(80000) + "]\n");
         WriteFile(w.dir / "process.json", R"({"args":["sh"],"cwd":"/"})");
         w.args = {"exec", "--process", w.dir / "process.json", "bad-input"};
       }},
      {"RuntimeExecConfigDeepDottedKey",
       Prog::kRuntime,
       1,
       {"config \"{config}\"", "keys nested deeper than 100 levels"},
       [](World& w) {
         RuntimeConfig(w, DeepToml(60000) + " = 1\n");
         WriteFile(w.dir / "process.json", R"({"args":["sh"],"cwd":"/"})");
         w.args = {"exec", "--process", w.dir / "process.json", "bad-input"};
       }},
      {"NriConfigDeepDottedKey",
       Prog::kNri,
       2,
       {"config \"{config}\": line 1, column 200: keys nested deeper than 100 levels"},
       [](World& w) { WriteFile(w.config, DeepToml(60000) + " = 1\n"); }},
      {"NriConfigDeepHeaderInADropIn",
       Prog::kNri,
       2,
       {"config \"{dir}/config.d/50-deep.toml\"", "the limit is 100"},
       [](World& w) { DeepDropIn(w, "[" + DeepToml(80000) + "]\n"); }},
      {"NriConfigUnknownKey",
       Prog::kNri,
       2,
       {"{config}", "unknown key \"rlimit\""},
       [](World& w) { WriteFile(w.config, "rlimit = [\"memlock=1M\"]\n"); }},
      // ---------------- precreate: keys runc's decoder reads another way ----------------
      {"HookPrecreateRlimitsKeyCaseFold",
       Prog::kHook,
       1,
       {"precreate spec: key \"rlimit\xc5\xbf\" in process differs only by case from \"rlimits\""},
       [](World& w) {
         w.args = {"--config", w.config, "precreate"};
         HookState(w, "{\"process\":{\"args\":[\"sh\"],\"rlimit\xc5\xbf\":[]}}");
       }},
      {"HookPrecreateProcessTwice",
       Prog::kHook,
       1,
       {"precreate spec: key \"process\" appears twice in the spec"},
       [](World& w) {
         w.args = {"--config", w.config, "precreate"};
         HookState(w, R"({"process":{"args":["sh"]},"process":{"args":["sh"]}})");
       }},
      // ---------------- the decision log: whole lines or none ----------------
      {"HookConfigDropInGoneWarnsAndApplies",
       Prog::kHook,
       0,
       {"warning: config drop-in \"{dir}/config.d/20-gone.toml\" is gone"},
       [](World& w) {
         fs::create_directories(w.dir / "config.d");
         fs::create_symlink(w.dir / "config.d/20-gone.toml.tmp", w.dir / "config.d/20-gone.toml");
         w.stdin_data = w.State(std::to_string(w.Live()));
       },
       true},
      {"HookLogOnAFullDiskDropsTheLineWhole",
       Prog::kHook,
       0,
       {"warning: log \"{dir}/full/hook.log\": a line of ", "bytes dropped, nothing written"},
       [](World& w) {
         HookLogOnFullDisk(w);
         w.stdin_data = w.State(std::to_string(w.Live()));
       },
       true},
      // ---------------- oci-prlimit-helper ----------------
      {"HelperTargetExitedBeforeApply",
       Prog::kHelper,
       3,
       {"pid {pid}: no such process"},
       [](World&) {}},
      {"HelperPidZero",
       Prog::kHelper,
       2,
       {"pid 0: refusing"},
       [](World& w) {
         w.args = {"--pid", "0", "memlock=1M"};
       }},
      {"HelperPidOne",
       Prog::kHelper,
       2,
       {"pid 1: refusing"},
       [](World& w) {
         w.args = {"--pid", "1", "memlock=1M"};
       }},
      {"HelperPidNegative",
       Prog::kHelper,
       2,
       {"--pid: \"-5\" is not a process id"},
       [](World& w) {
         w.args = {"--pid", "-5", "memlock=1M"};
       }},
      {"HelperPidString",
       Prog::kHelper,
       2,
       {"--pid: \"abc\" is not a process id"},
       [](World& w) {
         w.args = {"--pid", "abc", "memlock=1M"};
       }},
      {"HelperPidMissing",
       Prog::kHelper,
       2,
       {"--pid"},
       [](World& w) {
         w.args = {"memlock=1M", "--pid"};
       }},
      {"HelperRlimitTypo",
       Prog::kHelper,
       2,
       {"unknown name \"memlok\""},
       [](World& w) {
         w.args = {"--pid", std::to_string(w.Live()), "memlok=1M"};
       }},
      {"HelperSoftAboveHard",
       Prog::kHelper,
       2,
       {"soft 4194304 is greater than hard 1048576"},
       [](World& w) {
         w.args = {"--pid", std::to_string(w.Live()), "memlock=4M:1M"};
       }},
      {"HelperOverflow",
       Prog::kHelper,
       2,
       {"\"99999999999999999999\" overflows 64 bits"},
       [](World& w) {
         w.args = {"--pid", std::to_string(w.Live()), "memlock=99999999999999999999"};
       }},
      {"HelperDuplicate",
       Prog::kHelper,
       2,
       {"memlock is given twice"},
       [](World& w) {
         w.args = {"--pid", std::to_string(w.Live()), "memlock=1M", "RLIMIT_MEMLOCK=2M"};
       }},
      {"HelperHardRaiseWithoutCapability",
       Prog::kHelper,
       4,
       {"pid {live}", "needs CAP_SYS_RESOURCE"},
       [](World& w) {
         w.args = {"--pid", std::to_string(w.Live()), "nofile=1024:4194304"};
       }},
      {"HelperTargetZombie",
       Prog::kHelper,
       3,
       {"pid {zombie}: is a zombie (exited, not yet reaped) before its limits were set"},
       [](World& w) {
         w.args = {"--pid", std::to_string(w.Zombie()), "memlock=1M"};
       }},
      {"HelperTargetZombieGet",
       Prog::kHelper,
       3,
       {"pid {zombie}: is a zombie"},
       [](World& w) {
         w.args = {"--get", "--pid", std::to_string(w.Zombie())};
       }},
      // kthreadd is pid 2 in the initial PID namespace (checked in setup).
      {"HelperTargetKernelThread",
       Prog::kHelper,
       2,
       {"pid 2: refusing to touch a kernel thread"},
       [](World& w) {
         ASSERT_NE(ReadFile("/proc/2/stat").find("(kthreadd)"), std::string::npos)
             << "kthreadd is not pid 2 in this PID namespace";
         w.args = {"--pid", "2", "memlock=1M"};
       }},
      {"HelperTestOnlyFlagUnknownInTheInstalledBinary",
       Prog::kHelper,
       2,
       {"unknown flag \"--test-only-pause-after-pidfd\""},
       [](World& w) {
         w.args = {"--pid", std::to_string(w.Live()), "--test-only-pause-after-pidfd",
                   w.dir / "fifo", "memlock=1M"};
       }},
      {"HelperStateMalformed",
       Prog::kHelper,
       1,
       {"state: not valid JSON"},
       [](World& w) {
         w.args = {"--state", "memlock=1M"};
         w.stdin_data = "{\"pid\":";
       }},
      {"HelperStatePidString",
       Prog::kHelper,
       1,
       {"state.pid: \"12\" is not an integer"},
       [](World& w) {
         w.args = {"--state", "memlock=1M"};
         w.stdin_data = w.State("\"12\"");
       }},
      {"HelperStateOver1MiB",
       Prog::kHelper,
       1,
       {"input is larger than 1048576 bytes"},
       [](World& w) {
         w.args = {"--state", "memlock=1M"};
         w.stdin_data = w.State(w.vars["{pid}"], R"(,"x":")" + Big(2 << 20) + "\"");
       }},
      {"HelperStateDeeplyNested",
       Prog::kHelper,
       1,
       {"state: nested deeper than 64 levels"},
       [](World& w) {
         w.args = {"--state", "memlock=1M"};
         w.stdin_data = w.State(w.vars["{pid}"], R"(,"annotations":)" + Deep());
       }},
      {"HelperStateHugeIdIsCutInTheMessage",
       Prog::kHelper,
       3,
       {"container \"bbbb", "\u2026\" (900000 bytes): pid {pid}: no such process"},
       [](World& w) {
         w.args = {"--state", "memlock=1M"};
         w.stdin_data = R"({"id":")" + std::string(900000, 'b') +
                        R"(","status":"creating","pid":)" + w.vars["{pid}"] + "}";
       }},
      {"HelperStateNewlineInId",
       Prog::kHelper,
       1,
       {"state.id: ", "control character"},
       [](World& w) {
         w.args = {"--state", "memlock=1M"};
         w.stdin_data = R"({"id":"a\nb","status":"creating","pid":)" + w.vars["{pid}"] + "}";
       }},
      {"HelperStateStatusStopped",
       Prog::kHelper,
       1,
       {"state.status: \"stopped\" is too late"},
       [](World& w) {
         w.args = {"--state", "memlock=1M"};
         w.stdin_data = R"({"id":"x","status":"stopped","pid":)" + w.vars["{pid}"] + "}";
       }},
      {"HelperStateTargetExited",
       Prog::kHelper,
       3,
       {"container \"bad-input\": pid {pid}: no such process"},
       [](World& w) {
         w.args = {"--state", "memlock=1M"};
         w.stdin_data = w.State(w.vars["{pid}"]);
       }},
      {"HelperStateLateStage",
       Prog::kHelper,
       2,
       {"poststart"},
       [](World& w) {
         w.args = {"--state", "memlock=1M", "poststart"};
       }},
  };
  return cases;
}

class BadInput : public ::testing::TestWithParam<Case> {};

TEST_P(BadInput, ExactStatusOneLineErrorNothingModified) {
  OCI_RLIMIT_REQUIRE("setpriv", "mkfifo", "dd");
  const Case& c = GetParam();
  World w;
  DefaultWorld(c.prog, w);
  c.setup(w);
  if (HasFatalFailure()) return;

  std::string live_limits_before;
  if (w.live > 0) live_limits_before = ReadFile("/proc/" + std::to_string(w.live) + "/limits");
  const auto before = Snapshot(w.dir.path());

  std::vector<std::string> argv;
  if (w.as_nobody) argv = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"};
  argv.push_back(OurBinary(ProgName(c.prog)));
  argv.insert(argv.end(), w.args.begin(), w.args.end());
  RunOptions opts;
  opts.stdin_data = w.stdin_data;
  opts.env = w.env;
  opts.cwd = w.dir.path();
  opts.timeout_s = 60;
  CmdResult r = RunCmd(argv, opts);

  // 1. The exact exit status.
  EXPECT_EQ(r.status, c.status) << "stderr: " << r.err;

  // 2. One line, from this program, naming what was wrong.
  std::string err = r.err;
  ASSERT_TRUE(err.ends_with("\n")) << "stderr: [" << r.err << "]";
  err.pop_back();
  EXPECT_EQ(err.find('\n'), std::string::npos) << "more than one line: [" << r.err << "]";
  EXPECT_TRUE(err.starts_with(std::string(ProgName(c.prog)) + ": ")) << err;
  EXPECT_EQ(err.find('\0'), std::string::npos) << "a NUL in the message";
  // Echoed values are cut (Quote, JsonQuote): no case makes a long line.
  EXPECT_LT(err.size(), 2048u) << err.substr(0, 300);
  for (const auto& needle : c.needles) {
    std::string n = Replace(needle, w.vars);
    EXPECT_NE(err.find(n), std::string::npos) << "missing [" << n << "] in: " << err;
  }
  EXPECT_EQ(r.out, "") << "stdout";
  RecordProperty("stderr", r.err);

  // 3. Nothing modified, nothing left behind, nothing run.
  const auto after = Snapshot(w.dir.path());
  EXPECT_EQ(TempFiles(after), std::vector<std::string>{});
  EXPECT_EQ(before.size(), after.size());
  for (const auto& [path, desc] : after) {
    auto it = before.find(path);
    if (it == before.end()) {
      ADD_FAILURE() << "new file " << path;
    } else {
      EXPECT_EQ(desc, it->second) << path << " changed";
    }
  }
  EXPECT_FALSE(fs::exists(w.outside / "ran")) << "the real runtime was exec'd";
  if (w.live > 0 && !c.applies) {
    EXPECT_EQ(ReadFile("/proc/" + std::to_string(w.live) + "/limits"), live_limits_before)
        << "the live target's limits changed";
  }
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadInput, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// The table itself: at least 40 cases, over all three programs, unique names.
TEST(BadInputCatalogue, CoversAllThreeProgramsWithAtLeast40Cases) {
  std::map<Prog, int> per;
  std::set<std::string> names;
  for (const auto& c : Cases()) {
    ++per[c.prog];
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_FALSE(c.needles.empty()) << c.name;
  }
  EXPECT_GE(Cases().size(), 40u);
  EXPECT_GE(per[Prog::kHook], 10);
  EXPECT_GE(per[Prog::kRuntime], 10);
  EXPECT_GE(per[Prog::kHelper], 10);
}

}  // namespace
}  // namespace ocirlimit::itest
