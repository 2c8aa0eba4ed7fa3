// Hook hygiene, with the real executables:
//  - stdin that never closes, or never ends, fails with one line within the
//    hook's own deadline (10 s), well under a runtime's hook timeout;
//  - nothing writes through a symlink: the runtime wrapper refuses a
//    config.json that is a symlink out of the bundle; the hook only reads the
//    bundle; log files are opened O_APPEND|O_CLOEXEC|O_NOFOLLOW, so a log
//    path that is a symlink is refused with a warning and its target stays
//    untouched;
//  - in chain mode the chained hook inherits stdin, stdout, stderr and
//    nothing else (tests/integration/fd_probe.cc records its fd table).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "harness.h"

namespace ocirlimit::itest {
namespace {

namespace fs = std::filesystem;

std::string FileState(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return "missing";
  return std::to_string(st.st_ino) + " " + std::to_string(st.st_mode) + " " +
         std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + " " + ReadFile(path);
}

class HookHygiene : public ::testing::Test {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("mkfifo", "yes");
    bundle_ = dir_ / "bundle";
    fs::create_directories(bundle_);
    WriteFile(bundle_ + "/config.json", R"({"ociVersion":"1.0.2","process":{"args":["sh"]}})");
  }
  void TearDown() override {
    if (target_ > 0) {
      kill(target_, SIGKILL);
      waitpid(target_, nullptr, 0);
    }
  }

  // A live process to set limits on: the container's init, as far as the
  // hook can tell.
  pid_t Target() {
    if (target_ == 0) {
      target_ = fork();
      if (target_ == 0) {
        execl("/bin/sleep", "sleep", "600", nullptr);
        _exit(127);
      }
    }
    return target_;
  }
  std::optional<Limit> TargetMemlock() {
    return LimitRow(ReadFile("/proc/" + std::to_string(Target()) + "/limits"), kMemlock);
  }
  std::string StateFor(pid_t pid) const {
    return R"({"ociVersion":"1.0.2","id":"hygiene","status":"creating","pid":)" +
           std::to_string(pid) + R"(,"bundle":")" + bundle_ + "\"}";
  }
  std::string config() const { return dir_ / "config.toml"; }
  std::string hook() const { return OurBinary("oci-rlimit-hook"); }

  TempDir dir_;
  std::string bundle_;
  pid_t target_ = 0;
};

void ExpectOneLine(const std::string& err, const std::string& program, const std::string& part) {
  ASSERT_TRUE(err.ends_with("\n")) << err;
  std::string line = err.substr(0, err.size() - 1);
  EXPECT_EQ(line.find('\n'), std::string::npos) << err;
  EXPECT_TRUE(line.starts_with(program + ": ")) << err;
  EXPECT_NE(line.find(part), std::string::npos) << err;
}

// The runtime's side of the pipe stays open and silent: the hook holds a
// read-write descriptor of the FIFO it reads, so EOF never comes. The
// harness timeout (60 s) is only a backstop; the hook must end by itself.
TEST_F(HookHygiene, StdinThatNeverClosesFailsWithinTheDeadline) {
  WriteFile(config(), "rlimits = [\"memlock=1M:4M\"]\n");
  RunOptions opts;
  opts.timeout_s = 60;
  for (const std::string program : {"oci-rlimit-hook", "oci-prlimit-helper"}) {
    const std::string args = program == "oci-rlimit-hook"
                                 ? " --config " + config() + " createRuntime"
                                 : " --state memlock=1M:4M";
    CmdResult r =
        Sh("f=" + dir_.path() + "/stdin-" + program + "; mkfifo \"$f\" && exec 3<>\"$f\" && exec " +
               OurBinary(program) + args + " <\"$f\"",
           opts);
    EXPECT_EQ(r.status, 1) << program << ": " << r.err;
    EXPECT_EQ(r.err.find("[harness: timed out"), std::string::npos) << r.err;
    ExpectOneLine(r.err, program, "read state from stdin: no end of input after 10000 ms");
  }
}

// Input that never ends stops being read at 1 MiB.
TEST_F(HookHygiene, EndlessStdinFailsAtTheSizeCap) {
  WriteFile(config(), "rlimits = [\"memlock=1M:4M\"]\n");
  RunOptions opts;
  opts.timeout_s = 60;
  CmdResult r = Sh(
      "yes '{\"id\":\"x\"}' 2>/dev/null | " + hook() + " --config " + config() + " createRuntime",
      opts);
  EXPECT_EQ(r.status, 1) << r.err;
  ExpectOneLine(r.err, "oci-rlimit-hook", "input is larger than 1048576 bytes");
  r = Sh("yes 2>/dev/null | " + OurBinary("oci-prlimit-helper") + " --state memlock=1M", opts);
  EXPECT_EQ(r.status, 1) << r.err;
  ExpectOneLine(r.err, "oci-prlimit-helper", "input is larger than 1048576 bytes");
}

