// Crash safety: oci-rlimit-runtime killed with SIGKILL at
// varied points while it rewrites a ~1 MiB config.json never leaves a
// truncated or partial file: after every kill the file is byte for byte the
// original or the fully merged result, with its mode kept.
//
// The write is temp file + fsync + rename (effects/files.cc AtomicWriteFile),
// so a kill between creating the temp file and the rename leaves the temp
// file behind: `.oci-rlimit.XXXXXX` in the bundle. The wrapper does not
// delete such files on a later run (it cannot tell a dead writer's file from
// a live one's, and bundles are deleted with their containers); the test
// shows that a leftover changes nothing for the next run. docs/reliability.md.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "harness.h"

namespace ocirlimit::itest {
namespace {

namespace fs = std::filesystem;

constexpr int kIterations = 200;
constexpr mode_t kMode = 0640;

// A spec of about 1 MiB: many env entries, pretty-printed (the wrapper's
// output is compact, so the two never compare equal by accident). An array,
// not thousands of annotations: ordered_json's linear key lookup would make
// the parse so long that few kills land in the write itself.
std::string LargeSpec() {
  Json spec = {{"ociVersion", "1.0.2"},
               {"process",
                {{"args", {"sh"}},
                 {"env", Json::array()},
                 {"cwd", "/"},
                 {"rlimits", {{{"type", "RLIMIT_NOFILE"}, {"hard", 1024}, {"soft", 1024}}}}}},
               {"root", {{"path", "rootfs"}}}};
  for (int i = 0; i < 9000; ++i) {
    spec["process"]["env"].push_back("PADDING_" + std::to_string(i) + "=" +
                                     std::string(90, 'a' + i % 26));
  }
  return spec.dump(2);
}

std::vector<std::string> Leftovers(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().starts_with(".oci-rlimit.")) out.push_back(e.path());
  }
  return out;
}

class CrashSafety : public ::testing::Test {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE();
    bundle_ = dir_ / "bundle";
    fs::create_directories(bundle_);
    WriteFile(dir_ / "config.toml",
              "rlimits = [\"memlock=1M:4M\", \"core=0\"]\n[runtime]\n"
              "runtimes = [\"/bin/true\"]\n");
    original_ = LargeSpec();
    ASSERT_GT(original_.size(), 1000000u);
  }

  void Restore() {
    for (const auto& f : Leftovers(bundle_)) fs::remove(f);
    WriteFile(spec_path(), original_, kMode);
  }

  std::string spec_path() const { return bundle_ + "/config.json"; }

  // Starts the wrapper; kills it after `delay` unless delay is negative.
  // Returns the wait status.
  int RunWrapper(std::chrono::nanoseconds delay) {
    const std::string wrapper = OurBinary("oci-rlimit-runtime");
    const std::string env = "OCI_RLIMIT_CONFIG=" + (dir_ / "config.toml");
    pid_t pid = fork();
    if (pid == 0) {
      int null = open("/dev/null", O_RDWR);
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
      char* const argv[] = {const_cast<char*>(wrapper.c_str()), const_cast<char*>("create"),
                            const_cast<char*>("--bundle"),      const_cast<char*>(bundle_.c_str()),
                            const_cast<char*>("crash-test"),    nullptr};
      char* const envp[] = {const_cast<char*>(env.c_str()), const_cast<char*>("PATH=/usr/bin:/bin"),
                            nullptr};
      execve(argv[0], argv, envp);
      _exit(127);
    }
    if (delay.count() >= 0) {
      timespec ts{static_cast<time_t>(delay.count() / 1000000000),
                  static_cast<long>(delay.count() % 1000000000)};
      while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
      }
      kill(pid, SIGKILL);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
  }

  TempDir dir_;
  std::string bundle_;
  std::string original_;
};

