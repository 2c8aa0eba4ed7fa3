// Load: 50 containers started at once through real runc
// with oci-rlimit-hook as a createRuntime hook, and 50 through
// `oci-rlimit-runtime run` in front of real runc. Each container prints its
// /proc/self/limits; every one must see the configured memlock.
//
// Beyond the limits:
//  - the hook's log has exactly one intact line per container (parsed);
//  - no fd leaks: the hook runs in chain mode with fd_probe as the chained
//    hook, and the wrapper execs fd_probe as its "runtime" (which then execs
//    runc), so fd_probe records exactly the fd table each of our processes
//    hands on; it must be 0, 1 and 2 and nothing else, 50 times each;
//  - no temp-file leaks: no `.oci-rlimit.*` in any bundle or the log dir.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "harness.h"

namespace ocirlimit::itest {
namespace {

namespace fs = std::filesystem;

constexpr int kContainers = 50;
constexpr Limit kConfigured{1 << 20, 4 << 20};

// fd numbers of every fd_probe record in dir, one set per record; the
// tables of records whose set is not `expected` go to *tables.
std::vector<std::vector<int>> FdRecords(const std::string& dir, const std::vector<int>& expected,
                                        std::string* tables) {
  std::vector<std::vector<int>> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.path().string().ends_with(".fds")) continue;
    const std::string table = ReadFile(e.path());
    std::vector<int> fds;
    std::istringstream in(table);
    for (std::string line; std::getline(in, line);) fds.push_back(std::stoi(line));
    std::sort(fds.begin(), fds.end());
    out.push_back(fds);
    if (fds != expected) *tables += e.path().string() + ":\n" + table;
  }
  return out;
}

std::vector<std::string> TempLeftovers(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().filename().string().starts_with(".oci-rlimit.")) out.push_back(e.path());
  }
  return out;
}

class Load : public ::testing::Test {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("runc");
    // One read-only rootfs shared by all bundles.
    template_ = MakeBundle(dir_ / "template", {"cat", "/proc/self/limits"});
    template_["root"]["path"] = dir_ / "template/rootfs";
    template_["root"]["readonly"] = true;
    probe_dir_ = dir_ / "fds";
    fs::create_directories(probe_dir_);
    state_ = dir_ / "state";
  }
  void TearDown() override {
    for (const auto& id : ids_) RunCmd({"runc", "--root", state_, "delete", "--force", id});
  }

  // Bundles b0..b49 under `name`, each with `spec`.
  std::vector<std::string> Bundles(const std::string& name, const Json& spec) {
    std::vector<std::string> out;
    for (int i = 0; i < kContainers; ++i) {
      std::string b = dir_ / (name + "/b" + std::to_string(i));
      fs::create_directories(b);
      WriteSpec(b, spec);
      out.push_back(b);
    }
    return out;
  }

  // Runs argv_for(i) for every i at once, one thread each.
  std::vector<CmdResult> Concurrently(const std::function<std::vector<std::string>(int)>& argv_for,
                                      const RunOptions& opts) {
    std::vector<CmdResult> results(kContainers);
    std::vector<std::thread> threads;
    for (int i = 0; i < kContainers; ++i) {
      threads.emplace_back([&, i] { results[i] = RunCmd(argv_for(i), opts); });
    }
    for (auto& t : threads) t.join();
    return results;
  }

  std::string NewId(const std::string& prefix, int i) {
    ids_.push_back(UniqueId(prefix) + "-" + std::to_string(i));
    return ids_.back();
  }

  TempDir dir_;
  Json template_;
  std::string probe_dir_;
  std::string state_;
  std::vector<std::string> ids_;
};

