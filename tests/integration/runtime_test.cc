// oci-rlimit-runtime in front of real runc and crun, called the way
// containerd, docker and podman call a runtime: what the container's own
// process (and an exec'd one) reads from /proc/self/limits.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "harness.h"

namespace ocirlimit::itest {
namespace {

constexpr const char* kNofile = "Max open files";
constexpr Limit kHost{8 << 20, 8 << 20};
constexpr Limit kConfigured{1 << 20, 4 << 20};
constexpr const char* kConfigured1M4M = "rlimits = [\"memlock=1M:4M\"]\n";

RunOptions WithEnv(std::vector<std::string> env) {
  RunOptions o;
  o.env = std::move(env);
  return o;
}

// Every row of /proc/self/limits but memlock, to show that the wrapper
// changed nothing else.
std::string RowsButMemlock(const std::string& limits) {
  std::istringstream in(limits);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(kMemlock)) out += line + "\n";
  }
  return out;
}

class RuntimeTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("runc", GetParam(), "unshare", "prlimit", "mkfifo");
    bundle_ = dir_ / "bundle";
    state_ = dir_ / "state";
    spec_ = MakeBundle(bundle_, {"cat", "/proc/self/limits"});
    runtime_ = GetParam() == "crun" ? CrunCommand(dir_.path()) : *Which("runc");
  }

  void TearDown() override {
    for (const auto& id : started_) Runtime({"delete", "--force", id});
  }

  std::string config_path() const { return dir_ / "config.toml"; }
  std::string wrapper() const { return OurBinary("oci-rlimit-runtime"); }

  // The wrapper always finds this test's runtime: runc itself, or the crun
  // work-around script, whose name says nothing (so it is asked --version).
  void UseConfig(const std::string& toml) {
    WriteFile(config_path(), toml + "[runtime]\nruntimes = [\"" + runtime_ + "\"]\n");
  }

  RunOptions Env() const { return WithEnv({"OCI_RLIMIT_CONFIG=" + config_path()}); }

  std::vector<std::string> Argv(const std::string& program, const std::vector<std::string>& args,
                                const std::vector<std::string>& prefix = {}) const {
    std::vector<std::string> argv = prefix;
    argv.insert(argv.end(), {program, "--root", state_});
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  CmdResult Wrapper(const std::vector<std::string>& args,
                    const std::vector<std::string>& prefix = {}) {
    return RunCmd(Argv(wrapper(), args, prefix), Env());
  }
  CmdResult Runtime(const std::vector<std::string>& args) { return RunCmd(Argv(runtime_, args)); }

  std::string NewId() {
    started_.push_back(UniqueId("rt"));
    return started_.back();
  }

  // `run` of the bundle; returns what the container printed.
  CmdResult RunBundle(const std::string& program, const std::vector<std::string>& prefix = {}) {
    WriteSpec(bundle_, spec_);
    return RunCmd(Argv(program, {"run", "--bundle", bundle_, NewId()}, prefix), Env());
  }

  // A `sleep 30` container started by the plain runtime, for exec tests;
  // its stdio is /dev/null so that nothing here waits for it.
  std::string StartSleeper() {
    spec_["process"]["args"] = {"sleep", "30"};
    WriteSpec(bundle_, spec_);
    std::string id = NewId();
    CmdResult r = Detached(Argv(runtime_, {"run", "-d", "--bundle", bundle_, id}));
    EXPECT_EQ(r.status, 0) << r.err;
    return id;
  }

  // Runs argv with stdio away from our pipes, which a created or detached
  // container would otherwise hold open; its stderr still comes back in err.
  CmdResult Detached(const std::vector<std::string>& argv) {
    const std::string err = dir_ / "detached.err";
    std::vector<std::string> sh = {"sh", "-c", "\"$@\" </dev/null >/dev/null 2>\"$ERR\"", "sh"};
    sh.insert(sh.end(), argv.begin(), argv.end());
    RunOptions opts = Env();
    opts.env.push_back("ERR=" + err);
    CmdResult r = RunCmd(sh, opts);
    r.err += ReadFile(err);
    return r;
  }

  // A --process file: the container's process running `cat /proc/self/limits`.
  std::string ProcessFile(const Json& rlimits) {
    Json p = spec_["process"];
    p["args"] = {"cat", "/proc/self/limits"};
    if (rlimits.is_null()) {
      p.erase("rlimits");
    } else {
      p["rlimits"] = rlimits;
    }
    std::string path = dir_ / ("process-" + std::to_string(files_++) + ".json");
    WriteFile(path, p.dump(2));
    return path;
  }

  TempDir dir_;
  std::string bundle_;
  std::string state_;
  std::string runtime_;
  Json spec_;
  std::vector<std::string> started_;
  int files_ = 0;
};

