// oci-rlimit-nri as a process, against a scripted runtime on a real unix
// socket (the runtime's side written with the plugin's own wire code, which
// has its own table tests; containerd itself is in tests/cri/nri_test.cc):
// a bad command line or config exits 2 before connecting, SIGHUP reloads,
// and a bad new config is refused with one line while the old one stays.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "adapters/nri/facts.h"
#include "daemons.h"
#include "harness.h"
#include "nri/test_runtime.h"
#include "nri/wire.h"

namespace ocirlimit::itest {
namespace {

namespace nri = ::ocirlimit::nri;

std::string Plugin() { return OurBinary("oci-rlimit-nri"); }

// A listening unix socket standing in for the runtime's NRI socket.
class FakeRuntime {
 public:
  explicit FakeRuntime(const std::string& path) {
    listen_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    EXPECT_EQ(bind(listen_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(listen_, 4), 0);
  }
  ~FakeRuntime() {
    if (conn_ >= 0) close(conn_);
    close(listen_);
  }
  FakeRuntime(const FakeRuntime&) = delete;
  FakeRuntime& operator=(const FakeRuntime&) = delete;

  // True when a plugin has connected (waiting up to ms).
  bool Pending(int ms) {
    pollfd p{listen_, POLLIN, 0};
    return poll(&p, 1, ms) == 1;
  }

  // Accepts, answers RegisterPlugin, and has the plugin configured.
  ::testing::AssertionResult Accept() {
    if (!Pending(10000)) return ::testing::AssertionFailure() << "the plugin did not connect";
    conn_ = accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
    timeval tv{5, 0};
    setsockopt(conn_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    auto reg = Next();
    if (!reg || reg->conn != nri::kRuntimeConn) {
      return ::testing::AssertionFailure() << "no RegisterPlugin";
    }
    Send(nri::testing::RuntimeReply(reg->msg.stream_id, {}));
    nri::pb::ConfigureRequest c;
    c.set_runtime_name("fake");
    auto resp = Call("Configure", c.SerializeAsString());
    if (!resp) return ::testing::AssertionFailure() << "no Configure reply";
    return ::testing::AssertionSuccess();
  }

  // One call on connection 1; its reply.
  std::optional<nri::Response> Call(const std::string& method, const std::string& payload) {
    uint32_t id = next_;
    next_ += 2;
    Send(nri::testing::RuntimeCall(id, method, payload));
    auto got = Next();
    if (!got || got->conn != nri::kPluginConn || got->msg.stream_id != id) return std::nullopt;
    auto resp = nri::DecodeResponse(got->msg.payload);
    if (!resp) return std::nullopt;
    return *resp;
  }

  // The memlock the plugin answers a CreateContainer with, as "soft:hard".
  std::string CreateMemlock() {
    nri::pb::CreateContainerRequest req;
    req.mutable_container()->set_id("c1");
    auto resp = Call("CreateContainer", req.SerializeAsString());
    if (!resp) return "no reply";
    if (resp->status.code != 0) return "error: " + resp->status.message;
    nri::pb::CreateContainerResponse r;
    if (!r.ParseFromString(resp->payload)) return "bad reply";
    for (const auto& l : r.adjust().rlimits()) {
      if (l.type() == "RLIMIT_MEMLOCK")
        return std::to_string(l.soft()) + ":" + std::to_string(l.hard());
    }
    return "none";
  }

 private:
  void Send(const std::string& bytes) {
    ASSERT_EQ(write(conn_, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  std::optional<nri::testing::Sent> Next() {
    for (;;) {
      auto sent = nri::testing::ParseSent(buffer_);
      if (sent.size() > taken_) return sent[taken_++];
      char buf[65536];
      ssize_t n = read(conn_, buf, sizeof buf);
      if (n <= 0) return std::nullopt;
      buffer_.append(buf, static_cast<size_t>(n));
    }
  }

  int listen_ = -1;
  int conn_ = -1;
  uint32_t next_ = 1;
  std::string buffer_;
  size_t taken_ = 0;
};

struct BadStart {
  std::string name;
  std::vector<std::string> args;  // after --socket S (and --config C when config is set)
  std::string config;             // written to C when not empty
  std::string error;              // how the one line on stderr begins, after "oci-rlimit-nri: "
};

void PrintTo(const BadStart& c, std::ostream* os) { *os << c.name; }

class BadStartTable : public ::testing::TestWithParam<BadStart> {};

TEST_P(BadStartTable, OneLineAndExit2BeforeConnecting) {
  TempDir dir;
  FakeRuntime runtime(dir / "nri.sock");
  std::vector<std::string> argv = {Plugin(), "--socket", dir / "nri.sock"};
  if (!GetParam().config.empty()) {
    WriteFile(dir / "c.toml", GetParam().config);
    argv.insert(argv.end(), {"--config", dir / "c.toml"});
  }
  argv.insert(argv.end(), GetParam().args.begin(), GetParam().args.end());
  RunOptions opts;
  opts.timeout_s = 10;
  CmdResult r = RunCmd(argv, opts);
  EXPECT_EQ(r.status, 2);
  std::string err = r.err;
  if (size_t at = err.find(dir / "c.toml"); at != std::string::npos) {
    err.replace(at, (dir / "c.toml").size(), "CONFIG");
  }
  EXPECT_TRUE(err.starts_with("oci-rlimit-nri: " + GetParam().error)) << err;
  EXPECT_EQ(err.find('\n'), err.size() - 1) << "one line: " << err;
  EXPECT_FALSE(runtime.Pending(0)) << "it connected before exiting";
}

INSTANTIATE_TEST_SUITE_P(
    Nri, BadStartTable,
    ::testing::Values(
        BadStart{"UnknownFlag", {"--verbose"}, "", "unknown flag \"--verbose\""},
        BadStart{"BadIndex", {"--index", "7"}, "", "--index \"7\": must be two digits, e.g. 10"},
        BadStart{"BadRlimit",
                 {},
                 "rlimits = [\"memlok=1M\"]\n",
                 "config \"CONFIG\": rlimits: rlimit \"memlok=1M\": unknown name \"memlok\""},
        BadStart{"NotToml", {}, "rlimits = [\n", "config \"CONFIG\": line 1: "},
        BadStart{"MissingNamedConfig",
                 {"--config", "/nonexistent/oci.toml"},
                 "",
                 "config: open \"/nonexistent/oci.toml\": No such file or directory"}),
    [](const auto& info) { return info.param.name; });

// Waits until `path` contains `needle`.
bool WaitFor(const std::string& path, const std::string& needle) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ReadFile(path).find(needle) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

TEST(NriPlugin, ReloadRefusesABadConfigAndKeepsTheOldOne) {
  TempDir dir;
  FakeRuntime runtime(dir / "nri.sock");
  const std::string config = dir / "c.toml";
  WriteFile(config, "rlimits = [\"memlock=1M\"]\n");
  BackgroundProcess plugin;
  auto err = plugin.Start({Plugin(), "--config", config, "--socket", dir / "nri.sock",
                           "--status-file", dir / "nri.status"},
                          {}, dir / "plugin.log");
  ASSERT_FALSE(err) << *err;
  ASSERT_TRUE(runtime.Accept()) << ReadFile(dir / "plugin.log");
  EXPECT_EQ(runtime.CreateMemlock(), "1048576:1048576");

  WriteFile(config, "rlimits = [\"memlock=lots\"]\n");
  ASSERT_EQ(kill(plugin.pid(), SIGHUP), 0);
  ASSERT_TRUE(WaitFor(dir / "plugin.log", "reload refused")) << ReadFile(dir / "plugin.log");
  EXPECT_EQ(runtime.CreateMemlock(), "1048576:1048576") << "the old config stays in force";

  WriteFile(config, "rlimits = [\"memlock=2M\"]\n");
  ASSERT_EQ(kill(plugin.pid(), SIGHUP), 0);
  ASSERT_TRUE(WaitFor(dir / "plugin.log", "config reloaded")) << ReadFile(dir / "plugin.log");
  EXPECT_EQ(runtime.CreateMemlock(), "2097152:2097152");

  std::string log = ReadFile(dir / "plugin.log");
  size_t at = log.find("oci-rlimit-nri: reload refused");
  ASSERT_NE(at, std::string::npos);
  std::string line = log.substr(at, log.find('\n', at) - at);
  EXPECT_NE(line.find("rlimit \"memlock=lots\""), std::string::npos) << line;
  EXPECT_TRUE(plugin.Running());
}

}  // namespace
}  // namespace ocirlimit::itest
