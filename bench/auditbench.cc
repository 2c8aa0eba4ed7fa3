// auditbench: `oci-rlimit audit` over N containers, against a baseline
// measured in the same run. The containers are a fake runc state root (one
// state.json and one bundle config.json each, in runc's and `runc spec`'s
// shapes and sizes) whose init processes are N real sleeping children of
// this program, so every pidfd, /proc/PID/stat and /proc/PID/limits read is
// real. For each N (default 100, then 1,000), reports, as median and
// min-max over the runs, wall and CPU:
//   - baseline: open+read+close /proc/PID/limits of the N children;
//   - the floor: nlohmann's json::accept over the bytes audit must read (each
//     container's state.json and config.json, already in memory): lexing
//     alone, no DOM; and the baseline plus the floor, the ratios' second base;
//   - RunAudit in-process (discovery, the verdict, the pinned reads);
//   - RunAudit --heal in-process, with every container missing its limit;
//   - the real binary, `oci-rlimit audit --no-default-roots --runtime-root R`;
// and the processes one run of the binary spawns (under strace -f).
//
// usage: auditbench [--containers N[,N...]] [--runs N] [--dir DIR] [--no-spawn] [--hold]
//                   OCI_RLIMIT_BINARY
//
// --hold: print the binary's command once each size's fixture is made, and
// wait until stdin ends before timing (to run perf or strace over it).
//
// --no-spawn (the ctest bench.auditbench_smoke): exit 1 when the binary
// spawned any process; without strace, exit 77 (skipped), or 1 under CI
// (OCI_RLIMIT_REQUIRE_RUNTIMES=1). Timings are printed, never judged.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/audit/audit.h"
#include "core/config.h"
#include "effects/files.h"
#include "effects/fs_ops.h"
#include "effects/process_ops.h"

