// oci-rlimit-nri heals what it missed, against real containerd 2.x and 1.7
// through CRI: pods created while the plugin was stopped run unadjusted;
// once it connects again, the runtime's Synchronize lists them, and their
// init processes get the policy's limits. An external plugin: containerd
// 1.7 sends no Synchronize to a pre-registered one.
//
// containerd starts under `prlimit --memlock=1M:8M` and the policy gives
// memlock=2M:4M: a soft raise up to the hard limit and a hard lowering,
// which this sandbox (no CAP_SYS_RESOURCE) can make. What the init has is
// read by the container itself: an exec'd `cat /proc/1/limits` (the
// container has its own PID namespace, so 1 is its init).
//
// Then doctor's NRI line says what the status file holds, and audit with a
// top-level limit finds every pod's pause container (which NRI never sees
// created) ok and not judged, never healed: no sandbox false positive.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "cri_containerd.h"
#include "cri_probe.h"
#include "formats/nri_status.h"
#include "harness.h"

namespace ocirlimit::itest::cri {

void PrintTo(const ContainerdRelease& r, std::ostream* os);

namespace {

constexpr Limit kDaemon{1 << 20, 8 << 20};  // what containerd starts with
constexpr Limit kHealed{2 << 20, 4 << 20};  // memlock=2M:4M
const std::vector<std::string> kDaemonPrefix = {"prlimit", "--memlock=1048576:8388608"};
const std::vector<std::string> kCatInit = {"cat", "/proc/1/limits"};

// Pods that ask with example.com/heal=true get memlock=2M:4M; a request over
// the 4M ceiling is rejected.
constexpr const char* kPolicy =
    "[[rule]]\nname = \"heal\"\nrlimits = [\"memlock=2M:4M\"]\n"
    "match = { annotations = { \"example.com/heal\" = \"true\" } }\n"
    "[requests]\nenabled = true\nceilings = [\"memlock=4M\"]\nover-ceiling = \"reject\"\n";

class NriHealTest : public ::testing::TestWithParam<ContainerdRelease> {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("prlimit");
    OCI_RLIMIT_REQUIRE_CONTAINERD(GetParam());
    ASSERT_TRUE(Which(Plugin())) << Plugin() << " has not been built";
    WriteFile(ConfigPath(), "log-file = \"" + LogPath() + "\"\n" + kPolicy);
    CriContainerd::Options opts;
    opts.release = GetParam();
    opts.prefix = kDaemonPrefix;
    opts.nri = NriSetup{};
    containerd_ = std::make_unique<CriContainerd>(opts);
    ASSERT_TRUE(containerd_->ok()) << containerd_->error();
    RecordProperty("containerd", containerd_->version());
  }

  static std::string Plugin() { return OurBinary("oci-rlimit-nri"); }
  std::string ConfigPath() const { return dir_ / "config.toml"; }
  std::string LogPath() const { return dir_ / "oci.log"; }
  std::string StatusPath() const { return dir_ / "run/nri.status"; }
  std::string PluginLog() const { return dir_ / ("plugin-" + std::to_string(starts_) + ".log"); }

  // Starts the plugin and waits until its output holds `needle`.
  void StartPlugin(const std::string& needle) {
    ++starts_;
    plugin_ = std::make_unique<BackgroundProcess>();
    auto err = plugin_->Start({Plugin(), "--config", ConfigPath(), "--socket",
                               containerd_->nri_socket(), "--status-file", StatusPath()},
                              {.env = {"OCI_RLIMIT_DECISIONS_DIR=" + (dir_ / "decisions")},
                               .path_dirs = {},
                               .prefix = {}},
                              PluginLog());
    ASSERT_FALSE(err) << *err;
    auto said = plugin_->WaitForLog("the plugin", needle,
                                    BackgroundProcess::Clock::now() + std::chrono::seconds(20));
    ASSERT_FALSE(said) << *said << "\n" << containerd_->Log();
  }

