// What oci-rlimit-nri adds to a container's creation, seen from kubelet's
// side (docs/performance.md), not a test: a real containerd with NRI on,
// driven through CRI (tests/cri), pods created one at a time with no NRI
// plugin connected and with oci-rlimit-nri connected, in ABBA order so a
// drift or a neighbour's burst lands on both arms alike.
//
//   cribench [--pods N] [--warmup N] [--settle-ms MS] [--containerd 2|1.7|all] [--plugin PATH]
//
// Per pod, timed: RunPodSandbox (a control: the plugin subscribes to
// CreateContainer only), CreateContainer, StartContainer. Not timed: the
// plugin's start or stop between arms, and removing the pod. At the end the
// plugin's log-file must name every container of the "with" arm and none of
// the other (exit 1 otherwise), so the figures are of a plugin that worked.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cri_containerd.h"
#include "daemons.h"
#include "harness.h"

namespace {

using namespace ocirlimit::itest;
using namespace ocirlimit::itest::cri;
using Clock = std::chrono::steady_clock;

// containerd runs under this, as in tests/cri/nri_test.cc: with no
// CAP_SYS_RESOURCE here, memlock=8M is a raise of the soft limit only.
const std::vector<std::string> kDaemonPrefix = {"prlimit", "--memlock=1048576:8388608"};
const std::vector<std::string> kSleep = {"/bin/sleep", "3600"};

struct Options {
  int pods = 30;
  int warmup = 2;
  // Quiet time after a pod is removed, before the next one: containerd and
  // the shim finish tearing a pod down in the background, and a create that
  // overlaps it is slower by up to tens of milliseconds.
  int settle_ms = 300;
  std::vector<ContainerdRelease> releases;
  std::string plugin;
};

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

struct Summary {
  double median = 0, p90 = 0, min = 0, max = 0;
};

Summary Summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Summary s;
  if (v.empty()) return s;
  // Nearest rank: the smallest value with at least P% of the runs at or below it.
  auto rank = [&](double p) {
    size_t k = static_cast<size_t>(p * static_cast<double>(v.size()) + 0.999999);
    return v[std::clamp<size_t>(k, 1, v.size()) - 1];
  };
  s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  s.p90 = rank(0.9);
  s.min = v.front();
  s.max = v.back();
  return s;
}

struct Times {
  std::vector<double> sandbox, create, start, create_start;
};

std::string LoadAverage() {
  std::string s = ReadFile("/proc/loadavg");
  size_t cut = 0;
  for (int spaces = 0; cut < s.size() && spaces < 3; ++cut) {
    if (s[cut] == ' ') ++spaces;
  }
  return s.substr(0, cut > 0 ? cut - 1 : 0);
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "cribench: %s\n", what.c_str());
  std::exit(1);
}

class Bench {
 public:
  Bench(const ContainerdRelease& release, const Options& opts) : opts_(opts) {
    WriteFile(config_path(), "rlimits = [\"memlock=8M\"]\nlog-file = \"" + log_path() +
                                 "\"\n"
                                 "[[rule]]\nname = \"gpu\"\nrlimits = [\"memlock=unlimited\"]\n"
                                 "match = { annotations = { \"nvidia.com/gpu.present\" = "
                                 "\"true\" } }\n"
                                 "[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\n");
    CriContainerd::Options c;
    c.release = release;
    c.prefix = kDaemonPrefix;
    c.nri = NriSetup{};
    containerd_ = std::make_unique<CriContainerd>(c);
    if (!containerd_->ok()) Die("containerd " + release.name + ": " + containerd_->error());
  }

  const std::string& version() const { return containerd_->version(); }

