#include "nri/heal.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <string>
#include <vector>

#include "core/policy_digest.h"
#include "nri/decision/record.h"
#include "nri/output_fake_test.h"
#include "nri/plugin.h"
#include "tests/testing/case_name.h"
#include "tests/testing/fake_decisions.h"

namespace ocirlimit::nri {
namespace {

constexpr uint64_t kM = uint64_t{1} << 20;
constexpr int kMemlock = 8;  // RLIMIT_MEMLOCK

// One process the fake host has.
struct Proc {
  std::string cgroup;
  std::map<int, LimitPair> limits;
  bool exits_when_pinned = false;  // gone between pidfd_open and the cgroup read
  int set_errno = 0;               // prlimit(2) set fails with this
  char state = 'S';                // /proc/PID/stat's; 'Z': exited, not reaped
};

// /proc/PID/limits's rows, in the kernel's order.
constexpr const char* kRows[] = {
    "Max cpu time",       "Max file size",     "Max data size",         "Max stack size",
    "Max core file size", "Max resident set",  "Max processes",         "Max open files",
    "Max locked memory",  "Max address space", "Max file locks",        "Max pending signals",
    "Max msgqueue size",  "Max nice priority", "Max realtime priority", "Max realtime timeout",
};

std::string LimitsText(const std::map<int, LimitPair>& limits) {
  std::string text = "Limit                     Soft Limit           Hard Limit           Units\n";
  for (int r = 0; r < 16; ++r) {
    auto it = limits.find(r);
    const LimitPair v = it == limits.end() ? LimitPair{kRlimInfinity, kRlimInfinity} : it->second;
    auto show = [](uint64_t x) {
      return x == kRlimInfinity ? std::string("unlimited") : std::to_string(x);
    };
    text += std::string(kRows[r]) + "  " + show(v.soft) + "  " + show(v.hard) + "  units\n";
  }
  return text;
}

class FakeHealOps : public HealOps, public ProcessOps, public FsOps {
 public:
  ProcessOps& process() override { return *this; }
  FsOps& fs() override { return *this; }
  Result<std::vector<Entry>> ListDir(const std::string& dir) override {
    return MakeError("list " + dir, ENOENT);
  }
  Result<std::string> ReadFile(const std::string& path, size_t) override {
    for (const auto& [pid, p] : procs) {
      const std::string dir = "/proc/" + std::to_string(pid) + "/";
      if (path == dir + "cgroup") return p.cgroup;
      if (path == dir + "stat") {
        return std::to_string(pid) + " (sleep) " + std::string(1, p.state) +
               " 1 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 500 0 0\n";
      }
      if (path == dir + "limits") return LimitsText(p.limits);
    }
    return MakeError("open " + path, ENOENT);
  }
  bool InHostPidNamespace() override { return host_pid; }
  int64_t MonotonicMs() override { return clock_ms += tick_ms; }
  Status WriteStatus(const std::string& text) override {
    status = text;
    return Ok{};
  }
  Result<RuntimeState> InitFromRuntimeState(const std::string& id) override {
    ++state_reads;
    auto it = states.find(id);
    if (it == states.end()) return MakeError("no runtime state names " + id, ENOENT);
    return it->second;
  }

  Result<int> OpenPidfd(pid_t pid) override {
    ++pidfd_opens;
    auto p = procs.find(pid);
    if (p == procs.end()) return MakeError("pidfd_open", ESRCH);
    if (p->second.exits_when_pinned) procs.erase(p);
    pinned[100 + pid] = pid;
    return 100 + pid;
  }
  Status CheckAlive(int pidfd) override {
    ++alive_calls;
    if (sets > 0) ++alive_after_set;
    if (alive_until >= 0 && alive_after_set > alive_until) {
      return MakeError("pidfd_send_signal", ESRCH);
    }
    if (procs.contains(pinned[pidfd])) return Ok{};
    return MakeError("pidfd_send_signal", ESRCH);
  }
  void ClosePidfd(int) override {}
  Result<LimitPair> GetLimit(pid_t pid, int resource) override {
    auto p = procs.find(pid);
    if (p == procs.end()) return MakeError("prlimit", ESRCH);
    return p->second.limits[resource];
  }
  Result<LimitPair> SetLimit(pid_t pid, int resource, LimitPair value) override {
    auto p = procs.find(pid);
    if (p == procs.end()) return MakeError("prlimit", ESRCH);
    if (p->second.set_errno != 0) return MakeError("prlimit", p->second.set_errno);
    LimitPair old = p->second.limits[resource];
    p->second.limits[resource] = value;
    ++sets;
    return old;
  }
  bool HasSysResource() override { return false; }
  bool InInitialUserNamespace() override { return true; }