  // A pod whose container's init sleeps; returns its container id.
  std::string RunSleepingPod(const std::string& name,
                             const std::map<std::string, std::string>& annotations) {
    PodSpec spec = containerd_->NewPod(name);
    spec.annotations = annotations;
    auto pod = containerd_->RunPod(spec);
    EXPECT_TRUE(pod) << pod.error().Text();
    if (!pod) return "";
    pods_.push_back(pod->id);
    auto id = containerd_->RunContainer(
        *pod, CriContainerd::NewContainer("app", {"/bin/sh", "-c", "exec sleep 3600"}));
    EXPECT_TRUE(id) << id.error().Text();
    return id ? *id : "";
  }

  // What the container reads as its init's memlock, through ExecSync.
  std::optional<Limit> InitMemlock(const std::string& id) {
    auto r = containerd_->cri().ExecSync(id, kCatInit);
    if (!r || r->exit_code != 0) return std::nullopt;
    return LimitRow(r->out, kMemlock);
  }

  // The oci.log lines naming container `id`.
  std::vector<std::string> LinesOf(const std::string& id) const {
    std::vector<std::string> out;
    std::istringstream in(ReadFile(LogPath()));
    for (std::string line; std::getline(in, line);) {
      if (line.find(" id=\"" + id + "\" ") != std::string::npos) out.push_back(line);
    }
    return out;
  }

  // `oci-rlimit doctor --json` on a node root that holds only what its NRI
  // check reads of this fixture: containerd's config and binary, the running
  // plugin alone in its /proc (no other test's plugin), and the fixture's
  // TempDir (the socket, the status file) through a link to the host's.
  Json Doctor() {
    const std::string root = dir_ / "doctor-root";
    std::filesystem::create_directories(root + "/etc/containerd");
    std::filesystem::create_directories(root + "/proc");
    std::filesystem::create_directories(root + "/usr");
    std::filesystem::copy_file(containerd_->config_path(), root + "/etc/containerd/config.toml",
                               std::filesystem::copy_options::overwrite_existing);
    std::error_code ec;
    std::filesystem::create_directory_symlink(containerd_->release().bin_dir, root + "/usr/bin",
                                              ec);
    const std::string top = "/" + StatusPath().substr(1, StatusPath().find('/', 1) - 1);
    std::filesystem::create_directory_symlink(top, root + top, ec);
    const std::string pid = std::to_string(plugin_->pid());
    std::filesystem::remove(root + "/proc/" + pid, ec);
    std::filesystem::create_directory_symlink("/proc/" + pid, root + "/proc/" + pid, ec);
    CmdResult r = RunCmd({OurBinary("oci-rlimit"), "doctor", "--root", root, "--json"});
    Json j = Json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
    return j;
  }

  // `oci-rlimit audit --json [--heal]` over the fixture's runc root only,
  // with a policy of top-level limits alone.
  std::pair<int, Json> Audit(bool heal) {
    const std::string config = dir_ / "audit.toml";
    WriteFile(config, "rlimits = [\"memlock=2M:4M\"]\n");
    // A policy other than the plugin's: --policy-now judges by it, not by
    // the decisions the plugin recorded (docs/audit.md, "Recorded decisions").
    std::vector<std::string> argv = {"env",
                                     "OCI_RLIMIT_DECISIONS_DIR=" + (dir_ / "decisions"),
                                     OurBinary("oci-rlimit"),
                                     "audit",
                                     "--config",
                                     config,
                                     "--json",
                                     "--policy-now",
                                     "--no-default-roots",
                                     "--runtime-root",
                                     containerd_->runc_root() + "/k8s.io"};
    if (heal) argv.emplace_back("--heal");
    CmdResult r = RunCmd(argv);
    Json j = Json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
    return {r.status, j};
  }

