// Rootless podman (4.3.1) with every oci-rlimit path, under runc and
// crun, beside rootful podman with the same files. podman starts under
// `prlimit --memlock=1048576:8388608`: 8 MiB is the user's hard ceiling, so a
// soft raise up to it is visible and nothing may go above it. The admin asks
// for memlock=unlimited, which a rootless engine can never set: rootless
// containers must start with 8388608:8388608 and a warning, rootful ones must
// still fail (this machine has no CAP_SYS_RESOURCE, so "unlimited" is what an
// admin cannot have here, as a hard raise is for any rootless user).
#include "rootless.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "harness.h"

namespace ocirlimit::itest {
namespace {
namespace fs = std::filesystem;

constexpr Limit kUsers{1 << 20, 8 << 20};   // what prlimit gives podman
constexpr Limit kFitted{8 << 20, 8 << 20};  // soft raised to the user's hard
constexpr const char* kWarning =
    "rootless (not the initial user namespace): hard limits cannot be raised, so memlock "
    "unlimited:unlimited -> 8388608:8388608";
constexpr const char* kUlimit = "memlock=2097152:8388608";
constexpr Limit kUlimitSeen{2 << 20, 8 << 20};

std::string Packaging(const std::string& rel) {
  return std::string(OCI_RLIMIT_SOURCE_DIR) + "/packaging/" + rel;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class RootlessTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("podman", "conmon", "runc", "crun", "unshare", "runuser", "prlimit",
                       "newuidmap", "newgidmap", "useradd");
    std::string why = EnsureRootlessUser();
    ASSERT_EQ(why, "");
    const passwd* pw = getpwnam(kRootlessUser);
    uid_ = pw->pw_uid;
    gid_ = pw->pw_gid;
    chmod(dir_.path().c_str(), 0755);
    share_ = MakeShareDir(dir_ / "share");
    hooks_ = share_ + "/oci/hooks.d";
    empty_hooks_ = dir_ / "empty-hooks";
    fs::create_directories(empty_hooks_);
    // The log-file is written by the rootless hook (the user, in its
    // namespace) and by rootful runs (root): a user-owned file, 0666.
    logs_ = dir_ / "log";
    fs::create_directories(logs_);
    Own(logs_);
    WriteFile(Log(), "", 0666);
    Own(Log());
    AdminConfig("");
  }

  void Own(const std::string& path) { ASSERT_EQ(chown(path.c_str(), uid_, gid_), 0) << path; }
  std::string Config() const { return dir_ / "config.toml"; }
  std::string Log() const { return logs_ + "/oci-rlimit.log"; }

  // The admin's config: memlock=unlimited and the log-file, plus `extra`.
  void AdminConfig(const std::string& extra, mode_t mode = 0644) {
    WriteFile(Config(), "rlimits = [\"memlock=unlimited\"]\nlog-file = \"" + Log() + "\"\n" + extra,
              mode);
  }

  // A packaged hooks.d file in the default dir (share/oci/hooks.d, seen as
  // /usr/share/containers/oci/hooks.d), pointed at the build's binary and
  // the test's config; stage, args and `when` are the packaged ones.
  void InstallPackaged(const std::string& packaged) {
    Json hook = Json::parse(ReadFile(Packaging(packaged)));
    ASSERT_EQ(hook["hook"]["path"], "/usr/bin/oci-rlimit-hook") << packaged;
    hook["hook"]["path"] = OurBinary("oci-rlimit-hook");
    hook["hook"]["env"] = Json::array({"OCI_RLIMIT_CONFIG=" + Config()});
    WriteFile(hooks_ + "/oci-rlimit.json", hook.dump(2));
  }