  std::map<pid_t, Proc> procs;
  std::map<int, pid_t> pinned;
  bool host_pid = true;
  int64_t clock_ms = 0;
  int64_t tick_ms = 1;
  int pidfd_opens = 0;
  int alive_calls = 0;
  int sets = 0;
  int alive_after_set = 0;
  int alive_until = -1;  // >= 0: every liveness check after that many since a set says gone
  std::string status;
  std::map<std::string, Result<RuntimeState>> states;  // by container id
  int state_reads = 0;
};

constexpr const char* kPolicy =
    "[[rule]]\nname = \"heal\"\nrlimits = [\"memlock=2M:4M\"]\n"
    "match = { annotations = { \"example.com/heal\" = \"true\" } }\n"
    "[requests]\nenabled = true\nceilings = [\"memlock=4M\"]\nover-ceiling = \"reject\"\n";

// One running container "c1" in pod "p1" (namespace default, name web) with init pid 100.
pb::SynchronizeRequest OneContainer(const std::map<std::string, std::string>& annotations,
                                    uint32_t pid = 100) {
  pb::SynchronizeRequest req;
  pb::PodSandbox* pod = req.add_pods();
  pod->set_id("p1");
  pod->set_name("web");
  pod->set_namespace_("default");
  for (const auto& [k, v] : annotations) (*pod->mutable_annotations())[k] = v;
  pb::Container* c = req.add_containers();
  c->set_id("c1");
  c->set_pod_sandbox_id("p1");
  c->set_name("app");
  c->set_state(pb::CONTAINER_RUNNING);
  c->set_pid(pid);
  c->mutable_linux()->set_cgroups_path("/kubepods/besteffort/pod1/c1");
  return req;
}

Proc InitOf(const std::string& id, LimitPair memlock) {
  Proc p;
  p.cgroup = "12:memory:/kubepods/besteffort/pod1/" + id + "\n0::/\n";
  p.limits[kMemlock] = memlock;
  return p;
}

const std::map<std::string, std::string> kAsks = {{"example.com/heal", "true"}};

struct HealCase {
  std::string name;
  std::map<std::string, std::string> annotations;
  std::optional<Proc> init;  // pid 100; nullopt: no such process
  bool host_pid = true;
  uint32_t pid = 100;
  HealResult result;
  std::string line;                // the one log line, "" for none
  std::optional<LimitPair> after;  // init's memlock afterwards
  std::string said;                // part of a Say line, "" for none but the summary
};

void PrintTo(const HealCase& c, std::ostream* os) { *os << c.name; }

class HealTable : public ::testing::TestWithParam<HealCase> {};

TEST_P(HealTable, HealsWhatThePolicyGivesAndNothingElse) {
  const HealCase& c = GetParam();
  FakeHealOps ops;
  ops.host_pid = c.host_pid;
  if (c.init) ops.procs[100] = *c.init;
  RecordingOutput out;
  Healer healer(ops);
  const Config cfg = MustParse(kPolicy);
  healer.Synchronize(cfg, OneContainer(c.annotations, c.pid), out, [] { return "T"; });

  EXPECT_EQ(healer.last().containers, 1u);
  EXPECT_EQ(healer.last().of(c.result), 1u) << HealResultName(c.result) << "\n"
                                            << (out.said.empty() ? "" : out.said.back());
  if (c.line.empty()) {
    EXPECT_TRUE(out.lines.empty()) << out.lines[0];
  } else {
    ASSERT_EQ(out.lines.size(), 1u);
    EXPECT_EQ(out.lines[0], c.line);
  }
  if (c.after) {
    ASSERT_TRUE(ops.procs.contains(100));
    EXPECT_EQ(ops.procs[100].limits[kMemlock], *c.after);
  }
  ASSERT_FALSE(out.said.empty());
  EXPECT_TRUE(out.said.back().starts_with("synchronized: 1 containers, 1 ")) << out.said.back();
  if (!c.said.empty()) {
    ASSERT_GE(out.said.size(), 2u);
    EXPECT_NE(out.said[0].find(c.said), std::string::npos) << out.said[0];
  } else {
    EXPECT_EQ(out.said.size(), 1u) << out.said[0];
  }
  if (c.result == HealResult::kNothing || c.result == HealResult::kNotRunning) {
    EXPECT_EQ(ops.pidfd_opens, 0) << "a container with nothing to do is not touched";
  }
}

Proc CannotSet() {
  Proc p = InitOf("c1", {kM, 8 * kM});
  p.set_errno = EPERM;
  return p;
}

Proc Zombie() {
  Proc p = InitOf("c1", {kM, 8 * kM});
  p.state = 'Z';
  return p;
}

Proc ExitsWhenPinned() {
  Proc p = InitOf("c1", {kM, 8 * kM});
  p.exits_when_pinned = true;
  return p;
}

const std::map<std::string, std::string> kGreedy = {{"example.com/heal", "true"},
                                                    {"oci-rlimit.io/rlimits", "memlock=8M"}};

INSTANTIATE_TEST_SUITE_P(
    Heal, HealTable,
    ::testing::Values(
        HealCase{"Healed", kAsks, InitOf("c1", {kM, 8 * kM}), true, 100, HealResult::kHealed,
                 R"(T id="c1" pid=100 via="nri-sync" memlock 1048576:8388608->2097152:4194304)",
                 LimitPair{2 * kM, 4 * kM}, ""},
        HealCase{"OverIsLowered", kAsks, InitOf("c1", {4 * kM, 16 * kM}), true, 100,
                 HealResult::kHealed,
                 R"(T id="c1" pid=100 via="nri-sync" memlock 4194304:16777216->2097152:4194304)",
                 LimitPair{2 * kM, 4 * kM}, ""},
        HealCase{"AlreadyOk", kAsks, InitOf("c1", {2 * kM, 4 * kM}), true, 100, HealResult::kOk, "",
                 LimitPair{2 * kM, 4 * kM}, ""},
        HealCase{"Gone", kAsks, std::nullopt, true, 100, HealResult::kGone, "", std::nullopt, ""},
        HealCase{"GoneWhilePinned", kAsks, ExitsWhenPinned(), true, 100, HealResult::kGone, "",
                 std::nullopt, ""},
        HealCase{"ZombieIsGone", kAsks, Zombie(), true, 100, HealResult::kGone, "",
                 LimitPair{kM, 8 * kM}, ""},
        HealCase{"PidReused", kAsks, InitOf("someone-else", {kM, 8 * kM}), true, 100,
                 HealResult::kReused,
                 R"(T id="c1" pid=100 via="nri-sync" unchanged error="not proven this container's )"
                 R"(init: pid 100: its cgroup is not \"/kubepods/besteffort/pod1/c1\", the one )"
                 R"(made for the container: left alone")",
                 LimitPair{kM, 8 * kM}, ""},
        HealCase{"RefusedButRunning", kGreedy, InitOf("c1", {kM, 8 * kM}), true, 100,
                 HealResult::kHealed,
                 R"(T id="c1" pid=100 via="nri-sync" memlock 1048576:8388608->2097152:4194304 )"
                 R"(warning="refused-but-running: annotation \"oci-rlimit.io/rlimits\" = )"
                 R"(\"memlock=8M\": memlock=8388608:8388608 is over the ceiling )"
                 R"(memlock=4194304:4194304 (over-ceiling = \"reject\"); its init gets the )"
                 R"(node's limits without its request: memlock=2097152:4194304")",
                 LimitPair{2 * kM, 4 * kM}, ""},
        HealCase{"NothingToDo",
                 {},
                 InitOf("c1", {kM, 8 * kM}),
                 true,
                 100,
                 HealResult::kNothing,
                 "",
                 LimitPair{kM, 8 * kM},
                 ""},
        HealCase{"NoPidAndNoRuntimeState", kAsks, InitOf("c1", {kM, 8 * kM}), true, 0,
                 HealResult::kCannot,
                 R"(T id="c1" pid=0 via="nri-sync" unchanged error="cannot heal: NRI gives no )"
                 R"(PID (CRI-O) and no runtime state of root's names it: no runtime state )"
                 R"(names c1: No such file or directory")",
                 LimitPair{kM, 8 * kM}, ""},
        HealCase{"CannotSetReportsOnly", kAsks, CannotSet(), true, 100, HealResult::kCannot,
                 R"(T id="c1" pid=100 via="nri-sync" unchanged error="cannot heal to )"
                 R"(memlock=2097152:4194304: pid 100: memlock to 2097152:4194304: prlimit: )"
                 R"(Operation not permitted")",
                 LimitPair{kM, 8 * kM}, "it reports them in the log"},
        HealCase{"NoHostPidNamespaceReportsOnly", kAsks, InitOf("c1", {kM, 8 * kM}), false, 100,
                 HealResult::kCannot,
                 R"(T id="c1" pid=100 via="nri-sync" unchanged error="not checked (no host PID )"
                 R"(namespace); the policy gives memlock=2097152:4194304")",
                 LimitPair{kM, 8 * kM}, "it can only report"}),
    CaseName{});