namespace {

using Clock = std::chrono::steady_clock;
using ocirlimit::Json;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void Spit(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

uint64_t StartTime(pid_t pid) {
  std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 22; ++i) rest >> field;
  return std::stoull(field);
}

// A runc 1.1.5 state.json's shape: the init, the bundle label and a
// libcontainer config with 20 mounts, namespaces and cgroups (about 5 KiB,
// as runc wrote one here: 5.9 KiB).
std::string RuncState(const std::string& id, pid_t pid, const std::string& bundle) {
  Json mounts = Json::array();
  for (const char* dest : {"/proc",
                           "/dev",
                           "/dev/pts",
                           "/dev/shm",
                           "/dev/mqueue",
                           "/sys",
                           "/sys/fs/cgroup",
                           "/etc/hosts",
                           "/etc/resolv.conf",
                           "/etc/hostname",
                           "/dev/termination-log",
                           "/var/run/secrets/kubernetes.io/serviceaccount",
                           "/run/secrets/a",
                           "/run/secrets/b",
                           "/run/secrets/c",
                           "/data",
                           "/config",
                           "/cache",
                           "/tmp",
                           "/var/log"}) {
    mounts.push_back({{"source", "tmpfs"},
                      {"destination", dest},
                      {"device", "tmpfs"},
                      {"flags", 16777222},
                      {"propagation_flags", nullptr},
                      {"data", "mode=755,size=65536k"},
                      {"relabel", ""},
                      {"extensions", 0},
                      {"premount_cmds", nullptr},
                      {"postmount_cmds", nullptr}});
  }
  Json ns = Json::array();
  for (const char* t : {"NEWNS", "NEWNET", "NEWPID", "NEWIPC", "NEWUTS", "NEWCGROUP"}) {
    ns.push_back({{"type", t}, {"path", ""}});
  }
  Json config = {{"no_pivot_root", false},
                 {"rootfs", bundle + "/rootfs"},
                 {"mounts", mounts},
                 {"namespaces", ns},
                 {"cgroups", {{"path", "/" + id}, {"resources", {{"devices", Json::array()}}}}},
                 {"hostname", "runc"},
                 {"labels", {"bundle=" + bundle}},
                 {"no_new_keyring", false}};
  Json s = {{"id", id},
            {"init_process_pid", pid},
            {"init_process_start", StartTime(pid)},
            {"created", "2026-12-01T22:02:00.579535604Z"},
            {"config", config},
            {"rootless", false},
            {"cgroup_paths", {{"memory", "/sys/fs/cgroup/memory/" + id}}},
            {"namespace_paths", {{"NEWPID", "/proc/" + std::to_string(pid) + "/ns/pid"}}},
            {"external_descriptors", {"/dev/null", "/dev/null", "/dev/null"}},
            {"intel_rdt_path", ""}};
  return s.dump();
}

// `runc spec`'s config.json, with a Kubernetes container's annotations.
std::string BundleSpec(const std::string& id) {
  Json env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm",
              "HOSTNAME=" + id, "KUBERNETES_SERVICE_HOST=10.96.0.1"};
  Json caps = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};
  Json mounts = Json::array();
  for (const char* dest :
       {"/proc", "/dev", "/dev/pts", "/dev/shm", "/dev/mqueue", "/sys", "/sys/fs/cgroup"}) {
    mounts.push_back({{"destination", dest},
                      {"type", "tmpfs"},
                      {"source", "tmpfs"},
                      {"options", {"nosuid", "strictatime", "mode=755", "size=65536k"}}});
  }
  Json spec = {
      {"ociVersion", "1.0.2-dev"},
      {"process",
       {{"terminal", false},
        {"user", {{"uid", 0}, {"gid", 0}}},
        {"args", {"sleep", "1000"}},
        {"env", env},
        {"cwd", "/"},
        {"capabilities",
         {{"bounding", caps}, {"effective", caps}, {"permitted", caps}, {"ambient", caps}}},
        {"rlimits", {{{"type", "RLIMIT_NOFILE"}, {"hard", 1024}, {"soft", 1024}}}},
        {"noNewPrivileges", true}}},
      {"root", {{"path", "rootfs"}, {"readonly", true}}},
      {"hostname", "runc"},
      {"mounts", mounts},
      {"annotations",
       {{"io.kubernetes.cri.container-type", "container"},
        {"io.kubernetes.cri.sandbox-namespace", "default"},
        {"io.kubernetes.cri.sandbox-name", "pod-" + id},
        {"io.kubernetes.cri.container-name", "c"}}},
      {"linux",
       {{"namespaces", {{{"type", "pid"}}, {{"type", "network"}}, {{"type", "mount"}}}},
        {"maskedPaths", {"/proc/acpi", "/proc/kcore", "/proc/keys", "/sys/firmware"}},
        {"readonlyPaths", {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys"}}}}};
  return spec.dump(4);
}

struct Stats {
  double median = 0, min = 0, max = 0;
  double cpu = 0;  // median CPU time (user + system), of this process or the child
};

double CpuMs(const rusage& r) {
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3;
}

double SelfCpuMs() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return CpuMs(r);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// `f` returns the child's CPU time when it ran one, else a negative number:
// then this process's own CPU time is measured.
template <class F>
Stats Time(int runs, F&& f) {
  for (int i = 0; i < 3; ++i) f(i);  // warm-up
  std::vector<double> ms;
  std::vector<double> cpu;
  for (int i = 0; i < runs; ++i) {
    const double c0 = SelfCpuMs();
    auto t0 = Clock::now();
    const double child = f(i);
    ms.push_back(Ms(Clock::now() - t0));
    cpu.push_back(child >= 0 ? child : SelfCpuMs() - c0);
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), ms.back(), Median(cpu)};
}

// Runs argv with stdout and stderr on /dev/null; returns its CPU time in ms.
double RunBinary(const std::vector<std::string>& argv) {
  pid_t child = fork();
  if (child == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  rusage r{};
  wait4(child, &status, 0, &r);
  return CpuMs(r);
}

// Processes a command spawns: the clone/fork/vfork calls strace -f sees.
int SpawnedUnderStrace(const std::string& dir, const std::vector<std::string>& argv) {
  const std::string out = dir + "/strace.out";
  std::vector<std::string> s = {
      "/usr/bin/strace", "-f", "-qq", "-o", out, "-e", "trace=fork,vfork,clone,clone3"};
  s.insert(s.end(), argv.begin(), argv.end());
  if (access(s[0].c_str(), X_OK) != 0) return -1;
  RunBinary(s);
  std::istringstream lines(Slurp(out));
  int spawned = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("clone") != std::string::npos || line.find("fork(") != std::string::npos) {
      if (line.find("= -1") == std::string::npos) ++spawned;
    }
  }
  return spawned;
}

// Ratios to the baseline, and to the baseline plus the floor (`floor`
// holds that sum), in wall and CPU time.
void Row(const std::string& what, const Stats& s, const Stats& base, const Stats& floor) {
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  std::printf("| %s | %.2f ms | %.2f–%.2f ms | %.1fx | %.2fx | %.2f ms | %.1fx | %.2fx |\n",
              what.c_str(), s.median, s.min, s.max, ratio(s.median, base.median),
              ratio(s.median, floor.median), s.cpu, ratio(s.cpu, base.cpu),
              ratio(s.cpu, floor.cpu));
}

// One size: N sleeping children, their fake state and bundles under `dir`,
// the table. False when audit did not find, judge or heal all N, or
// spawned a process under --no-spawn (`*skipped`: no strace to count with).
bool RunSize(int n, int runs, const std::string& dir, const std::string& binary, bool no_spawn,
             bool hold, bool* skipped) {
  const std::string root = dir + "/runc-root";
  mkdir(dir.c_str(), 0700);
  mkdir(root.c_str(), 0700);
  // N sleeping children with memlock 1M:8M: a policy of 4M:8M finds them missing.
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    pid_t p = fork();
    if (p == 0) {
      struct rlimit low = {1 << 20, 8 << 20};
      setrlimit(RLIMIT_MEMLOCK, &low);
      for (;;) pause();
    }
    pids.push_back(p);
  }
  usleep(50000);  // every child has set its limit
  const std::string bundles = dir + "/bundles";
  mkdir(bundles.c_str(), 0700);
  std::vector<std::string> texts;  // every byte audit must read: state.json, config.json
  for (int i = 0; i < n; ++i) {
    const std::string id = "bench-" + std::to_string(i);
    std::string bundle = bundles;
    bundle += "/" + id;
    std::string state = root;
    state += "/" + id;
    mkdir(bundle.c_str(), 0700);
    mkdir(state.c_str(), 0711);
    texts.push_back(RuncState(id, pids[i], bundle));
    Spit(state + "/state.json", texts.back());
    texts.push_back(BundleSpec(id));
    Spit(bundle + "/config.json", texts.back());
  }
  // A rule on the CRI's namespace, so every bundle's spec is read and decided.
  const std::string policy = dir + "/config.toml";
  Spit(policy,
       "rlimits = [\"memlock=4M:8M\"]\n[[rule]]\nname = \"default-ns\"\nrlimits = "
       "[\"memlock=4M:8M\"]\nmatch.namespaces = [\"default\"]\n");
  auto cfg = ocirlimit::ParseConfig(Slurp(policy), policy);
  auto cfg_low = ocirlimit::ParseConfig("rlimits = [\"memlock=2M:8M\"]\n", "low.toml");
  if (!cfg || !cfg_low) return false;
  const std::vector<std::string> cmd = {binary,           "audit", "--config",           policy,
                                        "--runtime-root", root,    "--no-default-roots", "--json"};
  if (hold) {
    // For perf and strace: the fixture stays until stdin ends.
    for (const auto& a : cmd) std::printf("%s ", a.c_str());
    std::printf("\n");
    std::fflush(stdout);
    while (std::getchar() != EOF) {
    }
  }

  Stats base = Time(runs, [&](int) {
    for (pid_t p : pids) {
      auto text = ocirlimit::ReadFileBounded("/proc/" + std::to_string(p) + "/limits", 1 << 16);
      if (!text) std::abort();
    }
    return -1.0;
  });
  size_t bytes = 0;
  for (const auto& t : texts) bytes += t.size();
  Stats lex = Time(runs, [&](int) {
    for (const auto& t : texts) {
      if (!Json::accept(t)) std::abort();
    }
    return -1.0;
  });
  const Stats floor{base.median + lex.median, base.min + lex.min, base.max + lex.max,
                    base.cpu + lex.cpu};
  size_t found = 0;
  size_t missing = 0;
  Stats audit = Time(runs, [&](int) {
    ocirlimit::AuditRun run{
        *cfg,   ocirlimit::LinuxFsOps(), ocirlimit::LinuxProcessOps(), {root}, false, nullptr,
        nullptr};
    auto r = ocirlimit::RunAudit(run);
    found = r.entries.size();
    missing = 0;
    for (const auto& e : r.entries) missing += e.verdict.status == ocirlimit::AuditStatus::kMissing;
    return -1.0;
  });
  // Each run heals all N: the policy alternates between 4M:8M and 2M:8M.
  size_t healed = 0;
  int round = 0;
  Stats heal = Time(runs, [&](int) {
    ocirlimit::AuditRun run{round++ % 2 ? *cfg : *cfg_low,
                            ocirlimit::LinuxFsOps(),
                            ocirlimit::LinuxProcessOps(),
                            {root},
                            true,
                            nullptr,
                            nullptr};
    auto r = ocirlimit::RunAudit(run);
    healed = 0;
    for (const auto& e : r.entries) healed += e.heal && e.heal->ok() ? 1 : 0;
    return -1.0;
  });
  Stats binary_run = Time(runs, [&](int) { return RunBinary(cmd); });
  Stats true_run = Time(runs, [&](int) { return RunBinary({"/bin/true"}); });
  const int spawned = SpawnedUnderStrace(dir, cmd);

  std::printf("\n%zu containers found, %zu missing before the heals, %zu healed per --heal run\n\n",
              found, missing, healed);
  std::printf(
      "| %d containers | median | min–max | ratio to baseline | ratio to baseline + floor | "
      "CPU (median) | CPU ratio | CPU ratio to baseline + floor |\n",
      n);
  std::printf("|---|---|---|---|---|---|---|---|\n");
  Row("read /proc/PID/limits of each (baseline)", base, base, floor);
  Row("floor: json::accept over every state.json and config.json (" + std::to_string(bytes / 1024) +
          " KiB in memory)",
      lex, base, floor);
  Row("baseline + floor", floor, base, floor);
  Row("RunAudit in-process", audit, base, floor);
  Row("RunAudit --heal in-process, every one missing", heal, base, floor);
  Row("`oci-rlimit audit --json` (the binary, start-up included)", binary_run, base, floor);
  Row("fork+exec of /bin/true (a process start, for scale)", true_run, base, floor);
  if (spawned < 0) {
    std::printf("\nprocesses spawned by one `oci-rlimit audit`: not measured (no strace)\n");
  } else {
    std::printf("\nprocesses spawned by one `oci-rlimit audit` of %d containers: %d (strace -f)\n",
                n, spawned);
  }
  for (pid_t p : pids) kill(p, SIGKILL);
  for (pid_t p : pids) waitpid(p, nullptr, 0);
  RunBinary({"/bin/rm", "-rf", root, bundles});
  if (found != static_cast<size_t>(n) || missing != static_cast<size_t>(n) ||
      healed != static_cast<size_t>(n)) {
    return false;
  }
  if (!no_spawn) return true;
  if (spawned < 0) {
    std::fprintf(stderr, "auditbench: --no-spawn needs /usr/bin/strace\n");
    *skipped = true;
    return true;
  }
  if (spawned != 0) {
    std::fprintf(stderr, "auditbench: `oci-rlimit audit` spawned %d process(es), want none\n",
                 spawned);
    return false;
  }
  return true;
}

int Main(int argc, char** argv) {
  std::vector<int> sizes = {100, 1000};
  int runs = 5;
  std::string dir;
  std::string binary;
  bool no_spawn = false;
  bool hold = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--no-spawn") {
      no_spawn = true;
    } else if (a == "--hold") {
      hold = true;
    } else if (a == "--containers" && i + 1 < argc) {
      sizes.clear();
      std::istringstream list(argv[++i]);
      for (std::string n; std::getline(list, n, ',');) sizes.push_back(std::atoi(n.c_str()));
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else {
      binary = a;
    }
  }
  const bool sizes_ok =
      !sizes.empty() && std::all_of(sizes.begin(), sizes.end(), [](int n) { return n > 0; });
  if (binary.empty() || !sizes_ok || runs <= 0) {
    std::cerr << "usage: auditbench [--containers N[,N...]] [--runs N] [--dir DIR] [--no-spawn] "
                 "[--hold] OCI_RLIMIT_BINARY\n";
    return 2;
  }
  if (dir.empty()) {
    char tmpl[] = "/dev/shm/auditbench.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return 1;
    dir = tmpl;
  }
  bool ok = true;
  bool skipped = false;
  for (int n : sizes)
    ok = RunSize(n, runs, dir + "/" + std::to_string(n), binary, no_spawn, hold, &skipped) && ok;
  RunBinary({"/bin/rm", "-rf", dir});
  if (!ok) return 1;
  if (skipped) {
    const char* ci = std::getenv("OCI_RLIMIT_REQUIRE_RUNTIMES");
    return ci != nullptr && std::string(ci) == "1" ? 1 : 77;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "auditbench: " << e.what() << "\n";
    return 1;
  }
}