  // The README's zero-config helper hook, in the default dir.
  void InstallHelperHook() {
    Json hook = {{"version", "1.0.0"},
                 {"hook",
                  {{"path", OurBinary("oci-prlimit-helper")},
                   {"args", {"oci-prlimit-helper", "--state", "memlock=unlimited"}}}},
                 {"when", {{"always", true}}},
                 {"stages", {"createRuntime"}}};
    WriteFile(hooks_ + "/oci-prlimit.json", hook.dump(2));
  }

  std::unique_ptr<PodmanAs> Rootless(const std::vector<std::string>& conmon_env = {}) {
    PodmanAs::Options o;
    o.share_dir = share_;
    o.conmon_env = conmon_env;
    auto p = std::make_unique<PodmanAs>(o);
    EXPECT_TRUE(p->ok()) << p->error();
    return p;
  }
  std::unique_ptr<PodmanAs> Rootful(const std::vector<std::string>& conmon_env = {}) {
    PodmanAs::Options o;
    o.rootless = false;
    o.share_dir = share_;
    o.conmon_env = conmon_env;
    auto p = std::make_unique<PodmanAs>(o);
    EXPECT_TRUE(p->ok()) << p->error();
    return p;
  }

  // --runtime for the parameter, for a rootless or a rootful engine.
  std::vector<std::string> Runtime(bool rootless) {
    if (GetParam() == "runc") return {"--runtime", "runc"};
    return {"--runtime", rootless ? RootlessCrunCommand(dir_.path()) : CrunCommand(dir_.path())};
  }
  std::string RuntimePath(bool rootless) { return Runtime(rootless)[1]; }

  // --runtime for the wrapper with `config`. Under runc: the binary itself,
  // the config through conmon_env_vars. Under crun: also a per-user script
  // that sets OCI_RLIMIT_CONFIG, because podman runs `RUNTIME start` and
  // `delete` with neither its environment nor conmon_env_vars, and the
  // wrapper would then pick its default runtime (runc) for a crun container.
  std::string WrapperFor(const std::string& config) {
    if (GetParam() == "runc") return OurBinary("oci-rlimit-runtime");
    std::string script = dir_ / ("wrapper-" + fs::path(config).stem().string() + ".sh");
    WriteFile(script,
              "#!/bin/sh\nOCI_RLIMIT_CONFIG='" + config + "' exec '" +
                  OurBinary("oci-rlimit-runtime") + "' \"$@\"\n",
              0755);
    return script;
  }

  static void ExpectRefused(const CmdResult& r, const std::string& what) {
    EXPECT_NE(r.status, 0) << what << ": " << r.out;
    EXPECT_FALSE(Contains(r.out, kMemlock)) << what << ": the container must not have run";
  }