TEST(Heal, WaitsForTheLastChunkAndUsesPodsFromEarlierOnes) {
  FakeHealOps ops;
  ops.procs[100] = InitOf("c1", {kM, 8 * kM});
  RecordingOutput out;
  Healer healer(ops);
  const Config cfg = MustParse(kPolicy);
  pb::SynchronizeRequest all = OneContainer(kAsks);
  pb::SynchronizeRequest first;
  *first.add_pods() = all.pods(0);
  first.set_more(true);
  pb::SynchronizeRequest second;
  *second.add_containers() = all.containers(0);
  healer.Synchronize(cfg, first, out, [] { return "T"; });
  EXPECT_TRUE(out.said.empty()) << "nothing before the last chunk";
  healer.Synchronize(cfg, second, out, [] { return "T"; });
  EXPECT_EQ(healer.last().of(HealResult::kHealed), 1u) << "the pod's annotation matched";
  EXPECT_EQ(ops.procs[100].limits[kMemlock], (LimitPair{2 * kM, 4 * kM}));
}

TEST(Heal, OutOfTimeContainersAreCountedAndSaid) {
  FakeHealOps ops;
  ops.tick_ms = 600;  // every clock read: 600 ms later
  RecordingOutput out;
  Healer healer(ops, HealOptions{.budget_ms = 1000});
  const Config cfg = MustParse(kPolicy);
  pb::SynchronizeRequest req = OneContainer(kAsks);
  for (int i = 2; i <= 4; ++i) {
    pb::Container* c = req.add_containers();
    *c = req.containers(0);
    c->set_id("c" + std::to_string(i));
    c->set_pid(100 + i);
    ops.procs[100 + i] = InitOf(c->id(), {kM, 8 * kM});
  }
  ops.procs[100] = InitOf("c1", {kM, 8 * kM});
  healer.Synchronize(cfg, req, out, [] { return "T"; });
  EXPECT_EQ(healer.last().of(HealResult::kHealed), 1u);
  EXPECT_EQ(healer.last().of(HealResult::kOutOfTime), 3u);
  ASSERT_FALSE(out.said.empty());
  EXPECT_NE(out.said.back().find("3 out of time"), std::string::npos) << out.said.back();
  EXPECT_NE(out.said.back().find("oci-rlimit audit --heal"), std::string::npos);
  auto st = ParseNriStatus(ops.status);
  ASSERT_TRUE(st) << st.error().Text();
  EXPECT_EQ(st->unhealed, 3u);
}