// The wrapper is the one program that writes into a bundle.
TEST_F(HookHygiene, WrapperRefusesAConfigJsonSymlinkOutOfTheBundle) {
  const std::string victim = dir_ / "elsewhere.json";
  WriteFile(victim, R"({"ociVersion":"1.0.2","process":{"args":["sh"]}})", 0600);
  fs::remove(bundle_ + "/config.json");
  fs::create_symlink(victim, bundle_ + "/config.json");
  const std::string ran = dir_ / "ran";
  WriteFile(dir_ / "runtime.sh", "#!/bin/sh\ntouch " + ran + "\n", 0755);
  WriteFile(config(), "rlimits = [\"memlock=1M:4M\"]\n[runtime]\nruntimes = [\"" +
                          (dir_ / "runtime.sh") + "\"]\n");
  const std::string before = FileState(victim);
  const std::string link_before = FileState(bundle_ + "/config.json");
  RunOptions opts;
  opts.env = {"OCI_RLIMIT_CONFIG=" + config()};
  CmdResult r =
      RunCmd({OurBinary("oci-rlimit-runtime"), "create", "--bundle", bundle_, "symlinked"}, opts);
  EXPECT_EQ(r.status, 1);
  ExpectOneLine(r.err, "oci-rlimit-runtime",
                "\"" + bundle_ + "/config.json\" is a symlink; refusing to replace it");
  EXPECT_EQ(FileState(victim), before);
  EXPECT_EQ(FileState(bundle_ + "/config.json"), link_before);
  EXPECT_FALSE(fs::exists(ran)) << "the runtime ran";
  for (const auto& e : fs::directory_iterator(bundle_)) {
    EXPECT_FALSE(e.path().filename().string().starts_with(".oci-rlimit.")) << e.path();
  }
}

// The hook reads config.json (for same-type warnings) and writes nothing
// there, whatever it points at.
TEST_F(HookHygiene, HookNeverWritesIntoTheBundle) {
  const std::string victim = dir_ / "elsewhere.json";
  WriteFile(victim, R"({"ociVersion":"1.0.2","process":{"args":["sh"]}})");
  fs::remove(bundle_ + "/config.json");
  fs::create_symlink(victim, bundle_ + "/config.json");
  WriteFile(config(), "rlimits = [\"memlock=1M:4M\"]\n");
  const std::string before = FileState(victim);
  RunOptions opts;
  opts.stdin_data = StateFor(Target());
  CmdResult r = RunCmd({hook(), "--config", config(), "createRuntime"}, opts);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(TargetMemlock(), (Limit{1 << 20, 4 << 20}));
  EXPECT_EQ(FileState(victim), before);
  EXPECT_TRUE(fs::is_symlink(bundle_ + "/config.json"));
  EXPECT_EQ(std::distance(fs::directory_iterator(bundle_), fs::directory_iterator()), 1);
}

// O_NOFOLLOW: a log path that is a symlink is refused; the limits are still
// set (a log is not worth failing a container for) and the target is not
// touched.
TEST_F(HookHygiene, HookLogSymlinkIsRefusedWithAWarning) {
  const std::string victim = dir_ / "victim";
  WriteFile(victim, "do not append here\n", 0600);
  fs::create_symlink(victim, dir_ / "hook.log");
  WriteFile(config(),
            "rlimits = [\"memlock=1M:4M\"]\nlog-file = \"" + (dir_ / "hook.log") + "\"\n");
  const std::string before = FileState(victim);
  RunOptions opts;
  opts.stdin_data = StateFor(Target());
  CmdResult r = RunCmd({hook(), "--config", config(), "createRuntime"}, opts);
  EXPECT_EQ(r.status, 0) << r.err;
  ExpectOneLine(
      r.err, "oci-rlimit-hook",
      "warning: open log \"" + (dir_ / "hook.log") + "\": Too many levels of symbolic links");
  EXPECT_EQ(TargetMemlock(), (Limit{1 << 20, 4 << 20}));
  EXPECT_EQ(FileState(victim), before);
  EXPECT_TRUE(fs::is_symlink(dir_ / "hook.log"));
}

