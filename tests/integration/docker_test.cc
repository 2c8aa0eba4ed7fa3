// oci-rlimit-runtime under a real dockerd (daemon.json "runtimes"), started by
// the suite: what `docker run` and `docker exec` processes read from
// /proc/self/limits.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <sstream>

#include "daemons.h"
#include "harness.h"

namespace ocirlimit::itest {
namespace {

constexpr const char* kGoodConfig = "rlimits = [\"memlock=1M:4M\"]\n";
constexpr Limit kHost{8 << 20, 8 << 20};
constexpr Limit kConfigured{1 << 20, 4 << 20};
// A same-type `--ulimit` that runc can set here (not above the host's hard limit).
constexpr const char* kUlimit = "memlock=2097152:8388608";
constexpr Limit kUlimitSeen{2 << 20, 8 << 20};
// A request under the admin's ceiling, below the daemon's hard limit (no
// CAP_SYS_RESOURCE here), and unlike both the host's and the default.
constexpr const char* kRequestConfig =
    "rlimits = [\"memlock=1M:4M\"]\n[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\n";
constexpr const char* kRequestKey = "oci-rlimit.io/rlimits";
constexpr const char* kRequestValue = "memlock=2M:6M";
constexpr Limit kRequested{2 << 20, 6 << 20};

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The lines of the first ```sh block after the README.md line that starts
// with `lead`.
std::vector<std::string> ReadmeBlockAfter(const std::string& lead) {
  std::istringstream in(ReadFile(std::string(OCI_RLIMIT_SOURCE_DIR) + "/README.md"));
  std::vector<std::string> block;
  bool found = false;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (!found) {
      found = line.starts_with(lead);
    } else if (!inside) {
      inside = line == "```sh";
    } else if (line == "```") {
      break;
    } else {
      block.push_back(line);
    }
  }
  return block;
}

// What a README line echoes into a file: the text between `echo '` and `' >`.
std::string Echoed(const std::string& line) {
  const std::string open = "echo '";
  const size_t begin = line.find(open);
  const size_t end = line.find("' >");
  if (begin == std::string::npos || end == std::string::npos || end < begin) return "";
  return line.substr(begin + open.size(), end - begin - open.size());
}

// A command line's words as sh splits them, for lines whose only quotes are '...'.
std::vector<std::string> ShellWords(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool quoted = false;
  bool any = false;
  for (char c : line) {
    if (c == '\'') {
      quoted = !quoted;
      any = true;
    } else if (c == ' ' && !quoted) {
      if (any) words.push_back(word);
      word.clear();
      any = false;
    } else {
      word += c;
      any = true;
    }
  }
  if (any) words.push_back(word);
  return words;
}