TEST_P(RuntimeTest, RunSetsTheConfiguredMemlock) {
  UseConfig(kConfigured1M4M);
  CmdResult plain = RunBundle(runtime_);
  ASSERT_EQ(plain.status, 0) << plain.err;
  ASSERT_EQ(LimitRow(plain.out, kMemlock), kHost) << "host baseline changed";
  CmdResult r = RunBundle(wrapper());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LimitRow(r.out, kMemlock), kConfigured);
  EXPECT_EQ(RowsButMemlock(r.out), RowsButMemlock(plain.out));
}

// Raising a soft limit up to the hard one needs no CAP_SYS_RESOURCE.
TEST_P(RuntimeTest, RunRaisesTheSoftLimitUpToTheHardOne) {
  UseConfig("rlimits = [\"memlock=8M\"]\n");
  const std::vector<std::string> low = {"prlimit", "--memlock=1048576:8388608"};
  CmdResult plain = RunCmd(Argv(runtime_, {"run", "--bundle", bundle_, NewId()}, low));
  ASSERT_EQ(plain.status, 0) << plain.err;
  ASSERT_EQ(LimitRow(plain.out, kMemlock), (Limit{1 << 20, 8 << 20})) << "without the wrapper";
  CmdResult r = RunBundle(wrapper(), low);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LimitRow(r.out, kMemlock), kHost);
}

TEST_P(RuntimeTest, CreateThenStart) {
  UseConfig(kConfigured1M4M);
  const std::string id = NewId();
  const std::string fifo = dir_ / "out.fifo";
  // The container's stdout is a fifo: its reader sees EOF once create has
  // exited and the container has run, so nothing here waits on a clock.
  CmdResult r = RunCmd(
      {"sh", "-c",
       "mkfifo \"$1\" || exit 3; cat \"$1\" & "
       "W=$2; shift 2; "
       "\"$W\" \"$@\" create --bundle \"$B\" \"$ID\" >\"$FIFO\" </dev/null || "
       "exit 1; \"$W\" \"$@\" start \"$ID\" || exit 2; wait",
       "sh", fifo, wrapper(), "--root", state_},
      WithEnv({"OCI_RLIMIT_CONFIG=" + config_path(), "B=" + bundle_, "ID=" + id, "FIFO=" + fifo}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LimitRow(r.out, kMemlock), kConfigured) << r.out;
}

// Unlike the hook, whose value runc overwrites with the spec's after hooks,
// the wrapper edits the spec itself: the admin's config wins on both.
TEST_P(RuntimeTest, SameTypeSpecEntryIsReplaced) {
  spec_["process"]["rlimits"].push_back(
      {{"type", "RLIMIT_MEMLOCK"}, {"hard", 8 << 20}, {"soft", 2 << 20}});
  UseConfig(kConfigured1M4M);
  CmdResult plain = RunBundle(runtime_);
  ASSERT_EQ(LimitRow(plain.out, kMemlock), (Limit{2 << 20, 8 << 20})) << plain.err;
  CmdResult r = RunBundle(wrapper());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LimitRow(r.out, kMemlock), kConfigured);
  Json written = ReadSpec(bundle_);
  EXPECT_EQ(written["process"]["rlimits"].size(), 2u) << written["process"]["rlimits"].dump();
}