TEST_F(Load, FiftyContainersAtOnceThroughRuncWithTheHook) {
  const std::string config = dir_ / "hook.toml";
  const std::string log = dir_ / "log/hook.log";
  fs::create_directories(dir_ / "log");
  WriteFile(config, "rlimits = [\"memlock=1M:4M\"]\nlog-file = \"" + log +
                        "\"\n[hook]\nchain = \"" + OurBinary("fd_probe") + "\"\n");
  Json spec = template_;
  spec["hooks"]["createRuntime"] = Json::array({HookEntry(
      OurBinary("oci-rlimit-hook"), {"oci-rlimit-hook", "--config", config, "createRuntime"},
      {"FD_PROBE_DIR=" + probe_dir_})});
  const auto bundles = Bundles("hook", spec);
  std::vector<std::string> ids;
  for (int i = 0; i < kContainers; ++i) ids.push_back(NewId("load-hook", i));

  RunOptions opts;
  opts.timeout_s = 240;
  auto results = Concurrently(
      [&](int i) {
        return std::vector<std::string>{"runc",     "--root",   state_, "run",
                                        "--bundle", bundles[i], ids[i]};
      },
      opts);

  int saw_limit = 0;
  for (int i = 0; i < kContainers; ++i) {
    EXPECT_EQ(results[i].status, 0) << ids[i] << ": " << results[i].err;
    auto seen = LimitRow(results[i].out, kMemlock);
    EXPECT_EQ(seen, kConfigured) << ids[i] << ": " << results[i].out;
    if (seen == kConfigured) ++saw_limit;
  }
  std::cout << "hook under runc: " << saw_limit << " of " << kContainers
            << " concurrent containers saw memlock 1M:4M\n";
  RecordProperty("hook_containers_with_limit", saw_limit);

  // One intact line per container, each naming its container and the change.
  const std::string text = ReadFile(log);
  ASSERT_TRUE(text.ends_with("\n")) << "the last line is cut";
  const std::regex line_re(
      R"re(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ id="([A-Za-z0-9._-]+)" pid=([0-9]+) )re"
      R"re(memlock 8388608:8388608->1048576:4194304$)re");
  std::multiset<std::string> logged;
  std::istringstream in(text);
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    std::smatch m;
    if (!std::regex_match(line, m, line_re)) {
      ADD_FAILURE() << "not an intact log line: [" << line << "]";
      continue;
    }
    logged.insert(m[1]);
  }
  EXPECT_EQ(lines, kContainers);
  EXPECT_EQ(logged, std::multiset<std::string>(ids.begin(), ids.end()));

  std::string odd;
  // runc gives a hook stdin, stdout and stderr only.
  auto records = FdRecords(probe_dir_, {0, 1, 2}, &odd);
  EXPECT_EQ(records.size(), static_cast<size_t>(kContainers)) << "one chained hook per container";
  EXPECT_EQ(odd, "") << "fds the chained hook inherited beyond 0, 1, 2";
  EXPECT_EQ(TempLeftovers(dir_ / "hook"), std::vector<std::string>{});
  EXPECT_EQ(TempLeftovers(dir_ / "log"), std::vector<std::string>{});
}

TEST_F(Load, FiftyContainersAtOnceThroughTheRuntimeWrapper) {
  const std::string config = dir_ / "runtime.toml";
  WriteFile(config, "rlimits = [\"memlock=1M:4M\"]\n[runtime]\nruntimes = [\"" +
                        OurBinary("fd_probe") + "\"]\n");
  const auto bundles = Bundles("wrapper", template_);
  std::vector<std::string> ids;
  for (int i = 0; i < kContainers; ++i) ids.push_back(NewId("load-rt", i));

  RunOptions opts;
  opts.timeout_s = 240;
  opts.env = {"OCI_RLIMIT_CONFIG=" + config, "FD_PROBE_DIR=" + probe_dir_,
              "FD_PROBE_EXEC=" + *Which("runc")};
  auto results = Concurrently(
      [&](int i) {
        return std::vector<std::string>{OurBinary("oci-rlimit-runtime"),
                                        "--root",
                                        state_,
                                        "run",
                                        "--bundle",
                                        bundles[i],
                                        ids[i]};
      },
      opts);

  int saw_limit = 0;
  for (int i = 0; i < kContainers; ++i) {
    EXPECT_EQ(results[i].status, 0) << ids[i] << ": " << results[i].err;
    auto seen = LimitRow(results[i].out, kMemlock);
    EXPECT_EQ(seen, kConfigured) << ids[i] << ": " << results[i].out;
    if (seen == kConfigured) ++saw_limit;
    // Each bundle's config.json was rewritten whole, once.
    Json spec = ReadSpec(bundles[i]);
    int memlock_entries = 0;
    for (const auto& r : spec["process"]["rlimits"]) {
      if (r["type"] == "RLIMIT_MEMLOCK") ++memlock_entries;
    }
    EXPECT_EQ(memlock_entries, 1) << bundles[i];
  }
  std::cout << "oci-rlimit-runtime run: " << saw_limit << " of " << kContainers
            << " concurrent containers saw memlock 1M:4M\n";
  RecordProperty("wrapper_containers_with_limit", saw_limit);

  // The baseline: fd_probe started by the harness directly, in the wrapper's
  // place, sees what the wrapper itself was given (0, 1, 2, plus anything the
  // test process inherited).
  const std::string base_dir = dir_ / "fds-baseline";
  fs::create_directories(base_dir);
  RunOptions base = opts;
  base.env = {"FD_PROBE_DIR=" + base_dir};
  ASSERT_EQ(RunCmd({OurBinary("fd_probe")}, base).status, 0);
  std::string ignored;
  auto baseline = FdRecords(base_dir, {}, &ignored);
  ASSERT_EQ(baseline.size(), 1u);

  std::string odd;
  auto records = FdRecords(probe_dir_, baseline[0], &odd);
  EXPECT_EQ(records.size(), static_cast<size_t>(kContainers)) << "one runtime exec per container";
  EXPECT_EQ(odd, "") << "fds the wrapper handed to the runtime beyond its own";
  EXPECT_EQ(TempLeftovers(dir_ / "wrapper"), std::vector<std::string>{});
}

}  // namespace
}  // namespace ocirlimit::itest