// One dockerd for the suite. Its environment names a config file that each
// test rewrites: the wrapper reads it afresh on every runtime call.
class DockerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (MissingPrerequisite({"dockerd", "runc"})) return;
    suite_dir_ = std::make_unique<TempDir>();
    WriteFile(ConfigPath(), kGoodConfig);
    WriteFile(AnnotatingWrapper(), AnnotatingScript(), 0755);
    Dockerd::Options opts;
    // oci-rlimit-flag: the wrapper's own --config through daemon.json's
    // runtimeArgs, which docker puts before runc's argv.
    WriteFile(FlagConfigPath(), "rlimits = [\"memlock=2M:6M\"]\n");
    opts.daemon_json = Json{{"runtimes",
                             {{"oci-rlimit", {{"path", Wrapper()}}},
                              {"oci-rlimit-annotated", {{"path", AnnotatingWrapper()}}},
                              {"oci-rlimit-flag",
                               {{"path", Wrapper()},
                                {"runtimeArgs", Json::array({"--config", FlagConfigPath()})}}}}}}
                           .dump(2);
    opts.env = {"OCI_RLIMIT_CONFIG=" + ConfigPath()};
    dockerd_ = std::make_unique<Dockerd>(opts);
  }
  static void TearDownTestSuite() {
    dockerd_.reset();
    suite_dir_.reset();
  }

  void SetUp() override {
    OCI_RLIMIT_REQUIRE("dockerd", "runc");
    ASSERT_TRUE(dockerd_ && dockerd_->ok()) << (dockerd_ ? dockerd_->error() : "no dockerd");
    WriteFile(ConfigPath(), kGoodConfig);
  }

  static std::string ConfigPath() { return *suite_dir_ / "config.toml"; }
  static std::string FlagConfigPath() { return *suite_dir_ / "flag.toml"; }
  static std::string Wrapper() { return OurBinary("oci-rlimit-runtime"); }
  // docker 20.10 has no `docker run --annotation` (docker 24 and later put
  // it into config.json, as containerd, CRI-O and podman do). This runtime
  // plays that part: at create it adds the request annotation to the
  // bundle's config.json, then it is oci-rlimit-runtime with the same argv.
  static std::string AnnotatingWrapper() { return *suite_dir_ / "annotating-runtime"; }
  static std::string AnnotatingScript() {
    return "#!/bin/sh\n"
           "prev=; bundle=; create=\n"
           "for a in \"$@\"; do\n"
           "  [ \"$prev\" = --bundle ] && bundle=$a\n"
           "  [ \"$a\" = create ] && create=1\n"
           "  prev=$a\n"
           "done\n"
           "if [ -n \"$create\" ] && [ -n \"$bundle\" ]; then\n"
           "  sed -i '1s|^{|{\"annotations\":{\"" +
           std::string(kRequestKey) + "\":\"" + kRequestValue +
           "\"},|' \"$bundle/config.json\" || exit 1\n"
           "fi\n"
           "exec " +
           Wrapper() + " \"$@\"\n";
  }
  static void AssertWrapperBuilt() {
    ASSERT_TRUE(Which(Wrapper())) << Wrapper() << " has not been built";
  }

  // `docker run -d ... sleep 60`; the name, removed at the end of the test.
  std::string StartDetached(const std::vector<std::string>& flags) {
    std::string name = UniqueId("docker");
    std::vector<std::string> args = {"run", "-d", "--network", "none", "--name", name};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {kBusyboxImage, "sleep", "60"});
    CmdResult r = dockerd_->Docker(args);
    EXPECT_EQ(r.status, 0) << r.err;
    started_.push_back(name);
    return name;
  }

  std::optional<Limit> ExecMemlock(const std::string& name, const std::string& file) {
    return MemlockOf(dockerd_->Docker({"exec", name, "cat", file}));
  }

  void TearDown() override {
    for (const auto& name : started_) dockerd_->Docker({"rm", "-f", name});
    // The suite's daemon outlives the test: leave it a config its runtime calls can use.
    if (suite_dir_) WriteFile(ConfigPath(), kGoodConfig);
  }

  static inline std::unique_ptr<TempDir> suite_dir_;
  static inline std::unique_ptr<Dockerd> dockerd_;
  std::vector<std::string> started_;
};

TEST_F(DockerTest, RunWithTheWrapperRuntimeSeesTheConfiguredLimit) {
  AssertWrapperBuilt();
  ASSERT_EQ(MemlockOf(dockerd_->Run({}, kCatLimits)), kHost) << "baseline: docker's own runc";
  EXPECT_EQ(MemlockOf(dockerd_->Run({"--runtime", "oci-rlimit"}, kCatLimits)), kConfigured);
}

// --config in daemon.json's runtimeArgs wins over dockerd's $OCI_RLIMIT_CONFIG,
// on create and on exec, and runc never sees it (it would refuse the flag).
TEST_F(DockerTest, RuntimeArgsConfigIsTheWrappersOwn) {
  AssertWrapperBuilt();
  std::string name = StartDetached({"--runtime", "oci-rlimit-flag"});
  const Limit flag{2 << 20, 6 << 20};  // flag.toml's, not config.toml's kConfigured
  EXPECT_EQ(ExecMemlock(name, "/proc/1/limits"), flag) << "the init process";
  EXPECT_EQ(ExecMemlock(name, "/proc/self/limits"), flag) << "the exec'd process";
}