  TempDir dir_;
  std::vector<std::string> pods_;  // every pod's sandbox id, which is its pause container's
  std::unique_ptr<CriContainerd> containerd_;
  std::unique_ptr<BackgroundProcess> plugin_;
  int starts_ = 0;
};

TEST_P(NriHealTest, PodsCreatedWhileThePluginWasDownAreHealedAtReconnect) {
  ASSERT_NO_FATAL_FAILURE(StartPlugin("configured by"));
  ASSERT_EQ(kill(plugin_->pid(), SIGKILL), 0);
  plugin_->Stop();

  const std::map<std::string, std::string> asks = {{"example.com/heal", "true"}};
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(RunSleepingPod("missed-" + std::to_string(i), asks));
  std::map<std::string, std::string> greedy = asks;
  greedy["oci-rlimit.io/rlimits"] = "memlock=8M";
  const std::string refused = RunSleepingPod("greedy", greedy);
  const std::string plain = RunSleepingPod("plain", {});
  for (const auto& id : ids) ASSERT_FALSE(id.empty());
  ASSERT_FALSE(refused.empty()) << "created while no plugin could refuse it";
  ASSERT_FALSE(plain.empty());
  for (const auto& id : ids) {
    ASSERT_EQ(InitMemlock(id), kDaemon) << "created unadjusted while no plugin was connected";
  }
  ASSERT_EQ(InitMemlock(refused), kDaemon);

  const auto started = std::chrono::steady_clock::now();
  ASSERT_NO_FATAL_FAILURE(StartPlugin("synchronized:"));
  std::vector<std::string> all = ids;
  all.push_back(refused);
  for (const auto& id : all) {
    std::optional<Limit> got;
    while ((got = InitMemlock(id)) != kHealed &&
           std::chrono::steady_clock::now() - started < std::chrono::seconds(5)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(got, kHealed) << "init of " << id << " within 5 s of the plugin's start\n"
                            << ReadFile(PluginLog());
  }
  RecordProperty("healed_within_ms",
                 std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::steady_clock::now() - started)
                                    .count()));
  EXPECT_EQ(InitMemlock(plain), kDaemon) << "a pod the policy gives nothing is left alone";
  EXPECT_EQ(ExecMemlock(*containerd_, ids[0]), kDaemon)
      << "init only: an exec session follows the spec, which the heal does not change";

  // Created while no plugin ran: no recorded decision, so decided now and said.
  const std::regex healed_line(
      "Z id=\"[0-9a-f]+\" pid=[0-9]+ via=\"nri-sync\" memlock 1048576:8388608->2097152:4194304 "
      "warning=\"no recorded decision \\(created while no plugin was connected, or before the "
      "upgrade\\): decided now, with the facts at Synchronize, and recorded\"$");
  for (const auto& id : ids) {
    auto lines = LinesOf(id);
    ASSERT_EQ(lines.size(), 1u) << ReadFile(LogPath());
    EXPECT_TRUE(std::regex_search(lines[0], healed_line)) << lines[0];
  }
  auto lines = LinesOf(refused);
  ASSERT_EQ(lines.size(), 1u) << ReadFile(LogPath());
  EXPECT_NE(lines[0].find("via=\"nri-sync\" memlock 1048576:8388608->2097152:4194304 "
                          "warning=\"refused-but-running: "),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("is over the ceiling"), std::string::npos) << lines[0];
  EXPECT_TRUE(LinesOf(plain).empty()) << ReadFile(LogPath());

  auto status = ParseNriStatus(ReadFile(StatusPath()));
  ASSERT_TRUE(status) << status.error().Text();
  EXPECT_EQ(status->healed, 6u) << ReadFile(StatusPath()) << ReadFile(PluginLog());
  EXPECT_EQ(status->healed_total, 6u);
  EXPECT_EQ(status->refused, 1u) << "the greedy pod runs though its request is refused";
  EXPECT_FALSE(status->connected.empty());
  EXPECT_FALSE(status->synchronized.empty());