// CRI-O 1.31 gives pid 0 for every container: the heal finds the init in
// the runtime's state (root's only), and proves it by cgroup and start time.
struct CrioRun {
  HealResult result;
  std::vector<std::string> lines;
  LimitPair after;
  int state_reads;
};

CrioRun HealCrio(std::optional<Result<RuntimeState>> state, Proc init,
                 pb::ContainerState cstate = pb::CONTAINER_RUNNING) {
  FakeHealOps ops;
  ops.procs[100] = std::move(init);
  if (state) ops.states.emplace("c1", *state);
  RecordingOutput out;
  Healer healer(ops);
  pb::SynchronizeRequest req = OneContainer(kAsks, 0);
  req.mutable_containers(0)->set_state(cstate);
  healer.Synchronize(MustParse(kPolicy), req, out, [] { return "T"; });
  HealResult result = HealResult::kOutOfTime;
  for (size_t i = 0; i < healer.last().by.size(); ++i) {
    if (healer.last().by.at(i) == 1) result = static_cast<HealResult>(i);
  }
  return {result, out.lines, ops.procs[100].limits[kMemlock], ops.state_reads};
}

RuntimeState StateOf(pid_t pid, std::optional<uint64_t> start) {
  return RuntimeState{"runc", pid, start, "/run/bundle"};
}

TEST(HealCrio, PidZeroHealsTheInitTheRuntimeStateNames) {
  const CrioRun r = HealCrio(StateOf(100, 500), InitOf("c1", {kM, 8 * kM}));
  EXPECT_EQ(r.result, HealResult::kHealed) << HealResultName(r.result);
  EXPECT_EQ(r.after, (LimitPair{2 * kM, 4 * kM}));
  ASSERT_EQ(r.lines.size(), 1u);
  EXPECT_EQ(r.lines[0],
            R"(T id="c1" pid=100 via="nri-sync" memlock 1048576:8388608->2097152:4194304)");
}

TEST(HealCrio, AStartTimeOtherThanTheStatesIsAReusedPid) {
  const CrioRun r = HealCrio(StateOf(100, 499), InitOf("c1", {kM, 8 * kM}));
  EXPECT_EQ(r.result, HealResult::kGone) << HealResultName(r.result);
  EXPECT_EQ(r.after, (LimitPair{kM, 8 * kM})) << "never touched";
}

TEST(HealCrio, ACgroupThatDoesNotNameTheContainerIsLeftAlone) {
  const CrioRun r = HealCrio(StateOf(100, 500), InitOf("someone-else", {kM, 8 * kM}));
  EXPECT_EQ(r.result, HealResult::kReused) << HealResultName(r.result);
  EXPECT_EQ(r.after, (LimitPair{kM, 8 * kM}));
}

TEST(HealCrio, AnUntrustedStateIsReportedNotUsed) {
  const CrioRun r = HealCrio(MakeError("/run/runc/c1 is owned by uid 1000, not root: not trusted"),
                             InitOf("c1", {kM, 8 * kM}));
  EXPECT_EQ(r.result, HealResult::kCannot) << HealResultName(r.result);
  EXPECT_EQ(r.after, (LimitPair{kM, 8 * kM}));
  ASSERT_EQ(r.lines.size(), 1u);
  EXPECT_NE(r.lines[0].find("owned by uid 1000, not root"), std::string::npos) << r.lines[0];
}

TEST(HealCrio, AStateWithNoPidIsReported) {
  const CrioRun r = HealCrio(StateOf(0, std::nullopt), InitOf("c1", {kM, 8 * kM}));
  EXPECT_EQ(r.result, HealResult::kCannot) << HealResultName(r.result);
  ASSERT_EQ(r.lines.size(), 1u);
  EXPECT_NE(r.lines[0].find("its runtime state records none"), std::string::npos) << r.lines[0];
}

TEST(HealCrio, ACreatedContainerHasNoInitToLookFor) {
  const CrioRun r = HealCrio(StateOf(100, 500), InitOf("c1", {kM, 8 * kM}), pb::CONTAINER_CREATED);
  EXPECT_EQ(r.result, HealResult::kNotRunning) << HealResultName(r.result);
  EXPECT_EQ(r.state_reads, 0);
  EXPECT_EQ(r.after, (LimitPair{kM, 8 * kM}));
}

TEST(HealCrio, AContainerThePolicyLeavesAloneIsNeverLookedUp) {
  FakeHealOps ops;
  RecordingOutput out;
  Healer healer(ops);
  healer.Synchronize(MustParse(kPolicy), OneContainer({}, 0), out, [] { return "T"; });
  EXPECT_EQ(healer.last().of(HealResult::kNothing), 1u);
  EXPECT_EQ(ops.state_reads, 0);
}