TEST_F(DockerTest, ExecIntoAWrapperContainerSeesTheConfiguredLimit) {
  AssertWrapperBuilt();
  std::string name = StartDetached({"--runtime", "oci-rlimit"});
  EXPECT_EQ(ExecMemlock(name, "/proc/1/limits"), kConfigured) << "the init process";
  EXPECT_EQ(ExecMemlock(name, "/proc/self/limits"), kConfigured) << "the exec'd process";

  // The same container, with nothing configured at exec time: the exec gets
  // the decision recorded at create (docs/runtime-mode.md, one decision per
  // container), not what the config says now.
  WriteFile(ConfigPath(), "rlimits = []\n");
  EXPECT_EQ(ExecMemlock(name, "/proc/self/limits"), kConfigured)
      << "a running container keeps the decision recorded at create, whatever the config says now";
}

// With --ulimit, docker's stored spec (and so the exec process file) carries
// its own memlock entry: the exec'd process gets it unless the wrapper edits
// the --process file.
TEST_F(DockerTest, ExecWithASameTypeUlimitSeesTheConfiguredLimit) {
  AssertWrapperBuilt();
  std::string baseline = StartDetached({"--ulimit", kUlimit});
  ASSERT_EQ(ExecMemlock(baseline, "/proc/self/limits"), kUlimitSeen) << "baseline: docker's runc";
  std::string name = StartDetached({"--runtime", "oci-rlimit", "--ulimit", kUlimit});
  EXPECT_EQ(ExecMemlock(name, "/proc/1/limits"), kConfigured) << "the init process";
  EXPECT_EQ(ExecMemlock(name, "/proc/self/limits"), kConfigured) << "the exec'd process";
}

// Exec gets what init got: a granted request (the container's annotation)
// reaches a `docker exec` session. docker builds the exec process from its
// stored spec, which carries no annotations; the wrapper decides from the
// container's own config.json, found through `RUNTIME state`.
TEST_F(DockerTest, GrantedRequestReachesADockerExecSession) {
  AssertWrapperBuilt();
  WriteFile(ConfigPath(), kRequestConfig);
  std::string name = StartDetached({"--runtime", "oci-rlimit-annotated"});
  EXPECT_EQ(ExecMemlock(name, "/proc/1/limits"), kRequested) << "the init process";
  EXPECT_EQ(ExecMemlock(name, "/proc/self/limits"), kRequested)
      << "the exec'd process: the request, not the top-level default";
}

TEST_F(DockerTest, ConfigOverridesASameTypeUlimit) {
  AssertWrapperBuilt();
  ASSERT_EQ(MemlockOf(dockerd_->Run({"--ulimit", kUlimit}, kCatLimits)), kUlimitSeen)
      << "baseline: docker's own runc";
  EXPECT_EQ(MemlockOf(dockerd_->Run({"--runtime", "oci-rlimit", "--ulimit", kUlimit}, kCatLimits)),
            kConfigured);
}

TEST_F(DockerTest, BrokenConfigFailsTheRunWithOurMessage) {
  AssertWrapperBuilt();
  WriteFile(ConfigPath(), "rlimits = [\"memlok=1\"]\n");
  CmdResult r = dockerd_->Run({"--runtime", "oci-rlimit"}, kCatLimits);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.out.find(kMemlock), std::string::npos) << "the container must not have run";
  std::string shown = r.err;
  shown = Unescaped(shown);
  EXPECT_NE(shown.find("oci-rlimit-runtime: "), std::string::npos) << r.err;
  EXPECT_NE(shown.find("unknown name \"memlok\""), std::string::npos) << r.err;
}

