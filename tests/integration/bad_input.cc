// The bad-input catalogue's runner (bad_input.h): the World a case starts
// from, the snapshot, the one TEST_P every table instantiates, and the check
// of the tables themselves.
#include "bad_input.h"

#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include "tests/testing/deep_toml.h"
#include "tests/testing/tree_snapshot.h"

namespace ocirlimit::itest::badinput {

namespace fs = std::filesystem;

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
    case Prog::kCli:
      return "oci-rlimit";
  }
  return "?";
}

std::string World::State(const std::string& pid_json, const std::string& extra) const {
  return R"({"ociVersion":"1.0.2","id":"bad-input","status":"creating","pid":)" + pid_json +
         R"(,"bundle":")" + bundle + "\"" + extra + "}";
}

pid_t World::Live() {
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

pid_t World::Zombie() {
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

World::~World() {
  if (zombie > 0) waitpid(zombie, nullptr, 0);
  if (live > 0) {
    kill(live, SIGKILL);
    waitpid(live, nullptr, 0);
  }
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return std::string(info.param.name);
}

std::vector<Case> Join(std::initializer_list<std::vector<Case>> parts) {
  std::vector<Case> out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

const std::vector<Case>& AllCases() {
  static const std::vector<Case> cases =
      Join({HookStateCases(), HookConfigCases(), RuntimeSpecCases(), RuntimeCases(), HelperCases(),
            NriCases(), CliCases()});
  return cases;
}

// ---- shared by the tables ----

void RuntimeConfig(World& w, const std::string& top) {
  WriteFile(w.config, top + "[runtime]\nruntimes = [\"" + (w.outside / "runtime.sh") + "\"]\n");
}

std::string Big(size_t n) { return std::string(n, 'x'); }

std::string Deep(size_t levels) {
  std::string out;
  for (size_t i = 0; i < levels; ++i) out += "{\"a\":";
  out += "1";
  out += std::string(levels, '}');
  return out;
}

std::string DeepSpec() { return R"({"process":{"args":["sh"]},"x-deep":)" + Deep() + "}"; }

std::string DeepToml(int parts) { return testsupport::DeepTomlKey(parts); }

void DeepDropIn(World& w, const std::string& text) {
  fs::create_directories(w.dir / "config.d");
  WriteFile(w.dir / "config.d/50-deep.toml", text);
}

std::string FullDiskLog(World& w) {
  const std::string mnt = w.dir / "full";
  fs::create_directories(mnt);
  EXPECT_EQ(mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k,mode=0755"), 0) << strerror(errno);
  WriteFile(mnt + "/x.log", std::string(4095, 'x') + "\n");
  Sh("dd if=/dev/zero of=" + mnt + "/filler bs=1k 2>/dev/null; sync");
  return mnt + "/x.log";
}

void GoneDropIn(World& w) {
  fs::create_directories(w.dir / "config.d");
  fs::create_symlink(w.dir / "config.d/20-gone.toml.tmp", w.dir / "config.d/20-gone.toml");
}

std::string MemlockIn(const std::string& json_text) {
  Json j = Json::parse(json_text, nullptr, false);
  if (j.is_discarded()) return "not JSON";
  const Json& process = j.contains("process") ? j["process"] : j;
  if (!process.contains("rlimits")) return "none";
  for (const auto& l : process["rlimits"]) {
    if (l.value("type", "") == "RLIMIT_MEMLOCK") {
      return std::to_string(l["soft"].get<uint64_t>()) + ":" +
             std::to_string(l["hard"].get<uint64_t>());
    }
  }
  return "none";
}

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

void HookState(World& w, const std::string& state) { w.stdin_data = state; }

void ForNobody(World& w, const std::string& path) {
  chmod(w.dir.path().c_str(), 0711);
  chmod(path.c_str(), 0600);
  w.as_nobody = true;
}

namespace {

// A pid that belonged to a process which has exited and been reaped.
pid_t ReapedPid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  int st = 0;
  waitpid(pid, &st, 0);
  return pid;
}

// Defaults per program; a case's setup then changes what it tests.
void DefaultWorld(Prog prog, World& w) {
  fs::create_directories(w.bundle);
  WriteFile(w.bundle + "/config.json", kMinimalSpec);
  const pid_t reaped = ReapedPid();
  w.vars["{pid}"] = std::to_string(reaped);
  w.vars["{dir}"] = w.dir.path();
  w.vars["{bundle}"] = w.bundle;
  w.vars["{config}"] = w.config;
  w.vars["{outside}"] = w.outside.path();
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
    case Prog::kCli:
      WriteFile(w.config, "rlimits = [\"memlock=1M:4M\"]\n");
      w.args = {"validate", "--config", w.config};
      break;
  }
}

// ---- the snapshot ----

std::vector<std::string> TempFiles(const testsupport::Tree& snap) {
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

}  // namespace

TEST_P(BadInput, ExactStatusOneLineErrorNothingModified) {
  OCI_RLIMIT_REQUIRE("setpriv", "mkfifo", "dd");
  const Case& c = GetParam();
  World w;
  DefaultWorld(c.prog, w);
  c.setup(w);
  if (HasFatalFailure()) return;

  std::string live_limits_before;
  if (w.live > 0) live_limits_before = ReadFile("/proc/" + std::to_string(w.live) + "/limits");
  const auto before = testsupport::SnapshotTree(w.dir.path());

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

  // 2. One line, from this program, naming what was wrong: on stderr, or
  // in the log the program keeps it for (stderr then empty).
  std::string err = r.err;
  if (!c.line_in.empty()) {
    EXPECT_EQ(r.err, "") << "stderr";
    err = ReadFile(Replace(c.line_in, w.vars));
  }
  ASSERT_TRUE(err.ends_with("\n")) << "stderr: [" << r.err << "]";
  err.pop_back();
  EXPECT_EQ(err.find('\n'), std::string::npos) << "more than one line: [" << r.err << "]";
  if (c.line_in.empty()) {
    EXPECT_TRUE(err.starts_with(std::string(ProgName(c.prog)) + ": ")) << err;
  }
  EXPECT_EQ(err.find('\0'), std::string::npos) << "a NUL in the message";
  // Echoed values are cut (Quote, JsonQuote): no case makes a long line.
  EXPECT_LT(err.size(), 2048u) << err.substr(0, 300);
  for (const auto& needle : c.needles) {
    std::string n = Replace(needle, w.vars);
    EXPECT_NE(err.find(n), std::string::npos) << "missing [" << n << "] in: " << err;
  }
  if (!c.prints) {
    EXPECT_EQ(r.out, "") << "stdout";
  }
  RecordProperty("stderr", r.err);

  // 3. Nothing modified, nothing left behind, nothing run.
  const auto after = testsupport::SnapshotTree(w.dir.path());
  EXPECT_EQ(TempFiles(after), std::vector<std::string>{});
  // Every entry's kind, bytes, mode, owner, inode and times (directories:
  // all but the times; their entries are compared instead).
  std::vector<std::string> changed = testsupport::TreeDifferences(before, after);
  std::erase_if(changed, [&](const std::string& d) {
    return std::any_of(c.rewrites.begin(), c.rewrites.end(),
                       [&](const std::string& p) { return d.starts_with("changed: " + p + " ("); });
  });
  EXPECT_EQ(changed, std::vector<std::string>{});
  if (c.prog == Prog::kRuntime && c.applies) {
    EXPECT_TRUE(fs::exists(w.outside / "ran")) << "the runtime was not exec'd";
  } else {
    EXPECT_FALSE(fs::exists(w.outside / "ran")) << "the real runtime was exec'd";
  }
  if (w.live > 0 && !c.applies) {
    EXPECT_EQ(ReadFile("/proc/" + std::to_string(w.live) + "/limits"), live_limits_before)
        << "the live target's limits changed";
  }
  if (c.then) c.then(w, r);
}

// The table itself: at least 40 cases, over all three programs, unique names.
TEST(BadInputCatalogue, CoversAllThreeProgramsWithAtLeast40Cases) {
  std::map<Prog, int> per;
  std::set<std::string> names;
  for (const auto& c : AllCases()) {
    ++per[c.prog];
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_FALSE(c.needles.empty()) << c.name;
  }
  EXPECT_GE(AllCases().size(), 40u);
  EXPECT_GE(per[Prog::kHook], 10);
  EXPECT_GE(per[Prog::kRuntime], 10);
  EXPECT_GE(per[Prog::kHelper], 10);
}

}  // namespace ocirlimit::itest::badinput