TEST(Heal, StatusFileSaysTheLastConnectAndCountsAcrossReconnects) {
  FakeHealOps ops;
  RecordingOutput out;
  Healer healer(ops);
  const Config cfg = MustParse(kPolicy);
  healer.Connected("T1", out);
  auto st = ParseNriStatus(ops.status);
  ASSERT_TRUE(st) << st.error().Text();
  EXPECT_EQ(st->connected, "T1");
  EXPECT_EQ(st->synchronized, "");
  ops.procs[100] = InitOf("c1", {kM, 8 * kM});
  healer.Synchronize(cfg, OneContainer(kAsks), out, [] { return "T2"; });
  st = ParseNriStatus(ops.status);
  ASSERT_TRUE(st) << st.error().Text();
  EXPECT_EQ(st->synchronized, "T2");
  EXPECT_EQ(st->containers, 1u);
  EXPECT_EQ(st->healed, 1u);
  EXPECT_EQ(st->healed_total, 1u);
  EXPECT_FALSE(st->report_only);

  healer.Connected("T3", out);  // a reconnect: the container is ok now
  healer.Synchronize(cfg, OneContainer(kAsks), out, [] { return "T4"; });
  st = ParseNriStatus(ops.status);
  ASSERT_TRUE(st) << st.error().Text();
  EXPECT_EQ(st->connected, "T3");
  EXPECT_EQ(st->healed, 0u);
  EXPECT_EQ(st->healed_total, 1u);
}

TEST(Heal, CannotSetIsSaidOnceAcrossReconnects) {
  FakeHealOps ops;
  ops.procs[100] = CannotSet();
  RecordingOutput out;
  Healer healer(ops);
  const Config cfg = MustParse(kPolicy);
  for (int i = 0; i < 2; ++i) healer.Synchronize(cfg, OneContainer(kAsks), out, [] { return "T"; });
  int said = 0;
  for (const auto& s : out.said) said += s.find("it reports them") != std::string::npos ? 1 : 0;
  EXPECT_EQ(said, 1);
  EXPECT_EQ(out.lines.size(), 2u) << "each Synchronize reports the container";
}

// Two containers the policy gives limits, in a pod the plugin sees without
// the host's PIDs: c1 (pid 100) and c2 (pid 101).
pb::SynchronizeRequest TwoContainers() {
  pb::SynchronizeRequest req = OneContainer(kAsks);
  pb::Container* c = req.add_containers();
  *c = req.containers(0);
  c->set_id("c2");
  c->set_pid(101);
  c->mutable_linux()->set_cgroups_path("/kubepods/besteffort/pod1/c2");
  return req;
}

TEST(Heal, CanOnlyReportIsSaidOnceAcrossContainersAndReconnects) {
  FakeHealOps ops;
  ops.host_pid = false;
  ops.procs[100] = InitOf("c1", {kM, 8 * kM});
  ops.procs[101] = InitOf("c2", {kM, 8 * kM});
  RecordingOutput out;
  Healer healer(ops);
  const Config cfg = MustParse(kPolicy);
  for (int i = 0; i < 2; ++i) {
    healer.Connected("T", out);
    healer.Synchronize(cfg, TwoContainers(), out, [] { return "T"; });
    EXPECT_EQ(healer.last().of(HealResult::kCannot), 2u);
  }
  int said = 0;
  for (const auto& s : out.said) said += s.find("it can only report") != std::string::npos ? 1 : 0;
  EXPECT_EQ(said, 1) << testing::PrintToString(out.said);
  const std::string c1 =
      R"(T id="c1" pid=100 via="nri-sync" unchanged error="not checked (no host PID )"
      R"(namespace); the policy gives memlock=2097152:4194304")";
  const std::string c2 =
      R"(T id="c2" pid=101 via="nri-sync" unchanged error="not checked (no host PID )"
      R"(namespace); the policy gives memlock=2097152:4194304")";
  EXPECT_EQ(out.lines, (std::vector<std::string>{c1, c2, c1, c2}));
  EXPECT_EQ(ops.pidfd_opens, 0) << "a PID of another namespace is never pinned";
  EXPECT_EQ(ops.procs[100].limits[kMemlock], (LimitPair{kM, 8 * kM}));
  auto st = ParseNriStatus(ops.status);
  ASSERT_TRUE(st) << st.error().Text();
  EXPECT_TRUE(st->report_only);
  EXPECT_EQ(st->unhealed, 2u);
}

// Synchronize lists no pod sandbox (pause), so a container that carries the
// sandbox mark is a workload claiming it (a pod annotation of the other
// engine's key): judged and healed like any other.
TEST(Heal, TheSandboxMarkIsNotBelievedAtSynchronize) {
  FakeHealOps ops;
  ops.procs[100] = InitOf("c1", {kM, 8 * kM});
  ops.procs[101] = InitOf("c2", {kM, 8 * kM});
  RecordingOutput out;
  Healer healer(ops);
  const Config cfg = MustParse("rlimits = [\"memlock=2M:4M\"]\n");
  pb::SynchronizeRequest req = TwoContainers();
  (*req.mutable_containers(0)->mutable_annotations())["io.kubernetes.cri.container-type"] =
      "sandbox";
  (*req.mutable_containers(1)->mutable_annotations())["io.kubernetes.cri-o.ContainerType"] =
      "sandbox";
  healer.Synchronize(cfg, req, out, [] { return "T"; });
  EXPECT_EQ(healer.last().of(HealResult::kHealed), 2u);
  EXPECT_EQ(ops.procs[100].limits[kMemlock], (LimitPair{2 * kM, 4 * kM}));
  EXPECT_EQ(ops.procs[101].limits[kMemlock], (LimitPair{2 * kM, 4 * kM}));
  ASSERT_EQ(out.lines.size(), 2u);
}

