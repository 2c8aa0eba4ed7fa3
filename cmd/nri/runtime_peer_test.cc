// A limit the runtime cannot raise at CreateContainer (nri/runtime_peer.h):
// the runtime's CapEff, the one message, the plugin's log line, and the
// connection loop handing each connection's peer to the flow first.
#include "effects/runtime_peer.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "adapters/nri/facts.h"
#include "nri/output_fake_test.h"
#include "nri/plugin.h"
#include "nri/serve.h"
#include "tests/testing/case_name.h"

namespace ocirlimit::nri {
namespace {

struct CapCase {
  std::string name;
  std::string status;
  std::optional<bool> want;
};

// Test names, not hex dumps, when a case fails.
void PrintTo(const CapCase& c, std::ostream* os) { *os << c.name; }

class CapEffTable : public ::testing::TestWithParam<CapCase> {};

TEST_P(CapEffTable, ReadsBit24OfCapEff) {
  EXPECT_EQ(CapEffHasSysResource(GetParam().status), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    RuntimePeer, CapEffTable,
    ::testing::Values(
        CapCase{"FullRoot", "Name:\tcontainerd\nCapInh:\t0\nCapEff:\t000001ffffffffff\n", true},
        CapCase{"OnlyBit24", "Name:\tx\nCapEff:\t0000000001000000\nCapBnd:\tf\n", true},
        CapCase{"AllBelowBit24", "Name:\tx\nCapEff:\t0000000000ffffff\n", false},
        CapCase{"AllButBit24", "Name:\tx\nCapEff:\t000001fffeffffff\n", false},
        CapCase{"None", "Name:\tx\nCapEff:\t0000000000000000\n", false},
        CapCase{"NoLine", "Name:\tx\nCapPrm:\t000001ffffffffff\n", std::nullopt},
        CapCase{"NotHex", "Name:\tx\nCapEff:\tzz\n", std::nullopt},
        CapCase{"TrailingJunk", "Name:\tx\nCapEff:\t01000000 x\n", std::nullopt}),
    CaseName{});

Rlimit Memlock(uint64_t soft, uint64_t hard) { return {RLIMIT_MEMLOCK, soft, hard}; }

constexpr const char* kWho = "the runtime on the NRI socket (containerd, pid 7)";
constexpr uint64_t kM = 1 << 20;

RuntimeLimits Runtime(bool can_raise) {
  return {kWho, {Memlock(kM, 8 * kM), {RLIMIT_NOFILE, 1024, 4096}}, can_raise};
}

TEST(RuntimePeer, AHardLimitAboveTheRuntimesGetsTheOneMessage) {
  EXPECT_EQ(UnraisableByRuntime({Memlock(16 * kM, 16 * kM)}, Runtime(false)),
            "config entry memlock=16M: the hard limit in force is 8M, and raising it needs "
            "CAP_SYS_RESOURCE, which the runtime on the NRI socket (containerd, pid 7) does not "
            "have; memlock=8M would work (or run the container engine with CAP_SYS_RESOURCE)");
}

TEST(RuntimePeer, NothingToSayWhenTheRuntimeCanRaiseOrNeedNot) {
  EXPECT_EQ(UnraisableByRuntime({Memlock(16 * kM, 16 * kM)}, Runtime(true)), std::nullopt)
      << "CAP_SYS_RESOURCE";
  EXPECT_EQ(UnraisableByRuntime({Memlock(8 * kM, 8 * kM)}, Runtime(false)), std::nullopt)
      << "the hard limit in force itself";
  EXPECT_EQ(UnraisableByRuntime({{RLIMIT_CORE, 0, 0}}, Runtime(false)), std::nullopt)
      << "a type the runtime's limits lack";
}

std::string Create(const std::string& handler = "") {
  pb::CreateContainerRequest req;
  req.mutable_pod()->set_runtime_handler(handler);
  req.mutable_pod()->set_name("web");
  req.mutable_pod()->set_namespace_("default");
  req.mutable_container()->set_id("c0ffee");
  req.mutable_container()->set_name("app");
  return req.SerializeAsString();
}

struct PluginHarness {
  explicit PluginHarness(const std::string& toml) : cfg(MustParse(toml)) {}
  Config cfg;
  RecordingOutput out;
  NriPlugin plugin{[this]() -> const Config& { return cfg; }, out, [] { return "T"; }};
};

TEST(RuntimePeer, CreateContainerLogsTheMessageAndStillAnswersThePolicy) {
  PluginHarness h("rlimits = ['memlock=16M']");
  h.plugin.SetRuntime(Runtime(false));
  Reply r = h.plugin.Call("CreateContainer", Create());
  EXPECT_EQ(r.status.code, 0) << "it cannot refuse more than the policy says";
  pb::CreateContainerResponse resp;
  ASSERT_TRUE(resp.ParseFromString(r.payload));
  ASSERT_EQ(resp.adjust().rlimits_size(), 1);
  EXPECT_EQ(resp.adjust().rlimits(0).hard(), 16 * kM);
  ASSERT_EQ(h.out.lines.size(), 1u);
  EXPECT_EQ(h.out.lines[0],
            R"(T id="c0ffee" via="nri" set memlock=unreported->16777216:16777216 )"
            R"x(warning="config entry memlock=16M: the hard limit in force is 8M, and raising it )x"
            R"x(needs CAP_SYS_RESOURCE, which the runtime on the NRI socket (containerd, pid 7) )x"
            R"x(does not have; memlock=8M would work (or run the container engine with )x"
            R"x(CAP_SYS_RESOURCE)")x");
}

TEST(RuntimePeer, CreateContainerSaysNothingMoreWithoutARuntimeOrWithinIt) {
  for (const bool known : {false, true}) {
    PluginHarness h("rlimits = ['memlock=8M']");
    if (known) h.plugin.SetRuntime(Runtime(false));
    (void)h.plugin.Call("CreateContainer", Create());
    ASSERT_EQ(h.out.lines.size(), 1u);
    EXPECT_EQ(h.out.lines[0], R"(T id="c0ffee" via="nri" set memlock=unreported->8388608:8388608)");
  }
  PluginHarness unknown("rlimits = ['memlock=16M']");
  (void)unknown.plugin.Call("CreateContainer", Create());
  ASSERT_EQ(unknown.out.lines.size(), 1u);
  EXPECT_EQ(unknown.out.lines[0].find("warning="), std::string::npos) << "no runtime read";
}

// A pod of the installer's handler: the wrapper edits the spec after NRI,
// and the line says so (docs/nri.md, "A node with both the NRI plugin and
// the RuntimeClass handler").
TEST(HandlerNote, APodOfOurHandlerSaysTheWrapperSetsTheLimitsLast) {
  Config cfg = MustParse("rlimits = ['memlock=8M']");
  cfg.source = "/etc/oci-rlimit/config.toml";
  RecordingOutput out;
  NriPlugin plugin{[&]() -> const Config& { return cfg; }, out, [] { return "T"; }};
  (void)plugin.Call("CreateContainer", Create("oci-rlimit"));
  cfg.source = "/etc/oci-rlimit-nri/config.toml";
  (void)plugin.Call("CreateContainer", Create("oci-rlimit"));
  (void)plugin.Call("CreateContainer", Create("runc"));
  ASSERT_EQ(out.lines.size(), 3u);
  const std::string set = R"(T id="c0ffee" via="nri" set memlock=unreported->8388608:8388608)";
  EXPECT_EQ(out.lines[0],
            set + R"x( warning="runtime handler \"oci-rlimit\": oci-rlimit-runtime sets the )x"
                  R"x(limits again when runc is called, after NRI, from the same config )x"
                  R"x(\"/etc/oci-rlimit/config.toml\": the container gets these limits")x");
  EXPECT_EQ(out.lines[1],
            set + R"x( warning="runtime handler \"oci-rlimit\": oci-rlimit-runtime sets the )x"
                  R"x(limits again when runc is called, after NRI, from )x"
                  R"x(\"/etc/oci-rlimit/config.toml\", not \"/etc/oci-rlimit-nri/config.toml\": )x"
                  R"x(where they differ, the container gets the handler's limits")x");
  EXPECT_EQ(out.lines[2], set) << "another handler: NRI's limits are the container's";
}

// The connection loop hands each connection to on_connect before it makes
// that connection's session, so the plugin knows its runtime from the start.
class PeerConn : public Conn {
 public:
  Result<Wake> Wait(int) override { return Wake::kSignal; }
  Result<ReadResult> Read() override { return ReadResult{"", true}; }
  Status Write(std::string_view, int) override { return Ok{}; }
  std::optional<PeerCred> Peer() const override { return PeerCred{4242, 0}; }
};
class PeerConnector : public Connector {
 public:
  Result<std::unique_ptr<Conn>> Connect() override { return std::unique_ptr<Conn>(new PeerConn); }
  Wake Sleep(int) override { return Wake::kSignal; }
};
class NoService : public PluginService {
 public:
  Reply Call(std::string_view, std::string_view) override { return {}; }
};

TEST(RuntimePeer, ServeHandsThePeerToOnConnectBeforeTheSession) {
  NoService svc;
  std::vector<std::string> events;
  ServeOptions opt;
  opt.on_signal = [] { return true; };
  opt.say = [](const std::string&) {};
  opt.on_connect = [&](const Conn& c) {
    events.push_back("connect pid " + std::to_string(c.Peer() ? c.Peer()->pid : 0));
  };
  opt.new_session = [&] {
    events.emplace_back("session");
    return std::make_unique<Session>(svc, "reg");
  };
  PeerConnector connector;
  EXPECT_EQ(Serve(connector, opt), 0);
  EXPECT_EQ(events, (std::vector<std::string>{"connect pid 4242", "session"}));
}

}  // namespace
}  // namespace ocirlimit::nri