TEST_P(RuntimeTest, CreateKeepsModeOwnerAndEveryOtherField) {
  spec_["x-vendor"] = {{"big", 18446744073709551615ULL}, {"neg", -5}, {"f", 1.5}};
  spec_["process"]["rlimits"].push_back(
      {{"type", "RLIMIT_CORE"}, {"hard", 18446744073709551615ULL}, {"soft", 0}});
  UseConfig(kConfigured1M4M);
  Json want = spec_;
  want["process"]["rlimits"].push_back(
      {{"type", "RLIMIT_MEMLOCK"}, {"hard", 4 << 20}, {"soft", 1 << 20}});
  // Not 0600, which mkostemp gives the temp file anyway: a lost mode must
  // show. 06644 also shows setuid/setgid surviving the chown.
  for (mode_t mode : {0644u, 0640u, 06644u}) {
    WriteSpec(bundle_, spec_);
    ASSERT_EQ(chown((bundle_ + "/config.json").c_str(), 65534, 65534), 0);
    ASSERT_EQ(chmod((bundle_ + "/config.json").c_str(), mode), 0);
    const std::string id = NewId();
    CmdResult r = Detached(Argv(wrapper(), {"create", "--bundle", bundle_, id}));
    ASSERT_EQ(r.status, 0) << r.err;
    struct stat st {};
    ASSERT_EQ(stat((bundle_ + "/config.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, mode) << std::oct << mode;
    EXPECT_EQ(st.st_uid, 65534u);
    EXPECT_EQ(st.st_gid, 65534u);
    EXPECT_EQ(ReadSpec(bundle_), want) << std::oct << mode;
  }
}

// Measured here: runc 1.1.5 and crun 1.8.1 both give a `exec --process`
// process exactly the file's rlimits; with none, it keeps the caller's own
// limits, not the container's spec list. So the wrapper adds memlock to the
// file's list and must change nothing else.
TEST_P(RuntimeTest, ExecWithoutRlimitsKeepsEveryOtherLimit) {
  spec_["process"]["rlimits"] =
      Json::array({{{"type", "RLIMIT_NOFILE"}, {"hard", 1000}, {"soft", 1000}}});
  UseConfig(kConfigured1M4M);
  const std::string id = StartSleeper();
  CmdResult plain = Runtime({"exec", "--process", ProcessFile(nullptr), id});
  ASSERT_EQ(plain.status, 0) << plain.err;
  ASSERT_EQ(LimitRow(plain.out, kMemlock), kHost);
  ASSERT_NE(LimitRow(plain.out, kNofile), (Limit{1000, 1000}))
      << GetParam() << " now gives an exec'd process the container's rlimits: the wrapper must "
      << "copy them into an empty process list first (see docs/runtime-mode.md)";
  for (const Json& rlimits : {Json(nullptr), Json::array()}) {
    CmdResult r = Wrapper({"exec", "--process", ProcessFile(rlimits), id});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(LimitRow(r.out, kMemlock), kConfigured) << rlimits.dump();
    EXPECT_EQ(RowsButMemlock(r.out), RowsButMemlock(plain.out)) << rlimits.dump();
  }
}

TEST_P(RuntimeTest, ExecWithRlimitsMergesIntoThem) {
  UseConfig(kConfigured1M4M);
  const std::string id = StartSleeper();
  const std::string process = ProcessFile(
      Json::array({{{"type", "RLIMIT_NOFILE"}, {"hard", 512}, {"soft", 512}},
                   {{"type", "RLIMIT_MEMLOCK"}, {"hard", 8 << 20}, {"soft", 2 << 20}}}));
  CmdResult r = Wrapper({"exec", "-p", process, id});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LimitRow(r.out, kMemlock), kConfigured);
  EXPECT_EQ(LimitRow(r.out, kNofile), (Limit{512, 512}));
}

// A hard limit above the one in force (8M here, no CAP_SYS_RESOURCE): the
// wrapper says so in the one message every path gives, before the runtime
// runs, on run (create) and on exec; runc's own `error setting rlimit type 8`
// is never all the user sees.
TEST_P(RuntimeTest, AnUnraisableLimitFailsCreateAndExecWithTheOneMessage) {
  const std::string msg =
      "config entry memlock=unlimited: the hard limit in force is 8M, and raising it needs "
      "CAP_SYS_RESOURCE, which oci-rlimit-runtime does not have; memlock=8M would work (or run "
      "the container engine with CAP_SYS_RESOURCE)";
  UseConfig("rlimits = [\"memlock=unlimited\"]\n");
  const std::vector<std::string> at8m = {"prlimit", "--memlock=8388608:8388608"};
  CmdResult run = RunBundle(wrapper(), at8m);
  EXPECT_NE(run.status, 0);
  EXPECT_EQ(run.out.find(kMemlock), std::string::npos) << "the container must not have run";
  EXPECT_NE(run.err.find("oci-rlimit-runtime: run: " + msg), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("error setting rlimit"), std::string::npos) << run.err;
  const std::string id = StartSleeper();
  CmdResult exec = Wrapper({"exec", "--process", ProcessFile(nullptr), id}, at8m);
  EXPECT_NE(exec.status, 0);
  EXPECT_NE(exec.err.find("oci-rlimit-runtime: exec: " + msg), std::string::npos) << exec.err;
}

TEST_P(RuntimeTest, BrokenConfigFailsRunAndSaysWhyInTheJsonLog) {
  UseConfig("rlimits = [\"memlok=1M\"]\n");
  WriteSpec(bundle_, spec_);
  const std::string before = ReadFile(bundle_ + "/config.json");
  const std::string log = dir_ / "runtime-log.json";
  CmdResult r =
      Wrapper({"--log", log, "--log-format", "json", "run", "--bundle", bundle_, NewId()});
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.out.find(kMemlock), std::string::npos) << "the container must not have run";
  const std::string msg = "oci-rlimit-runtime: config \"" + config_path() +
                          "\": rlimits: rlimit \"memlok=1M\": unknown name \"memlok\"";
  EXPECT_TRUE(r.err.starts_with(msg)) << r.err;
  std::string line = ReadFile(log);
  ASSERT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
  Json j = Json::parse(line, nullptr, false);
  ASSERT_TRUE(j.is_object()) << line;
  EXPECT_EQ(j["level"], "error");
  EXPECT_EQ(j["msg"].get<std::string>() + "\n", r.err);
  EXPECT_EQ(j["time"].get<std::string>().size(), 20u) << line;
  EXPECT_EQ(ReadFile(bundle_ + "/config.json"), before);
}

TEST_P(RuntimeTest, MalformedSpecFailsCreateAndIsLeftAlone) {
  UseConfig(kConfigured1M4M);
  const std::string bad = "{\"process\": {\"rlimits\": [{\"type\": \"RLIMIT_CORE\"}]}}";
  WriteFile(bundle_ + "/config.json", bad);
  CmdResult r = Wrapper({"create", "--bundle", bundle_, NewId()});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("oci-rlimit-runtime: create: \"" + bundle_ +
                       "/config.json\": process.rlimits[0].soft: missing"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(ReadFile(bundle_ + "/config.json"), bad);
}

// state and delete reach the runtime untouched: not even config.json is read.
TEST_P(RuntimeTest, StateAndDeletePassThrough) {
  UseConfig(kConfigured1M4M);
  const std::string id = StartSleeper();
  WriteFile(bundle_ + "/config.json", "not json");
  CmdResult state = Wrapper({"state", id});
  ASSERT_EQ(state.status, 0) << state.err;
  Json j = Json::parse(state.out, nullptr, false);
  EXPECT_EQ(j.value("id", ""), id) << state.out;
  EXPECT_EQ(j.value("status", ""), "running") << state.out;
  CmdResult del = Wrapper({"delete", "--force", id});
  ASSERT_EQ(del.status, 0) << del.err;
  EXPECT_NE(Runtime({"state", id}).status, 0) << "deleted";
  CmdResult missing = Wrapper({"state", id});
  EXPECT_NE(missing.status, 0);
  EXPECT_EQ(missing.err.find("oci-rlimit-runtime"), std::string::npos)
      << "the runtime's own error, not ours: " << missing.err;
}

// One admission step: the hook and the wrapper give the same outcome for the
// same config and bundle. A malformed request under on-error = "warn" is the
// request's error: the container starts with the top-level limits and a
// warning, on both paths.
TEST_P(RuntimeTest, MalformedRequestWithWarnKeepsTheTopLevelLimitsOnHookAndWrapperPaths) {
  UseConfig(
      "on-error = \"warn\"\nrlimits = [\"memlock=1M:4M\"]\n"
      "[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\n");
  spec_["annotations"]["oci-rlimit.io/rlimits"] = "memlock=lots";

  CmdResult wrapped = RunBundle(wrapper());
  ASSERT_EQ(wrapped.status, 0) << wrapped.err;
  EXPECT_EQ(LimitRow(wrapped.out, kMemlock), (Limit{1 << 20, 4 << 20})) << "the top-level limit";
  EXPECT_NE(wrapped.err.find("oci-rlimit-runtime: warning: on-error = \"warn\""), std::string::npos)
      << wrapped.err;

  spec_["hooks"]["createRuntime"] =
      Json::array({HookEntry(OurBinary("oci-rlimit-hook"),
                             {"oci-rlimit-hook", "--config", config_path(), "createRuntime"})});
  CmdResult hooked = RunBundle(runtime_);
  ASSERT_EQ(hooked.status, 0) << hooked.err;
  EXPECT_EQ(LimitRow(hooked.out, kMemlock), (Limit{1 << 20, 4 << 20})) << "the top-level limit";
  EXPECT_EQ(LimitRow(hooked.out, kMemlock), LimitRow(wrapped.out, kMemlock));
}

// Exec gets what init got: a granted request reaches an exec session, which
// the wrapper decides from the container's own spec (found through
// `RUNTIME state`), not from the --process file alone.
TEST_P(RuntimeTest, GrantedRequestReachesAnExecThroughTheWrapper) {
  UseConfig("[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\n");
  spec_["annotations"]["oci-rlimit.io/rlimits"] = "memlock=2M:4M";
  spec_["process"]["args"] = {"sleep", "30"};
  WriteSpec(bundle_, spec_);
  const std::string id = NewId();
  CmdResult created = Detached(Argv(wrapper(), {"create", "--bundle", bundle_, id}));
  ASSERT_EQ(created.status, 0) << created.err;
  CmdResult started = Wrapper({"start", id});
  ASSERT_EQ(started.status, 0) << started.err;

  CmdResult r = Wrapper({"exec", "--process", ProcessFile(nullptr), id});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LimitRow(r.out, kMemlock), (Limit{2 << 20, 4 << 20})) << r.out;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(Runtimes, RuntimeTest, ::testing::Values("runc", "crun"),
                         [](const auto& info) { return info.param; });

// A `runc` on PATH that is a symlink to the wrapper (one way to install it)
// is skipped, so the wrapper never execs itself.
TEST(RuntimeResolution, SymlinkToItselfOnPathIsSkipped) {
  OCI_RLIMIT_REQUIRE("runc");
  TempDir dir;
  const std::string bin = dir / "bin";
  std::filesystem::create_directories(bin);
  std::filesystem::create_symlink(OurBinary("oci-rlimit-runtime"), bin + "/runc");
  std::string bundle = dir / "bundle";
  MakeBundle(bundle, {"cat", "/proc/self/limits"});
  WriteFile(dir / "config.toml",
            "rlimits = [\"memlock=1M:4M\"]\n[runtime]\nruntimes = [\"runc\"]\n");
  const char* path = std::getenv("PATH");
  CmdResult r =
      RunCmd({bin + "/runc", "--root", dir / "state", "run", "--bundle", bundle, UniqueId("self")},
             WithEnv({"OCI_RLIMIT_CONFIG=" + (dir / "config.toml"),
                      "PATH=" + bin + ":" + (path ? path : "/usr/sbin:/usr/bin")}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LimitRow(r.out, kMemlock), kConfigured);
}

}  // namespace
}  // namespace ocirlimit::itest

namespace ocirlimit::itest {
namespace {

// The real binary describes itself with no runtime anywhere on PATH (a newcomer's first `--help`):
// its own usage, config lookup and version; --version notes the missing runtime.
TEST(RuntimeSelfDescription, HelpAndVersionWithNoRuncOnPath) {
  TempDir dir;  // an empty PATH directory and a config naming one limit
  const std::string cfg = dir / "config.toml";
  WriteFile(cfg, kConfigured1M4M);
  const RunOptions no_runtime = WithEnv({"PATH=" + dir.path(), "OCI_RLIMIT_CONFIG=" + cfg});
  const std::string version = "oci-rlimit-runtime version ";

  CmdResult help = RunCmd({OurBinary("oci-rlimit-runtime"), "--oci-rlimit-help"}, no_runtime);
  EXPECT_EQ(help.status, 0) << help.err;
  EXPECT_EQ(help.err, "");
  for (const std::string& piece : std::vector<std::string>{
           "usage: oci-rlimit-runtime [--config PATH] [RUNTIME-FLAGS] COMMAND", "--oci-rlimit-help",
           "$OCI_RLIMIT_CONFIG, else /etc/oci-rlimit/config.toml",
           "Here: config " + cfg + ": 1 default limit(s), 0 rule(s)",
           "runtime: none: ", "(PATH=" + dir.path() + ")", version}) {
    EXPECT_NE(help.out.find(piece), std::string::npos) << piece << "\n" << help.out;
  }

  // No runtime: our line, then a one-line error and exit 1 (CRI-O and docker
  // run --version to check a runtime).
  CmdResult v = RunCmd({OurBinary("oci-rlimit-runtime"), "--version"}, no_runtime);
  EXPECT_EQ(v.status, 1) << v.err;
  EXPECT_TRUE(v.out.starts_with(version)) << v.out;
  EXPECT_EQ(std::count(v.out.begin(), v.out.end(), '\n'), 1) << v.out;
  EXPECT_EQ(std::count(v.err.begin(), v.err.end(), '\n'), 1) << v.err;
  EXPECT_NE(v.err.find("oci-rlimit-runtime: no runtime to ask for its version: "),
            std::string::npos)
      << v.err;
}

// With runc on PATH, our line comes first, then runc's own.
TEST(RuntimeSelfDescription, VersionPrintsOursThenRuncs) {
  OCI_RLIMIT_REQUIRE("runc");
  CmdResult v = RunCmd({OurBinary("oci-rlimit-runtime"), "--version"});
  CmdResult runc = RunCmd({"runc", "--version"});
  ASSERT_EQ(runc.status, 0);
  EXPECT_EQ(v.status, 0) << v.err;
  const size_t nl = v.out.find('\n');
  ASSERT_NE(nl, std::string::npos) << v.out;
  EXPECT_TRUE(v.out.starts_with("oci-rlimit-runtime version ")) << v.out;
  EXPECT_EQ(v.out.substr(nl + 1), runc.out);
}

}  // namespace
}  // namespace ocirlimit::itest