TEST(Heal, PluginHandsSynchronizeToTheHealerAndStillAnswersNoUpdates) {
  FakeHealOps ops;
  ops.procs[100] = InitOf("c1", {kM, 8 * kM});
  RecordingOutput out;
  Healer healer(ops);
  const Config cfg = MustParse(kPolicy);
  NriPlugin plugin([&]() -> const Config& { return cfg; }, out, [] { return "T"; }, &healer);
  pb::ConfigureRequest conf;
  ASSERT_EQ(plugin.Call("Configure", conf.SerializeAsString()).status.code, 0);
  Reply r = plugin.Call("Synchronize", OneContainer(kAsks).SerializeAsString());
  ASSERT_EQ(r.status.code, 0) << r.status.message;
  pb::SynchronizeResponse resp;
  ASSERT_TRUE(resp.ParseFromString(r.payload));
  EXPECT_EQ(resp.update_size(), 0);
  EXPECT_FALSE(resp.more());
  EXPECT_EQ(ops.procs[100].limits[kMemlock], (LimitPair{2 * kM, 4 * kM}));
  auto st = ParseNriStatus(ops.status);
  ASSERT_TRUE(st) << st.error().Text();
  EXPECT_EQ(st->connected, "T");
  EXPECT_EQ(st->healed, 1u);
}

struct NsPidCase {
  std::string name;
  std::string status;
  bool initial;
};
void PrintTo(const NsPidCase& c, std::ostream* os) { *os << c.name; }
class NsPidTable : public ::testing::TestWithParam<NsPidCase> {};
TEST_P(NsPidTable, OneLevelIsTheHostsNamespace) {
  EXPECT_EQ(NsPidIsInitial(GetParam().status), GetParam().initial);
}
INSTANTIATE_TEST_SUITE_P(Heal, NsPidTable,
                         ::testing::Values(NsPidCase{"Host", "Name:\tx\nNSpid:\t4242\n", true},
                                           NsPidCase{"Nested", "Name:\tx\nNSpid:\t4242\t7\n",
                                                     false},
                                           NsPidCase{"NoLineOldKernel", "Name:\tx\n", true}),
                         CaseName{});

// How many liveness checks effects/heal.cc makes after a one-type set.
constexpr int kChecksAfterSetInEffects = 2;

// A stopped container's pid may name a process still (or again): never
// looked at.
TEST(HealMutants, AStoppedContainerIsNotRunningWhateverItsPid) {
  FakeHealOps ops;
  ops.procs[100] = InitOf("c1", {kM, 8 * kM});
  RecordingOutput out;
  Healer healer(ops);
  pb::SynchronizeRequest req = OneContainer(kAsks);
  req.mutable_containers(0)->set_state(pb::CONTAINER_STOPPED);
  healer.Synchronize(MustParse(kPolicy), req, out, [] { return "T"; });
  EXPECT_EQ(healer.last().of(HealResult::kNotRunning), 1u);
  EXPECT_EQ(ops.pidfd_opens, 0);
  EXPECT_EQ(ops.procs[100].limits[kMemlock], (LimitPair{kM, 8 * kM}));
}

// A refused request on a node whose policy gives nothing else: no target,
// but still refused-but-running, and said in the log.
TEST(HealMutants, ARefusedContainerWithNoTargetIsStillReported) {
  FakeHealOps ops;
  ops.procs[100] = InitOf("c1", {kM, 8 * kM});
  RecordingOutput out;
  Healer healer(ops);
  const Config cfg = MustParse(
      "[requests]\nenabled = true\nceilings = [\"memlock=4M\"]\nover-ceiling = \"reject\"\n");
  healer.Synchronize(cfg, OneContainer({{"oci-rlimit.io/rlimits", "memlock=64M"}}), out,
                     [] { return "T"; });
  EXPECT_EQ(healer.last().refused, 1u);
  EXPECT_EQ(healer.last().of(HealResult::kNothing), 0u);
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_NE(out.lines[0].find("refused"), std::string::npos) << out.lines[0];
}

// The init exits right after its limits were set: the checks after the set
// are effects' own (ApplyRlimits' pin, then HealProcess's identity check)
// and the last one, of the pin Apply holds across the heal; when only that
// one says gone, the container is gone and no heal is logged.
TEST(HealMutants, GoneRightAfterTheHealIsGone) {
  FakeHealOps ops;
  ops.procs[100] = InitOf("c1", {kM, 8 * kM});
  ops.alive_until = kChecksAfterSetInEffects;
  RecordingOutput out;
  Healer healer(ops);
  healer.Synchronize(MustParse(kPolicy), OneContainer(kAsks), out, [] { return "T"; });
  EXPECT_EQ(ops.alive_after_set, kChecksAfterSetInEffects + 1);
  EXPECT_EQ(healer.last().of(HealResult::kGone), 1u);
  EXPECT_EQ(healer.last().of(HealResult::kHealed), 0u);
  EXPECT_TRUE(out.lines.empty()) << out.lines[0];
}