  // doctor's NRI line reads the plugin's status file through its --status-file.
  const Json doctor = Doctor();
  const std::string said = "oci-rlimit-nri last (re)connected at " + status->connected +
                           " and healed " + std::to_string(status->healed) + " of " +
                           std::to_string(status->containers) + " containers then (" +
                           std::to_string(status->healed_total) + " since it started)";
  bool found = false;
  for (const auto& c : doctor.value("checks", Json::array())) {
    if (c.value("area", "") != "nri" || c.value("what", "") != said) continue;
    found = true;
    EXPECT_EQ(c.value("status", ""), "ok") << c.dump();
    EXPECT_EQ(c.value("path", ""), StatusPath()) << c.dump();
  }
  EXPECT_TRUE(found) << said << "\n" << doctor.dump(1);
  bool refused_line = false;
  for (const auto& c : doctor.value("checks", Json::array())) {
    if (c.value("area", "") != "nri") continue;
    if (c.value("what", "").starts_with("1 container runs though the policy refuses")) {
      refused_line = true;
      EXPECT_EQ(c.value("status", ""), "warn") << c.dump();
    }
  }
  EXPECT_TRUE(refused_line) << "doctor shows the refused-but-running count\n" << doctor.dump(1);

  // A second reconnect finds nothing left to heal, and logs nothing new.
  plugin_->Stop();
  ASSERT_NO_FATAL_FAILURE(StartPlugin("synchronized:"));
  for (const auto& id : ids) EXPECT_EQ(LinesOf(id).size(), 1u) << id;
  status = ParseNriStatus(ReadFile(StatusPath()));
  ASSERT_TRUE(status) << status.error().Text();
  EXPECT_EQ(status->healed, 0u) << ReadFile(StatusPath());
  EXPECT_EQ(status->healed_total, 0u) << "a new process counts from zero";

  // audit with top-level limits: every pod's pause container, which NRI never
  // adjusted, is listed ok and not judged; only the plain pod is missing.
  // --heal sets it and no pause process; then everything is ok.
  std::set<std::string> workloads(all.begin(), all.end());
  auto [rc, audit] = Audit(false);
  EXPECT_EQ(rc, 1) << audit.dump(1);
  std::set<std::string> sandboxes;
  for (const auto& c : audit.value("containers", Json::array())) {
    const std::string id = c.value("id", "");
    if (std::find(pods_.begin(), pods_.end(), id) != pods_.end()) {
      sandboxes.insert(id);
      EXPECT_EQ(c.value("status", ""), "ok") << c.dump();
      EXPECT_EQ(c.value("judged", true), false) << c.dump();
      EXPECT_EQ(c.value("attention", true), false) << c.dump();
    } else if (id == plain) {
      EXPECT_EQ(c.value("status", ""), "missing") << c.dump();
    } else {
      EXPECT_TRUE(workloads.count(id)) << "an unexpected container " << c.dump();
      EXPECT_EQ(c.value("status", ""), "ok") << c.dump();
      EXPECT_EQ(c.value("judged", false), true) << c.dump();
    }
  }
  EXPECT_EQ(sandboxes.size(), pods_.size()) << audit.dump(1);
  auto [heal_rc, healed] = Audit(true);
  EXPECT_EQ(heal_rc, 0) << healed.dump(1);
  for (const auto& c : healed.value("containers", Json::array())) {
    EXPECT_EQ(c.value("attention", true), false) << c.dump();
    if (c.value("id", "") != plain) {
      EXPECT_TRUE(c["heal"].is_null()) << c.dump();
    }
  }
  EXPECT_EQ(InitMemlock(plain), kHealed);
  auto [after_rc, after] = Audit(false);
  EXPECT_EQ(after_rc, 0) << after.dump(1);
  EXPECT_EQ(after.value("containers", Json::array()).size(), pods_.size() + all.size() + 1);
}