  TempDir dir_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  std::string share_, hooks_, empty_hooks_, logs_;
};

// The packaged createRuntime file in the dir rootless podman reads by default.
TEST_P(RootlessTest, PackagedHookFileDegradesRootlessAndStillFailsRootful) {
  InstallPackaged("hooks.d/oci-rlimit.json");
  auto rootless = Rootless();
  ASSERT_TRUE(rootless->ok());
  std::vector<std::string> none = Runtime(true);
  none.insert(none.end(), {"--hooks-dir", empty_hooks_});
  ASSERT_EQ(MemlockOf(rootless->Run(none, {}, kCatLimits)), kUsers) << "baseline: no hooks";

  EXPECT_EQ(MemlockOf(rootless->Run(Runtime(true), {}, kCatLimits)), kFitted)
      << "rootless, /usr/share/containers/oci/hooks.d read with no flag";
  std::string log = ReadFile(Log());
  EXPECT_TRUE(Contains(log, "memlock 1048576:8388608->8388608:8388608")) << log;
  EXPECT_TRUE(Contains(log, std::string("warning=\"") + kWarning)) << log;
  EXPECT_FALSE(Contains(log, "error=")) << log;

  // The documented opt-out: rootless = "fail" refuses, naming the limit.
  AdminConfig("rootless = \"fail\"\n");
  ExpectRefused(rootless->Run(Runtime(true), {}, kCatLimits), "rootless with rootless = \"fail\"");
  log = ReadFile(Log());
  EXPECT_TRUE(Contains(log, "hard limit cannot be raised above 8388608 (rootless = \\\"fail\\\")"))
      << log;
  AdminConfig("");

  auto rootful = Rootful();
  ASSERT_TRUE(rootful->ok());
  CmdResult r = rootful->Run(Runtime(false), {}, kCatLimits);
  ExpectRefused(r, "rootful");
  log = ReadFile(Log());
  // Under crun the hook's stderr is discarded: the log-file names the failure.
  EXPECT_TRUE(Contains(log, "error=\"container")) << log;
  // The one unraisable-limit message (core/unraisable.h).
  EXPECT_TRUE(Contains(log,
                       "config entry memlock=unlimited: the hard limit in force is 8M, and raising "
                       "it needs CAP_SYS_RESOURCE"))
      << log;
  if (GetParam() == "runc") {
    EXPECT_TRUE(Contains(r.err, "oci-rlimit-hook: container")) << "runc shows it: " << r.err;
  }
}

// podman precreate: the spec is clamped to podman's own hard limit.
TEST_P(RootlessTest, PrecreateClampsTheSpecRootlessAndStillFailsRootful) {
  InstallPackaged("hooks.d/examples/oci-rlimit-precreate.json");
  auto rootless = Rootless();
  ASSERT_TRUE(rootless->ok());
  EXPECT_EQ(MemlockOf(rootless->Run(Runtime(true), {}, kCatLimits)), kFitted);
  std::string log = ReadFile(Log());
  EXPECT_TRUE(Contains(log, "id=\"precreate\" via=\"precreate\" set memlock=")) << log;
  EXPECT_TRUE(Contains(log, std::string(" warning=\"") + kWarning)) << log;

  auto rootful = Rootful();
  ASSERT_TRUE(rootful->ok());
  CmdResult r = rootful->Run(Runtime(false), {}, kCatLimits);
  ExpectRefused(r, "rootful: the runtime cannot set unlimited");
  if (GetParam() == "runc") {
    EXPECT_TRUE(Contains(r.err, "error setting rlimit type 8: operation not permitted")) << r.err;
  }
}

// --runtime oci-rlimit-runtime, its config through containers.conf
// conmon_env_vars (podman's own environment never reaches it), and podman exec.
TEST_P(RootlessTest, WrapperClampsCreateAndExecRootlessAndStillFailsRootful) {
  // The wrapper finds the low-level runtime from its [runtime] list.
  const std::string rootless_cfg = dir_ / "rootless.toml";
  WriteFile(rootless_cfg, "rlimits = [\"memlock=unlimited\"]\nlog-file = \"" + Log() +
                              "\"\n[runtime]\nruntimes = [\"" + RuntimePath(true) + "\"]\n");
  auto rootless = Rootless({"OCI_RLIMIT_CONFIG=" + rootless_cfg});
  ASSERT_TRUE(rootless->ok());
  const std::vector<std::string> global = {"--runtime", WrapperFor(rootless_cfg)};
  EXPECT_EQ(MemlockOf(rootless->Run(global, {}, kCatLimits)), kFitted) << "run";
  std::string name = rootless->StartDetached(global, {});
  EXPECT_EQ(MemlockOf(rootless->Cmd({"exec", name, "cat", "/proc/1/limits"})), kFitted)
      << "the init process";
  EXPECT_EQ(MemlockOf(rootless->Cmd({"exec", name, "cat", "/proc/self/limits"})), kFitted)
      << "a podman exec process";
  std::string log = ReadFile(Log());
  EXPECT_TRUE(Contains(log, std::string("warning=\"") + kWarning)) << log;

  const std::string rootful_cfg = dir_ / "rootful.toml";
  WriteFile(rootful_cfg, "rlimits = [\"memlock=unlimited\"]\n[runtime]\nruntimes = [\"" +
                             RuntimePath(false) + "\"]\n");
  auto rootful = Rootful({"OCI_RLIMIT_CONFIG=" + rootful_cfg});
  ASSERT_TRUE(rootful->ok());
  ExpectRefused(rootful->Run({"--runtime", WrapperFor(rootful_cfg)}, {}, kCatLimits), "rootful");
}

// The README's zero-config helper hook (`--state memlock=unlimited`).
TEST_P(RootlessTest, HelperAsAZeroConfigHookDegradesRootlessAndStillFailsRootful) {
  InstallHelperHook();
  auto rootless = Rootless();
  ASSERT_TRUE(rootless->ok());
  // The helper has no log-file: under crun its stderr is read through the
  // run.oci.hooks.stderr annotation.
  const std::string hook_stderr = logs_ + "/helper-stderr";
  std::vector<std::string> flags;
  if (GetParam() == "crun") flags = {"--annotation", "run.oci.hooks.stderr=" + hook_stderr};
  EXPECT_EQ(MemlockOf(rootless->Run(Runtime(true), flags, kCatLimits)), kFitted);
  if (GetParam() == "crun") {
    std::string err = ReadFile(hook_stderr);
    EXPECT_TRUE(Contains(err, "oci-prlimit-helper: container \"")) << err;
    EXPECT_TRUE(Contains(err, std::string("\": warning: ") + kWarning)) << err;
  }
  auto rootful = Rootful();
  ASSERT_TRUE(rootful->ok());
  CmdResult r = rootful->Run(Runtime(false), {}, kCatLimits);
  ExpectRefused(r, "rootful");
  if (GetParam() == "runc") {
    EXPECT_TRUE(Contains(r.err, "oci-prlimit-helper: container")) << r.err;
  }
}

// A 0600 admin config: the rootless hook cannot read it (EACCES), which is
// no config and a warning; crun shows hook stderr in the file named by the
// run.oci.hooks.stderr annotation. Rootful podman reads it (root), and its
// memlock=unlimited fails the container as before.
TEST_P(RootlessTest, UnreadableAdminConfigIsAWarningRootlessOnly) {
  AdminConfig("", 0600);
  InstallPackaged("hooks.d/oci-rlimit.json");
  auto rootless = Rootless();
  ASSERT_TRUE(rootless->ok());
  const std::string hook_stderr = logs_ + "/hook-stderr";
  std::vector<std::string> flags;
  if (GetParam() == "crun") flags = {"--annotation", "run.oci.hooks.stderr=" + hook_stderr};
  EXPECT_EQ(MemlockOf(rootless->Run(Runtime(true), flags, kCatLimits)), kUsers)
      << "starts, with no limits from the config";
  if (GetParam() == "crun") {
    std::string err = ReadFile(hook_stderr);
    EXPECT_TRUE(Contains(err,
                         "oci-rlimit-hook: warning: rootless (not the initial user "
                         "namespace): config: open \"" +
                             Config() + "\": Permission denied"))
        << err;
  }
  auto rootful = Rootful();
  ASSERT_TRUE(rootful->ok());
  ExpectRefused(rootful->Run(Runtime(false), {}, kCatLimits), "rootful");
}

// A same-type --ulimit under rootless podman, per path (docs/matrix.md):
// runc re-applies the spec's entry after hooks, crun before them; precreate
// and the wrapper replace the entry with the clamped value.
TEST_P(RootlessTest, SameTypeUlimitPerPath) {
  const std::string wrapper_cfg = dir_ / "wrapper.toml";
  WriteFile(wrapper_cfg, "rlimits = [\"memlock=unlimited\"]\n[runtime]\nruntimes = [\"" +
                             RuntimePath(true) + "\"]\n");
  auto rootless = Rootless({"OCI_RLIMIT_CONFIG=" + wrapper_cfg});
  ASSERT_TRUE(rootless->ok());
  const std::vector<std::string> ulimit = {"--ulimit", kUlimit};
  ASSERT_EQ(MemlockOf(rootless->Run(Runtime(true), ulimit, kCatLimits)), kUlimitSeen)
      << "baseline: no hooks";

  InstallPackaged("hooks.d/oci-rlimit.json");
  auto hooked = MemlockOf(rootless->Run(Runtime(true), ulimit, kCatLimits));
  if (GetParam() == "runc") {
    EXPECT_EQ(hooked, kUlimitSeen) << "createRuntime hook under runc: the spec's value wins";
  } else {
    EXPECT_EQ(hooked, kFitted) << "createRuntime hook under crun: the hook's value wins";
  }

  InstallPackaged("hooks.d/examples/oci-rlimit-precreate.json");
  EXPECT_EQ(MemlockOf(rootless->Run(Runtime(true), ulimit, kCatLimits)), kFitted) << "precreate";

  fs::remove(hooks_ + "/oci-rlimit.json");
  EXPECT_EQ(MemlockOf(rootless->Run({"--runtime", WrapperFor(wrapper_cfg)}, ulimit, kCatLimits)),
            kFitted)
      << "wrapper";
}

INSTANTIATE_TEST_SUITE_P(Runtimes, RootlessTest, ::testing::Values("runc", "crun"),
                         [](const auto& info) { return info.param; });

// Which default hooks dirs podman 4.3.1 reads (docs/matrix.md): only
// /usr/share/containers/oci/hooks.d, rootless and rootful alike (its
// containers.conf default `hooks_dir`); /etc/containers/oci/hooks.d is not
// read without --hooks-dir or hooks_dir. The same file in the share dir is
// the positive control (a lowering, which works rootless too).
TEST(RootlessHooksDirs, OnlyUsrShareContainersHooksDirIsReadByDefault) {
  OCI_RLIMIT_REQUIRE("podman", "conmon", "runc", "unshare", "runuser", "prlimit", "newuidmap",
                     "useradd");
  ASSERT_EQ(EnsureRootlessUser(), "");
  TempDir dir;
  chmod(dir.path().c_str(), 0755);
  const std::string etc = MakeEtcDir(dir / "etc-containers");
  const std::string share = MakeShareDir(dir / "share");
  const std::string config = dir / "config.toml";
  WriteFile(config, "rlimits = [\"memlock=2M:4M\"]\n");
  Json hook = {{"version", "1.0.0"},
               {"hook",
                {{"path", OurBinary("oci-rlimit-hook")},
                 {"args", {"oci-rlimit-hook", "--config", config, "createRuntime"}}}},
               {"when", {{"always", true}}},
               {"stages", {"createRuntime"}}};
  WriteFile(etc + "/oci/hooks.d/oci-rlimit.json", hook.dump(2));
  constexpr Limit kLowered{2 << 20, 4 << 20};
  for (bool as_user : {true, false}) {
    const std::string who = as_user ? "rootless" : "rootful";
    PodmanAs::Options o;
    o.rootless = as_user;
    o.etc_dir = etc;
    o.share_dir = share;
    PodmanAs podman(o);
    ASSERT_TRUE(podman.ok()) << who << ": " << podman.error();
    EXPECT_EQ(MemlockOf(podman.Run({"--runtime", "runc"}, {}, kCatLimits)), kUsers)
        << who << ": /etc/containers/oci/hooks.d is not read";
    WriteFile(share + "/oci/hooks.d/oci-rlimit.json", hook.dump(2));
    EXPECT_EQ(MemlockOf(podman.Run({"--runtime", "runc"}, {}, kCatLimits)), kLowered)
        << who << ": /usr/share/containers/oci/hooks.d is";
    std::filesystem::remove(share + "/oci/hooks.d/oci-rlimit.json");
  }
}

}  // namespace
}  // namespace ocirlimit::itest