// The proof (effects/container_proof.h): only the cgroup the engine made for
// the container, as NRI's linux.cgroups_path names it, proves NRI's PID the
// container's init; a cgroup a user names after the id does not.
struct ProofRun {
  HealResult result;
  int sets;
};

ProofRun HealIn(const std::string& cgroups_path, const std::string& cgroup) {
  FakeHealOps ops;
  ops.procs[100] = InitOf("c1", {kM, 8 * kM});
  ops.procs[100].cgroup = cgroup;
  RecordingOutput out;
  Healer healer(ops);
  pb::SynchronizeRequest req = OneContainer(kAsks);
  req.mutable_containers(0)->mutable_linux()->set_cgroups_path(cgroups_path);
  healer.Synchronize(MustParse(kPolicy), req, out, [] { return "T"; });
  HealResult result = HealResult::kOutOfTime;
  for (size_t i = 0; i < healer.last().by.size(); ++i) {
    if (healer.last().by.at(i) == 1) result = static_cast<HealResult>(i);
  }
  return {result, ops.sets};
}

TEST(HealProof, ACgroupThatOnlyNamesTheIdIsLeftAlone) {
  const std::string path = "/kubepods/besteffort/pod1/c1";
  for (const char* cgroup : {
           "0::/user.slice/user-1000.slice/user@1000.service/c1\n",  // a user's own
           "12:memory:/c1\n0::/\n",                                  // the id alone
           "12:memory:/user.slice/kubepods/besteffort/pod1/c1\n",    // below another
           "12:memory:/kubepods/besteffort/pod1/c1x\n",              // a longer name
           "12:memory:/x/c1/kubepods/besteffort/pod1\n",             // a substring
           "12:memory:/kubepods/besteffort/pod1\n",                  // its parent
       }) {
    const ProofRun r = HealIn(path, cgroup);
    EXPECT_EQ(r.result, HealResult::kReused) << cgroup << HealResultName(r.result);
    EXPECT_EQ(r.sets, 0) << cgroup;
  }
  // Below the container's own cgroup (crun's "container" subgroup) is its.
  EXPECT_EQ(HealIn(path, "12:memory:/kubepods/besteffort/pod1/c1/container\n").result,
            HealResult::kHealed);
}

TEST(HealProof, ASystemdCgroupsPathIsTheScopeRuncMakes) {
  const std::string scope =
      "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/"
      "cri-containerd-c1.scope";
  const std::string path = "kubepods-besteffort-pod1.slice:cri-containerd:c1";
  EXPECT_EQ(HealIn(path, "0::" + scope + "\n").result, HealResult::kHealed);
  EXPECT_EQ(HealIn(path, "0::/user.slice/cri-containerd-c1.scope\n").result, HealResult::kReused);
  // Read from the plugin's own cgroup namespace (a pod): the tail counts.
  EXPECT_EQ(HealIn(path,
                   "0::/../../kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/"
                   "cri-containerd-c1.scope\n")
                .result,
            HealResult::kHealed);
  EXPECT_EQ(HealIn(path, "0::/../../user.slice/user-1000.slice/cri-containerd-c1.scope\n").result,
            HealResult::kReused);
}

// containerd names no start time: without a cgroups_path nothing proves it.
TEST(HealProof, NoCgroupsPathAndNoStartTimeIsNotProven) {
  const ProofRun r = HealIn("", "12:memory:/kubepods/besteffort/pod1/c1\n");
  EXPECT_EQ(r.result, HealResult::kReused) << HealResultName(r.result);
  EXPECT_EQ(r.sets, 0);
}

// Issue 44, break 1: the first rule matched at CreateContainer (6M, by a
// fact the heal does not see), the second would match at Synchronize (5M).
// The heal applies the recorded decision, never a new one.
constexpr const char* kTwoRules =
    "[[rule]]\nname = \"cdi\"\nrlimits = [\"memlock=6M:8M\"]\n"
    "match = { annotations = { \"cdi.k8s.io/gpu\" = \"nvidia.com/gpu=all\" } }\n"
    "[[rule]]\nname = \"devices\"\nrlimits = [\"memlock=5M:8M\"]\n"
    "match = { annotations = { \"example.com/heal\" = \"true\" } }\n";

DecisionRecord Recorded(const std::string& id, std::vector<Rlimit> limits, std::string by = "nri") {
  return {
      .id = id, .by = std::move(by), .policy = "old", .time = "T0", .limits = std::move(limits)};
}

TEST(HealDecision, ARecordedDecisionIsKeptWhereThePolicyNowSaysOtherwise) {
  FakeHealOps ops;
  ops.procs[100] = InitOf("c1", {6 * kM, 8 * kM});
  testsupport::FakeDecisions decisions;
  decisions.records["c1"] = Recorded("c1", {{kMemlock, 6 * kM, 8 * kM}});
  RecordingOutput out;
  Healer healer(ops);
  healer.SetDecisions(&decisions);
  healer.Synchronize(MustParse(kTwoRules), OneContainer(kAsks), out, [] { return "T"; });
  EXPECT_EQ(healer.last().of(HealResult::kOk), 1u) << out.said.back();
  EXPECT_EQ(ops.procs[100].limits[kMemlock], (LimitPair{6 * kM, 8 * kM}));
  EXPECT_EQ(ops.sets, 0);
  EXPECT_TRUE(out.lines.empty()) << out.lines[0];
  EXPECT_TRUE(decisions.written.empty()) << "a recorded decision is never replaced";
}