TEST_F(CrashSafety, SigkillDuringTheRewriteLeavesTheOriginalOrTheMergedFile) {
  // Calibrate: one uncapped run gives the merged bytes and the run's length.
  Restore();
  const auto t0 = std::chrono::steady_clock::now();
  int status = RunWrapper(std::chrono::nanoseconds(-1));
  const auto whole = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  const std::string merged = ReadFile(spec_path());
  ASSERT_NE(merged, original_);
  Json m = Json::parse(merged);
  ASSERT_EQ(m["process"]["rlimits"].size(), 3u) << "nofile kept, memlock and core added";
  ASSERT_EQ(Leftovers(bundle_), std::vector<std::string>{});

  // Kill delays spread over 0 .. 1.25 x the uncapped run, in 50 steps.
  const auto step = std::chrono::duration_cast<std::chrono::nanoseconds>(whole) * 5 / 4 / 50;
  int killed_before = 0, killed_mid_write = 0, killed_after = 0, finished = 0;
  for (int i = 0; i < kIterations; ++i) {
    Restore();
    status = RunWrapper(step * (i % 50));
    const std::string now = ReadFile(spec_path());
    const auto left = Leftovers(bundle_);
    struct stat st {};
    ASSERT_EQ(stat(spec_path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, kMode) << "iteration " << i;
    const bool is_original = now == original_;
    const bool is_merged = now == merged;
    ASSERT_TRUE(is_original || is_merged)
        << "iteration " << i << ": config.json is neither the original (" << original_.size()
        << " bytes) nor the merged file (" << merged.size() << " bytes) but " << now.size()
        << " bytes";
    EXPECT_FALSE(Json::parse(now, nullptr, false).is_discarded());
    EXPECT_LE(left.size(), 1u);
    if (!WIFSIGNALED(status)) {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "iteration " << i;
      EXPECT_TRUE(is_merged && left.empty()) << "iteration " << i;
      ++finished;
    } else if (is_merged) {
      EXPECT_TRUE(left.empty()) << "the rename consumed the temp file";
      ++killed_after;
    } else if (!left.empty()) {
      ++killed_mid_write;  // the temp file existed: between mkostemp and rename
    } else {
      ++killed_before;
    }
  }
  std::cout << "kill loop: " << kIterations << " iterations, uncapped run "
            << std::chrono::duration_cast<std::chrono::microseconds>(whole).count() << " us, step "
            << step.count() / 1000 << " us: killed before the write " << killed_before
            << ", killed mid-write " << killed_mid_write << ", killed after the rename "
            << killed_after << ", finished " << finished << "\n";
  RecordProperty("iterations", kIterations);
  RecordProperty("killed_mid_write", killed_mid_write);
  RecordProperty("killed_before", killed_before);
  RecordProperty("killed_after", killed_after);
  RecordProperty("finished", finished);
  EXPECT_EQ(killed_before + killed_mid_write + killed_after + finished, kIterations);
  // The loop means something only if it hit the write.
  EXPECT_GT(killed_mid_write, 0);
}

// A temp file left by a killed wrapper is never read and never in the way.
TEST_F(CrashSafety, ALeftoverTempFileDoesNotAffectTheNextRun) {
  Restore();
  const std::string stale = bundle_ + "/.oci-rlimit.AbC123";
  WriteFile(stale, original_.substr(0, 4096), kMode);  // as a kill mid-write leaves it
  ASSERT_TRUE(WIFEXITED(RunWrapper(std::chrono::nanoseconds(-1))));
  Json spec = Json::parse(ReadFile(spec_path()));
  EXPECT_EQ(spec["process"]["rlimits"].size(), 3u);
  EXPECT_EQ(spec["process"]["env"].size(), 9000u);
  EXPECT_EQ(ReadFile(stale), original_.substr(0, 4096)) << "left alone";
  EXPECT_EQ(Leftovers(bundle_), std::vector<std::string>{stale}) << "and no new one";
}

}  // namespace
}  // namespace ocirlimit::itest