// README's docker runtime-mode quick start, read from README.md: its config
// line is the config, its daemon.json names the runtime the suite's dockerd
// has, and its `docker run` line runs as written (plus `--network none`: the
// suite's dockerd has no bridge). Here the packaged /usr/bin/oci-rlimit-runtime
// is the build's wrapper, and memlock=unlimited stands for 4M: nothing here
// may raise a hard limit, and 4M is neither the daemon's 8M nor the suite's 1M.
TEST_F(DockerTest, ReadmeQuickStartRunsAsWritten) {
  AssertWrapperBuilt();
  std::string config;
  std::string daemon_json;
  std::vector<std::string> run;
  for (const std::string& line : ReadmeBlockAfter("Docker runtime mode")) {
    if (Contains(line, " >/etc/oci-rlimit/config.toml")) config = Echoed(line);
    if (Contains(line, " >/etc/docker/daemon.json")) daemon_json = Echoed(line);
    if (size_t at = line.find("docker run --rm --runtime oci-rlimit "); at != std::string::npos) {
      run = ShellWords(line.substr(at));
    }
  }
  ASSERT_TRUE(Contains(config, "memlock=unlimited")) << "README's config: " << config;
  EXPECT_TRUE(Contains(RunCmd({Wrapper(), "--oci-rlimit-help"}).out,
                       "Here: config /etc/oci-rlimit/config.toml"))
      << "README's file is the one the wrapper reads by default";
  Json runtimes = Json::parse(daemon_json).at("runtimes");
  ASSERT_EQ(runtimes.size(), 1u) << daemon_json;
  EXPECT_EQ(runtimes["oci-rlimit"]["path"], "/usr/bin/oci-rlimit-runtime") << daemon_json;
  ASSERT_GE(run.size(), 6u);
  ASSERT_EQ(run[5], "busybox");
  run[5] = kBusyboxImage;
  run.insert(run.begin() + 2, {"--network", "none"});

  const std::string four_mib = "memlock=4M";
  config.replace(config.find("memlock=unlimited"), std::string("memlock=unlimited").size(),
                 four_mib);
  WriteFile(ConfigPath(), config + "\n");
  CmdResult r = dockerd_->Docker({run.begin() + 1, run.end()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "Max locked memory")) << "README's grep: " << r.out;
  EXPECT_EQ(MemlockOf(r), (Limit{4 << 20, 4 << 20})) << r.out;
}

// README: with no config at all the wrapper changes nothing and says so in
// the runtime log. Under docker that log is containerd's shim's: the
// runtime's --log is log.json in the container's bundle directory
// (/run/containerd/io.containerd.runtime.v2.task/moby/ID/ under a system
// dockerd; under the suite's own dockerd, below its exec root), kept while
// the container exists. The container's own output never gets the line.
TEST(DockerNoConfigTest, NoConfigSaysSoInTheShimsLog) {
  OCI_RLIMIT_REQUIRE("dockerd", "runc");
  const std::string wrapper = OurBinary("oci-rlimit-runtime");
  ASSERT_TRUE(Which(wrapper)) << wrapper << " has not been built";
  ASSERT_FALSE(std::filesystem::exists("/etc/oci-rlimit/config.toml") ||
               std::filesystem::exists("/etc/oci-rlimit/config.d"))
      << "this test needs a host with no oci-rlimit config";
  Dockerd::Options opts;
  opts.daemon_json = Json{{"runtimes", {{"oci-rlimit", {{"path", wrapper}}}}}}.dump(2);
  Dockerd dockerd(opts);
  ASSERT_TRUE(dockerd.ok()) << dockerd.error();
  const std::string name = UniqueId("docker");
  CmdResult started = dockerd.Docker({"run", "-d", "--network", "none", "--name", name, "--runtime",
                                      "oci-rlimit", kBusyboxImage, "sleep", "60"});
  ASSERT_EQ(started.status, 0) << started.err;
  const std::string id = started.out.substr(0, started.out.find('\n'));
  EXPECT_EQ(MemlockOf(dockerd.Docker({"exec", name, "cat", "/proc/1/limits"})), kHost)
      << "the wrapper changed nothing";

  std::string log;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dockerd.dir().path())) {
    if (e.path().filename() == "log.json" && e.path().parent_path().filename() == id &&
        e.path().parent_path().parent_path().parent_path().filename() ==
            "io.containerd.runtime.v2.task") {
      log = ReadFile(e.path());
    }
  }
  const std::string said = "oci-rlimit-runtime: warning: no config (/etc/oci-rlimit/config.toml";
  EXPECT_TRUE(Contains(log, said)) << "the bundle's log.json: " << log;
  EXPECT_TRUE(Contains(log, id)) << log;
  CmdResult logs = dockerd.Docker({"logs", name});
  EXPECT_FALSE(Contains(logs.out + logs.err, "no config")) << "the container's own output";
  dockerd.Docker({"rm", "-f", name});
}

}  // namespace
}  // namespace ocirlimit::itest