// O_APPEND: what is in the log stays, the new line goes at the end.
TEST_F(HookHygiene, HookLogIsAppendedTo) {
  const std::string log = dir_ / "hook.log";
  WriteFile(log, "earlier line\n", 0640);
  WriteFile(config(), "rlimits = [\"memlock=1M:4M\"]\nlog-file = \"" + log + "\"\n");
  RunOptions opts;
  opts.stdin_data = StateFor(Target());
  CmdResult r = RunCmd({hook(), "--config", config(), "createRuntime"}, opts);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string text = ReadFile(log);
  ASSERT_TRUE(text.starts_with("earlier line\n")) << text;
  const std::string added = text.substr(13);
  EXPECT_EQ(std::count(added.begin(), added.end(), '\n'), 1) << text;
  EXPECT_NE(added.find("id=\"hygiene\" pid=" + std::to_string(Target()) +
                       " memlock 8388608:8388608->1048576:4194304"),
            std::string::npos)
      << added;
  struct stat st {};
  ASSERT_EQ(stat(log.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

// The wrapper's --log (runc's JSON error log) is opened the same way.
TEST_F(HookHygiene, WrapperLogSymlinkIsRefusedWithAWarning) {
  const std::string victim = dir_ / "victim";
  WriteFile(victim, "do not append here\n", 0600);
  fs::create_symlink(victim, dir_ / "runtime.log");
  WriteFile(config(), "rlimits = [\"memlok=1M\"]\n");
  const std::string before = FileState(victim);
  RunOptions opts;
  opts.env = {"OCI_RLIMIT_CONFIG=" + config()};
  CmdResult r = RunCmd({OurBinary("oci-rlimit-runtime"), "--log", dir_ / "runtime.log",
                        "--log-format", "json", "create", "--bundle", bundle_, "x"},
                       opts);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("oci-rlimit-runtime: config \"" + config() + "\""), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("oci-rlimit-runtime: warning: open log \"" + (dir_ / "runtime.log") +
                       "\": Too many levels of symbolic links"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(FileState(victim), before);
}

// fd numbers in an fd_probe record, and what fd 0 is.
std::vector<int> ProbeFds(const std::string& dir, std::string* fd0, std::string* table) {
  std::vector<fs::path> records;
  for (const auto& e : fs::directory_iterator(dir)) records.push_back(e.path());
  if (records.size() != 1) {
    ADD_FAILURE() << records.size() << " records in " << dir;
    return {};
  }
  *table = ReadFile(records[0]);
  std::vector<int> fds;
  std::istringstream in(*table);
  for (std::string line; std::getline(in, line);) {
    int fd = std::stoi(line.substr(0, line.find('\t')));
    fds.push_back(fd);
    if (fd == 0) *fd0 = line.substr(line.find('\t') + 1);
  }
  std::sort(fds.begin(), fds.end());
  return fds;
}

// Chain mode: the hook opens its config, the bundle's config.json, the
// log file and a pidfd on the target before it execs the chained hook. The
// chained hook (fd_probe) must see exactly the fds the hook was given (the
// baseline: fd_probe started the same way in the hook's place), with the
// state on a memfd as stdin. Under runc the baseline is 0, 1, 2; here it
// may hold whatever the test process itself inherited.
TEST_F(HookHygiene, ChainedHookInheritsOnlyWhatTheHookWasGiven) {
  const std::string base_dir = dir_ / "fds-baseline";
  const std::string probe_dir = dir_ / "fds";
  fs::create_directories(base_dir);
  fs::create_directories(probe_dir);
  const std::string log = dir_ / "hook.log";
  WriteFile(config(), "rlimits = [\"memlock=1M:4M\"]\nlog-file = \"" + log +
                          "\"\n[hook]\nchain = \"" + OurBinary("fd_probe") + "\"\n");
  RunOptions opts;
  opts.stdin_data = StateFor(Target());
  opts.env = {"FD_PROBE_DIR=" + base_dir};
  ASSERT_EQ(RunCmd({OurBinary("fd_probe")}, opts).status, 0);
  opts.env = {"FD_PROBE_DIR=" + probe_dir};
  CmdResult r = RunCmd({hook(), "--config", config(), "createRuntime"}, opts);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(TargetMemlock(), (Limit{1 << 20, 4 << 20}));
  EXPECT_NE(ReadFile(log).find("id=\"hygiene\""), std::string::npos) << "the log was written";

  std::string base_fd0, fd0, base_table, table;
  const auto baseline = ProbeFds(base_dir, &base_fd0, &base_table);
  const auto chained = ProbeFds(probe_dir, &fd0, &table);
  ASSERT_FALSE(baseline.empty());
  EXPECT_EQ(chained, baseline) << "chained:\n" << table << "baseline:\n" << base_table;
  EXPECT_TRUE(fd0.starts_with("/memfd:oci-state")) << table;
  EXPECT_TRUE(base_fd0.starts_with("pipe:")) << base_table;
}

}  // namespace
}  // namespace ocirlimit::itest