// A heal above the hard limit in force (containerd's 8M, no
// CAP_SYS_RESOURCE here) is not made, and the plugin's log says so with the
// one unraisable message every path gives (core/unraisable.h).
TEST_P(NriHealTest, AnUnraisableHealSaysTheOneMessage) {
  WriteFile(ConfigPath(), "log-file = \"" + LogPath() +
                              "\"\n[[rule]]\nname = \"big\"\nrlimits = [\"memlock=16M\"]\n"
                              "match = { annotations = { \"example.com/big\" = \"true\" } }\n");
  ASSERT_NO_FATAL_FAILURE(StartPlugin("configured by"));
  ASSERT_EQ(kill(plugin_->pid(), SIGKILL), 0);
  plugin_->Stop();
  const std::string big = RunSleepingPod("big", {{"example.com/big", "true"}});
  ASSERT_FALSE(big.empty());
  ASSERT_NO_FATAL_FAILURE(StartPlugin("synchronized:"));
  EXPECT_EQ(InitMemlock(big), kDaemon) << "not raisable here";
  auto lines = LinesOf(big);
  ASSERT_EQ(lines.size(), 1u) << ReadFile(LogPath());
  EXPECT_NE(lines[0].find("config entry memlock=16M: the hard limit in force is 8M, and raising "
                          "it needs CAP_SYS_RESOURCE, which oci-rlimit-nri does not have; "
                          "memlock=8M would work"),
            std::string::npos)
      << lines[0];
  auto status = ParseNriStatus(ReadFile(StatusPath()));
  ASSERT_TRUE(status) << status.error().Text();
  EXPECT_EQ(status->unhealed, 1u) << ReadFile(StatusPath());
}

// Kubelet's shape: the pods' annotations are on the sandbox only (no
// handler pod_annotations), so no config.json holds them; audit reads them
// from containerd's metadata database. A pod whose request the policy
// refuses, started while the plugin was down, is `refused`; a pod started
// without its granted request is `missing`. Once the plugin is back, its
// status file counts the refused one and the heal of the missing one, and
// doctor shows both.
TEST_P(NriHealTest, KubeletShapeAuditSeesRefusedAndMissingPods) {
  ASSERT_NO_FATAL_FAILURE(StartPlugin("configured by"));
  ASSERT_EQ(kill(plugin_->pid(), SIGKILL), 0);
  plugin_->Stop();
  const std::string refused = RunSleepingPod("refused", {{"oci-rlimit.io/rlimits", "memlock=8M"}});
  const std::string asked = RunSleepingPod("asked", {{"oci-rlimit.io/rlimits", "memlock=2M"}});
  ASSERT_FALSE(refused.empty());
  ASSERT_FALSE(asked.empty());
  ASSERT_EQ(InitMemlock(asked), kDaemon) << "started without its granted request";

  CmdResult r =
      RunCmd({OurBinary("oci-rlimit"), "audit", "--config", ConfigPath(), "--json",
              "--no-default-roots", "--runtime-root", containerd_->runc_root() + "/k8s.io",
              "--containerd-root", containerd_->dir() / "root"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  Json audit = Json::parse(r.out, nullptr, false);
  ASSERT_FALSE(audit.is_discarded()) << r.out << r.err;
  EXPECT_TRUE(audit.value("notes", Json::array()).empty()) << audit.dump(1);
  std::map<std::string, std::string> status;
  for (const auto& c : audit.value("containers", Json::array())) {
    status[c.value("id", "")] = c.value("status", "");
  }
  EXPECT_EQ(status[refused], "refused") << audit.dump(1);
  EXPECT_EQ(status[asked], "missing") << audit.dump(1);

  ASSERT_NO_FATAL_FAILURE(StartPlugin("synchronized:"));
  auto st = ParseNriStatus(ReadFile(StatusPath()));
  ASSERT_TRUE(st) << st.error().Text();
  EXPECT_EQ(st->refused, 1u) << ReadFile(StatusPath());
  EXPECT_EQ(st->healed, 1u) << ReadFile(StatusPath()) << ReadFile(PluginLog());
  const Json doctor = Doctor();
  bool refused_line = false;
  bool healed_line = false;
  for (const auto& c : doctor.value("checks", Json::array())) {
    if (c.value("area", "") != "nri") continue;
    const std::string what = c.value("what", "");
    refused_line |= what.starts_with("1 container runs though the policy refuses");
    healed_line |= what.find(" and healed 1 of ") != std::string::npos;
  }
  EXPECT_TRUE(refused_line) << doctor.dump(1);
  EXPECT_TRUE(healed_line) << doctor.dump(1);
}

INSTANTIATE_TEST_SUITE_P(Releases, NriHealTest, ::testing::Values(Containerd17(), Containerd2()),
                         [](const auto& info) { return TestName(info.param); });

}  // namespace
}  // namespace ocirlimit::itest::cri