TEST(HealDecision, AnInitThatLostItsRecordedLimitsGetsThemBack) {
  FakeHealOps ops;
  ops.procs[100] = InitOf("c1", {kM, 8 * kM});
  testsupport::FakeDecisions decisions;
  decisions.records["c1"] = Recorded("c1", {{kMemlock, 6 * kM, 8 * kM}});
  RecordingOutput out;
  Healer healer(ops);
  healer.SetDecisions(&decisions);
  healer.Synchronize(MustParse(kTwoRules), OneContainer(kAsks), out, [] { return "T"; });
  EXPECT_EQ(ops.procs[100].limits[kMemlock], (LimitPair{6 * kM, 8 * kM}));
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_EQ(out.lines[0],
            R"(T id="c1" pid=100 via="nri-sync" memlock 1048576:8388608->6291456:8388608 )"
            R"x(warning="the decision recorded when it was created (by nri)")x");
}

TEST(HealDecision, NothingRecordedIsLeftAloneThoughARuleMatchesNow) {
  FakeHealOps ops;
  ops.procs[100] = InitOf("c1", {kM, 8 * kM});
  testsupport::FakeDecisions decisions;
  decisions.records["c1"] = Recorded("c1", {});
  RecordingOutput out;
  Healer healer(ops);
  healer.SetDecisions(&decisions);
  healer.Synchronize(MustParse(kTwoRules), OneContainer(kAsks), out, [] { return "T"; });
  EXPECT_EQ(healer.last().of(HealResult::kNothing), 1u);
  EXPECT_EQ(ops.pidfd_opens, 0);
}

TEST(HealDecision, AContainerWithoutARecordIsDecidedNowAndThatIsRecorded) {
  FakeHealOps ops;
  ops.procs[100] = InitOf("c1", {kM, 8 * kM});
  testsupport::FakeDecisions decisions;
  RecordingOutput out;
  Healer healer(ops);
  healer.SetDecisions(&decisions);
  healer.Synchronize(MustParse(kTwoRules), OneContainer(kAsks), out, [] { return "T"; });
  EXPECT_EQ(ops.procs[100].limits[kMemlock], (LimitPair{5 * kM, 8 * kM}));
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_NE(out.lines[0].find(kNoRecordedDecision), std::string::npos) << out.lines[0];
  ASSERT_TRUE(decisions.records.contains("c1"));
  EXPECT_EQ(decisions.records["c1"].by, kHealVia);
  EXPECT_EQ(decisions.records["c1"].limits, (std::vector<Rlimit>{{kMemlock, 5 * kM, 8 * kM}}));
  EXPECT_EQ(decisions.records["c1"].policy, PolicyDigest(MustParse(kTwoRules)));
}

TEST(HealDecision, ARecordNotBelievedIsSaidAndThePolicyDecides) {
  FakeHealOps ops;
  ops.procs[100] = InitOf("c1", {kM, 8 * kM});
  testsupport::FakeDecisions decisions;
  decisions.read_error = MakeError("is owned by uid 1000, not root: not trusted");
  RecordingOutput out;
  Healer healer(ops);
  healer.SetDecisions(&decisions);
  healer.Synchronize(MustParse(kTwoRules), OneContainer(kAsks), out, [] { return "T"; });
  EXPECT_EQ(ops.procs[100].limits[kMemlock], (LimitPair{5 * kM, 8 * kM}));
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_NE(out.lines[0].find("decision record not believed: is owned by uid 1000"),
            std::string::npos)
      << out.lines[0];
}

TEST(HealDecision, PrunesThePluginsRecordsOfContainersNoLongerListed) {
  FakeHealOps ops;
  ops.procs[100] = InitOf("c1", {6 * kM, 8 * kM});
  testsupport::FakeDecisions decisions;
  decisions.records["c1"] = Recorded("c1", {{kMemlock, 6 * kM, 8 * kM}});
  decisions.records["gone"] = Recorded("gone", {});
  decisions.records["healed-gone"] = Recorded("healed-gone", {}, "nri-sync");
  decisions.records["in-flight"] = Recorded("in-flight", {}, "wrapper");
  decisions.records["p1"] = Recorded("p1", {}, "wrapper");
  decisions.records["young"] = Recorded("young", {});
  decisions.records["no-time"] = Recorded("no-time", {});
  for (auto& [id, d] : decisions.records) d.time = "2026-12-07T21:00:00Z";
  decisions.records["young"].time = "2026-12-07T21:55:01Z";  // within kPruneGrace
  decisions.records["no-time"].time = "T0";
  RecordingOutput out;
  Healer healer(ops);
  healer.SetDecisions(&decisions);
  healer.Synchronize(MustParse(kTwoRules), OneContainer(kAsks), out,
                     [] { return "2026-12-07T22:05:00Z"; });
  EXPECT_EQ(decisions.removed, (std::vector<std::string>{"gone", "healed-gone"}));
  EXPECT_TRUE(decisions.records.contains("c1"));
  EXPECT_TRUE(decisions.records.contains("in-flight")) << "the wrapper's are its own to remove";
  EXPECT_TRUE(decisions.records.contains("young")) << "a create may be in flight";
  EXPECT_TRUE(decisions.records.contains("no-time"));
}

}  // namespace
}  // namespace ocirlimit::nri