  void Connect(bool with) {
    if (with == (plugin_ != nullptr)) return;
    if (!with) {
      plugin_->Stop();
      plugin_.reset();
      // containerd notices the closed connection on its next read; give it
      // that before the next (timed) pod.
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      return;
    }
    ++starts_;
    const std::string log = dir_ / ("plugin-" + std::to_string(starts_) + ".out");
    plugin_ = std::make_unique<BackgroundProcess>();
    if (auto err = plugin_->Start({opts_.plugin, "--config", config_path(), "--socket",
                                   containerd_->nri_socket(), "--status-file", dir_ / "nri.status"},
                                  {}, log)) {
      Die("oci-rlimit-nri: " + *err);
    }
    if (auto err = plugin_->WaitForLog("oci-rlimit-nri", "configured by",
                                       Clock::now() + std::chrono::seconds(20))) {
      Die("oci-rlimit-nri did not register: " + *err);
    }
    // Configure is answered; let Synchronize finish too.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }

  // One pod with one container, timed step by step, then removed.
  void Run(bool with, Times* into) {
    Connect(with);
    CriClient& cri = containerd_->cri();
    PodSpec spec = containerd_->NewPod(with ? "with" : "without");
    ContainerSpec c = CriContainerd::NewContainer("sleeper", kSleep);
    auto t0 = Clock::now();
    auto pod = cri.RunPodSandbox(spec);
    auto t1 = Clock::now();
    if (!pod) Die("RunPodSandbox: " + pod.error().Text());
    auto id = cri.CreateContainer(*pod, c);
    auto t2 = Clock::now();
    if (!id) Die("CreateContainer: " + id.error().Text());
    if (auto started = cri.StartContainer(*id); !started) {
      Die("StartContainer: " + started.error().Text());
    }
    auto t3 = Clock::now();
    (with ? with_ids_ : without_ids_).push_back(*id);
    if (into != nullptr) {
      into->sandbox.push_back(Ms(t1 - t0));
      into->create.push_back(Ms(t2 - t1));
      into->start.push_back(Ms(t3 - t2));
      into->create_start.push_back(Ms(t3 - t1));
    }
    (void)cri.StopContainer(*id, 0);
    (void)cri.RemoveContainer(*id);
    (void)cri.StopPodSandbox(pod->id);
    (void)cri.RemovePodSandbox(pod->id);
    std::this_thread::sleep_for(std::chrono::milliseconds(opts_.settle_ms));
  }

  // Every "with" container has its line in the plugin's log-file, no
  // "without" container has one.
  std::optional<std::string> Check() const {
    const std::string log = ReadFile(log_path());
    for (const auto& id : with_ids_) {
      if (log.find("id=\"" + id + "\"") == std::string::npos) {
        std::string why = "container " + id;
        why += " (with the plugin) is not in its log-file:\n";
        why += log;
        return why;
      }
    }
    for (const auto& id : without_ids_) {
      if (log.find("id=\"" + id + "\"") != std::string::npos) {
        return "container " + id + " (no plugin connected) is in its log-file";
      }
    }
    return std::nullopt;
  }

  void Finish() {
    Connect(false);
    containerd_.reset();
  }

 private:
  std::string config_path() const { return dir_ / "config.toml"; }
  std::string log_path() const { return dir_ / "oci-rlimit.log"; }

  const Options& opts_;
  TempDir dir_;
  std::unique_ptr<CriContainerd> containerd_;
  std::unique_ptr<BackgroundProcess> plugin_;
  int starts_ = 0;
  std::vector<std::string> with_ids_, without_ids_;
};

// The two pods of one ABBA round ran back to back, so their difference
// cancels what drifts slower than a round; its median is the steadiest
// estimate of what the plugin adds.
double MedianPairedDifference(const std::vector<double>& without, const std::vector<double>& with) {
  std::vector<double> d;
  for (size_t i = 0; i < without.size() && i < with.size(); ++i) d.push_back(with[i] - without[i]);
  return Summarize(d).median;
}

void Row(const char* step, const std::vector<double>& without, const std::vector<double>& with) {
  Summary a = Summarize(without), b = Summarize(with);
  std::printf(
      "| %s | %.2f ms | %.2f ms | %.2f–%.2f ms | %.2f ms | %.2f ms | %.2f–%.2f ms | %.2fx | %.2fx "
      "| %+.2f ms | %+.2f ms |\n",
      step, a.median, a.p90, a.min, a.max, b.median, b.p90, b.min, b.max, b.median / a.median,
      b.p90 / a.p90, b.median - a.median, MedianPairedDifference(without, with));
}

int RunRelease(const ContainerdRelease& release, const Options& opts) {
  if (auto why = MissingRelease(release)) {
    // As the integration tests: missing is a skip (77), except under CI.
    std::fprintf(stderr, "cribench: %s\n", why->c_str());
    std::exit(RuntimesRequired() ? 1 : 77);
  }
  const std::string load_before = LoadAverage();
  Bench bench(release, opts);
  for (int i = 0; i < opts.warmup; ++i) {
    bench.Run(false, nullptr);
    bench.Run(true, nullptr);
  }
  Times without, with;
  // ABBA: A B, B A, A B, ... one plugin start or stop per round.
  for (int round = 0; round < opts.pods; ++round) {
    bool first_with = round % 2 == 1;
    bench.Run(first_with, first_with ? &with : &without);
    bench.Run(!first_with, first_with ? &without : &with);
  }
  auto check = bench.Check();
  const std::string version = bench.version();
  bench.Finish();
  if (check) Die(*check);

  std::printf(
      "### containerd %s through CRI: %d pods per arm after %d warm-up each (ABBA), %d ms "
      "between pods\n\n",
      version.c_str(), opts.pods, opts.warmup, opts.settle_ms);
  std::printf("Load average before: %s; after: %s\n\n", load_before.c_str(), LoadAverage().c_str());
  std::printf(
      "| CRI call | no plugin: median | p90 | min–max | oci-rlimit-nri: median | p90 | min–max | "
      "ratio (median) | ratio (p90) | added (medians) | added (median of paired differences) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  Row("RunPodSandbox (control: not subscribed)", without.sandbox, with.sandbox);
  Row("CreateContainer", without.create, with.create);
  Row("StartContainer", without.start, with.start);
  Row("CreateContainer + StartContainer", without.create_start, with.create_start);
  std::printf(
      "\nEvery container of the oci-rlimit-nri arm has its line in the plugin's log-file, none of "
      "the other arm.\n\n");
  std::fflush(stdout);
  return 0;
}

[[noreturn]] void Usage() {
  std::fprintf(stderr,
               "usage: cribench [--pods N] [--warmup N] [--settle-ms MS] [--containerd 2|1.7|all] "
               "[--plugin PATH]\n");
  std::exit(2);
}

int Main(int argc, char** argv) {
  Options opts;
  opts.plugin = OurBinary("oci-rlimit-nri");
  std::string which = "all";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) Usage();
    std::string v = argv[++i];
    if (a == "--pods") {
      opts.pods = std::atoi(v.c_str());
    } else if (a == "--warmup") {
      opts.warmup = std::atoi(v.c_str());
    } else if (a == "--settle-ms") {
      opts.settle_ms = std::atoi(v.c_str());
    } else if (a == "--containerd") {
      which = v;
    } else if (a == "--plugin") {
      opts.plugin = v;
    } else {
      Usage();
    }
  }
  if (opts.pods < 1 || opts.warmup < 0 || opts.settle_ms < 0) Usage();
  if (which == "2" || which == "all") opts.releases.push_back(Containerd2());
  if (which == "1.7" || which == "all") opts.releases.push_back(Containerd17());
  if (opts.releases.empty()) Usage();
  if (access(opts.plugin.c_str(), X_OK) != 0) Die(opts.plugin + ": not executable");
  for (const auto& r : opts.releases) {
    if (RunRelease(r, opts) != 0) return 1;
  }
  return 0;
}

}  // namespace

// The fixtures throw on a daemon that never comes up: one line, exit 1.
int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cribench: %s\n", e.what());
    return 1;
  }
}
