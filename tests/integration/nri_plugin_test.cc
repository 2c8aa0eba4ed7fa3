// oci-rlimit-nri as a process, against a scripted runtime on a real unix
// socket (the runtime's side is the shared NRI peer, tests/testing/nri_peer.h,
// on the plugin's own wire code, which has its own table tests; containerd
// itself is in tests/cri/nri_test.cc):
// a bad command line or config exits 2 before connecting, SIGHUP reloads,
// and a bad new config is refused with one line while the old one stays; a
// stderr nobody reads never delays a reply; a reply too late or never
// written is logged as not applied.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "adapters/nri/facts.h"
#include "daemons.h"
#include "harness.h"
#include "nri/session.h"
#include "nri/wire.h"
#include "tests/testing/deep_toml.h"
#include "tests/testing/log_record.h"
#include "tests/testing/nri_peer.h"

namespace ocirlimit::itest {
namespace {

namespace nri = ::ocirlimit::nri;

std::string Plugin() { return OurBinary("oci-rlimit-nri"); }

// A listening unix socket standing in for the runtime's NRI socket; the
// connection it accepts is spoken through the shared NRI peer.
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
    peer_.emplace(conn_);
    auto reg = peer_->Next();
    if (!reg || reg->conn != nri::kRuntimeConn) {
      return ::testing::AssertionFailure() << "no RegisterPlugin";
    }
    if (!peer_->Send(testsupport::RuntimeReply(reg->msg.stream_id, {}))) {
      return ::testing::AssertionFailure() << "could not answer RegisterPlugin";
    }
    nri::pb::ConfigureRequest c;
    c.set_runtime_name("fake");
    auto resp = Call("Configure", c.SerializeAsString());
    if (!resp) return ::testing::AssertionFailure() << "no Configure reply";
    return ::testing::AssertionSuccess();
  }

  // One call on connection 1; its reply.
  std::optional<nri::Response> Call(const std::string& method, const std::string& payload) {
    return peer_->Call(method, payload);
  }

  // A CreateContainer for `id` whose ttrpc deadline (timeout_nano) is
  // `timeout_ns`; its reply.
  std::optional<nri::Response> CreateWithTimeout(const std::string& id, int64_t timeout_ns) {
    nri::pb::CreateContainerRequest req;
    req.mutable_container()->set_id(id);
    return peer_->Call("CreateContainer", req.SerializeAsString(), timeout_ns);
  }

  // A CreateContainer for `id` whose container carries `annotations`; the
  // memlock of its reply, as CreateMemlock says it.
  std::string CreateMemlockWith(const std::string& id,
                                const std::map<std::string, std::string>& annotations) {
    nri::pb::CreateContainerRequest req;
    req.mutable_container()->set_id(id);
    for (const auto& [k, v] : annotations) (*req.mutable_container()->mutable_annotations())[k] = v;
    return MemlockOf(Call("CreateContainer", req.SerializeAsString()));
  }

  // Sends a CreateContainer for `id` and closes the connection at once, as
  // a runtime that gave up on the plugin does: the reply cannot be written.
  // The reply can never be written: the read side is shut before the request
  // goes out, so the plugin's write fails with EPIPE however the two
  // processes are scheduled (a plain close after the send raced the reply).
  void CreateAndHangUp(const std::string& id) {
    nri::pb::CreateContainerRequest req;
    req.mutable_container()->set_id(id);
    ASSERT_EQ(shutdown(conn_, SHUT_RD), 0);
    ASSERT_TRUE(peer_->Send(
        testsupport::RuntimeCall(peer_->NewStream(), "CreateContainer", req.SerializeAsString())));
    peer_.reset();
    close(conn_);
    conn_ = -1;
  }

  // The memlock the plugin answers a CreateContainer with, as "soft:hard".
  std::string CreateMemlock() { return CreateMemlockWith("c1", {}); }

  // A reply's memlock, as "soft:hard", "none", or what went wrong.
  static std::string MemlockOf(const std::optional<nri::Response>& resp) {
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
  int listen_ = -1;
  int conn_ = -1;
  std::optional<testsupport::RuntimePeer> peer_;
};

struct BadStart {
  std::string name;
  std::vector<std::string> args;  // after --socket S (and --config C when config is set)
  std::string config;             // written to C when not empty
  std::string error;              // how the one line on stderr begins, after "oci-rlimit-nri: "
  std::string dropin = "";        // written to C's config.d when not empty
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
  if (!GetParam().dropin.empty()) {
    std::filesystem::create_directories(dir / "c.d");
    WriteFile(dir / "c.d/50-deep.toml", GetParam().dropin);
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
        BadStart{"MetricsAddressAName",
                 {"--metrics-address", "localhost:9464"},
                 "",
                 "--metrics-address \"localhost:9464\": the host must be an IP address"},
        // Served before connecting: an address it cannot bind is exit 2 too.
        BadStart{"MetricsAddressUnbindable",
                 {"--metrics-address", "unix:/nonexistent/oci-rlimit-test/m.sock"},
                 "rlimits = [\"nofile=1024\"]\n",
                 "--metrics-address: bind \"/nonexistent/oci-rlimit-test/m.sock\": "},
        BadStart{"BadRlimit",
                 {},
                 "rlimits = [\"memlok=1M\"]\n",
                 "config \"CONFIG\": rlimits: rlimit \"memlok=1M\": unknown name \"memlok\""},
        BadStart{"NotToml", {}, "rlimits = [\n", "config \"CONFIG\": line 1: "},
        // toml++ recursed once per level of these and crashed (SIGSEGV).
        BadStart{"DeepDottedKey",
                 {},
                 testsupport::DeepTomlDottedKey(),
                 "config \"CONFIG\": line 1, column 200: keys nested deeper than 100 levels"},
        BadStart{"DeepHeaderInADropIn",
                 {},
                 "rlimits = [\"memlock=1M\"]\n",
                 "config \"",
                 testsupport::DeepTomlHeader()},
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

// A ConfigMap mounted whole, as kubelet updates it: config.toml -> ..data/config.toml, and ..data
// swapped atomically to a new directory. The plugin reloads without a SIGHUP, its metrics name the
// new policy's digest, and on SIGTERM it removes its status file (nothing of it stays on the node).
TEST(NriPlugin, AConfigMapSwappedInPlaceIsReloadedAndTheStatusFileGoesAtExit) {
  TempDir dir;
  FakeRuntime runtime(dir / "nri.sock");
  const std::string mount = dir / "cm";
  std::filesystem::create_directories(mount + "/..v1");
  WriteFile(mount + "/..v1/config.toml", "rlimits = [\"memlock=1M\"]\n");
  std::filesystem::create_directory_symlink("..v1", mount + "/..data");
  std::filesystem::create_symlink("..data/config.toml", mount + "/config.toml");
  BackgroundProcess plugin;
  auto err = plugin.Start(
      {Plugin(), "--config", mount + "/config.toml", "--socket", dir / "nri.sock", "--status-file",
       dir / "run/nri.status", "--metrics-address", "unix:" + (dir / "m.sock")},
      {}, dir / "plugin.log");
  ASSERT_FALSE(err) << *err;
  ASSERT_TRUE(runtime.Accept()) << ReadFile(dir / "plugin.log");
  EXPECT_EQ(runtime.CreateMemlock(), "1048576:1048576");
  const std::string before =
      RunCmd({"curl", "-s", "--unix-socket", dir / "m.sock", "http://x/metrics"}).out;
  EXPECT_NE(before.find("oci_rlimit_policy_info{program=\"oci-rlimit-nri\",digest=\""),
            std::string::npos)
      << before;

  std::filesystem::create_directories(mount + "/..v2");
  WriteFile(mount + "/..v2/config.toml", "rlimits = [\"memlock=2M\"]\n");
  std::filesystem::create_directory_symlink("..v2", mount + "/..data_tmp");
  std::filesystem::rename(mount + "/..data_tmp", mount + "/..data");
  ASSERT_TRUE(WaitFor(dir / "plugin.log", "config reloaded")) << ReadFile(dir / "plugin.log");
  EXPECT_NE(ReadFile(dir / "plugin.log").find("(its files changed)"), std::string::npos);
  EXPECT_EQ(runtime.CreateMemlock(), "2097152:2097152");
  const std::string after =
      RunCmd({"curl", "-s", "--unix-socket", dir / "m.sock", "http://x/metrics"}).out;
  auto digest = [](const std::string& page) {
    const auto at = page.find("oci_rlimit_policy_info{");
    return at == std::string::npos ? std::string() : page.substr(at, page.find('\n', at) - at);
  };
  EXPECT_NE(digest(after), "");
  EXPECT_NE(digest(after), digest(before)) << after;

  EXPECT_TRUE(std::filesystem::exists(dir / "run/nri.status"));
  plugin.Stop();  // SIGTERM, as kubelet stops the pod
  EXPECT_FALSE(std::filesystem::exists(dir / "run/nri.status")) << ReadFile(dir / "plugin.log");
}

// A drop-in nested past the guard, as a dotted key and as a [table] header:
// before the guard, toml++ crashed on these (SIGSEGV) and the plugin died.
struct DeepDropIn {
  std::string name;
  std::string text;
  std::string where;  // the guard's "line L, column C"
};
void PrintTo(const DeepDropIn& c, std::ostream* os) { *os << c.name; }

class NriPluginDeepReload : public ::testing::TestWithParam<DeepDropIn> {};

TEST_P(NriPluginDeepReload, ReloadRefusesADeepDropInAndKeepsTheOldConfig) {
  TempDir dir;
  FakeRuntime runtime(dir / "nri.sock");
  const std::string config = dir / "c.toml";
  WriteFile(config, "rlimits = [\"memlock=1M\"]\n");
  BackgroundProcess plugin;
  auto err = plugin.Start({Plugin(), "--config", config, "--socket", dir / "nri.sock"}, {},
                          dir / "plugin.log");
  ASSERT_FALSE(err) << *err;
  ASSERT_TRUE(runtime.Accept()) << ReadFile(dir / "plugin.log");
  EXPECT_EQ(runtime.CreateMemlock(), "1048576:1048576");

  std::filesystem::create_directories(dir / "c.d");
  WriteFile(dir / "c.d/50-deep.toml", GetParam().text);
  ASSERT_EQ(kill(plugin.pid(), SIGHUP), 0);
  ASSERT_TRUE(WaitFor(dir / "plugin.log", "reload refused")) << ReadFile(dir / "plugin.log");
  EXPECT_TRUE(plugin.Running());
  EXPECT_EQ(runtime.CreateMemlock(), "1048576:1048576") << "the old config stays in force";
  const std::string log = ReadFile(dir / "plugin.log");
  const std::string line =
      "oci-rlimit-nri: reload refused, the old config stays in force: "
      "config \"" +
      (dir / "c.d/50-deep.toml") + "\": " + GetParam().where +
      ": keys nested deeper than 100 levels";
  const size_t at = log.find(line);
  ASSERT_NE(at, std::string::npos) << log;
  EXPECT_TRUE(at == 0 || log[at - 1] == '\n') << "not a line of its own: " << log;
  const size_t end = log.find('\n', at);
  ASSERT_NE(end, std::string::npos) << log;
  EXPECT_TRUE(log.substr(at, end - at).ends_with("; the limit is 100")) << "one line: " << log;
}

INSTANTIATE_TEST_SUITE_P(Nri, NriPluginDeepReload,
                         ::testing::Values(DeepDropIn{"DottedKey", testsupport::DeepTomlDottedKey(),
                                                      "line 1, column 200"},
                                           DeepDropIn{"Header", testsupport::DeepTomlHeader(),
                                                      "line 1, column 201"}),
                         [](const auto& info) { return info.param.name; });

// A config.d drop-in gone when it is opened (a dangling symlink, or removed
// after the directory was listed), at start and on a reload: skipped with
// one warning line each time, the rest of the config applied.
TEST(NriPlugin, ADropInGoneIsSkippedWithOneWarningAndTheRestApplies) {
  TempDir dir;
  FakeRuntime runtime(dir / "nri.sock");
  const std::string config = dir / "c.toml";
  WriteFile(config, "rlimits = [\"memlock=1M\"]\n");
  std::filesystem::create_directories(dir / "c.d");
  std::filesystem::create_symlink(dir / "c.d/20-gone.toml.tmp", dir / "c.d/20-gone.toml");
  BackgroundProcess plugin;
  auto err = plugin.Start({Plugin(), "--config", config, "--socket", dir / "nri.sock"}, {},
                          dir / "plugin.log");
  ASSERT_FALSE(err) << *err;
  ASSERT_TRUE(runtime.Accept()) << ReadFile(dir / "plugin.log");
  EXPECT_EQ(runtime.CreateMemlock(), "1048576:1048576");
  const std::string warning =
      "oci-rlimit-nri: warning: config drop-in \"" + (dir / "c.d/20-gone.toml") + "\" is gone";
  auto warnings = [&] {
    std::vector<std::string> out;
    std::istringstream lines(ReadFile(dir / "plugin.log"));
    for (std::string line; std::getline(lines, line);) {
      if (line.find("20-gone.toml") != std::string::npos) out.push_back(line);
    }
    return out;
  };
  ASSERT_EQ(warnings().size(), 1u) << ReadFile(dir / "plugin.log");
  EXPECT_TRUE(warnings()[0].starts_with(warning)) << warnings()[0];

  WriteFile(config, "rlimits = [\"memlock=2M\"]\n");
  ASSERT_EQ(kill(plugin.pid(), SIGHUP), 0);
  ASSERT_TRUE(WaitFor(dir / "plugin.log", "config reloaded")) << ReadFile(dir / "plugin.log");
  EXPECT_EQ(runtime.CreateMemlock(), "2097152:2097152");
  ASSERT_EQ(warnings().size(), 2u) << ReadFile(dir / "plugin.log");
  EXPECT_TRUE(warnings()[1].starts_with(warning)) << warnings()[1];
  EXPECT_TRUE(plugin.Running());
}

// A request value forging log records (a quote, a backslash, U+2028, U+0085,
// U+202E): the log-file line is one record with them escaped, and under
// on-error = "warn" the container gets the node's limits.
TEST(NriPlugin, ARequestForgingALogRecordIsOneEscapedLine) {
  TempDir dir;
  FakeRuntime runtime(dir / "nri.sock");
  const std::string config = dir / "c.toml";
  WriteFile(config, "rlimits = [\"memlock=1M\"]\non-error = \"warn\"\nlog-file = \"" +
                        (dir / "decisions.log") +
                        "\"\n[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\n");
  BackgroundProcess plugin;
  auto err = plugin.Start({Plugin(), "--config", config, "--socket", dir / "nri.sock"}, {},
                          dir / "plugin.log");
  ASSERT_FALSE(err) << *err;
  ASSERT_TRUE(runtime.Accept()) << ReadFile(dir / "plugin.log");
  EXPECT_EQ(
      runtime.CreateMemlockWith("c1", {{"oci-rlimit.io/rlimits", testsupport::HostileRequest()}}),
      "1048576:1048576");
  ASSERT_TRUE(WaitFor(dir / "decisions.log", "\n")) << ReadFile(dir / "plugin.log");
  testsupport::ExpectOneEscapedRecord(dir / "decisions.log");
  EXPECT_TRUE(plugin.Running());
}

// The plugin with its stderr a pipe nobody reads (a supervisor that stopped
// reading): before the output queue it answered about 800 calls, then
// stalled in write(2) and missed the runtime's deadline.
TEST(NriPlugin, AnUndrainedStderrPipeNeverDelaysAReply) {
  TempDir dir;
  FakeRuntime runtime(dir / "nri.sock");
  const std::string config = dir / "c.toml";
  WriteFile(config, "rlimits = [\"memlock=1M\"]\nlog-file = \"" + (dir / "decisions.log") + "\"\n");
  int err_pipe[2];
  ASSERT_EQ(pipe2(err_pipe, O_CLOEXEC), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(err_pipe[1], STDERR_FILENO);
    const std::string plugin = Plugin();
    const std::string sock = dir / "nri.sock";
    execl(plugin.c_str(), plugin.c_str(), "--config", config.c_str(), "--socket", sock.c_str(),
          nullptr);
    _exit(127);
  }
  close(err_pipe[1]);  // err_pipe[0] stays open, never read: writes block once it is full
  ASSERT_TRUE(runtime.Accept());
  int64_t slowest_ms = 0;
  int answered = 0;
  for (int i = 0; i < 2000; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto resp = runtime.CreateWithTimeout("c" + std::to_string(i), 2000000000);
    auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    if (!resp) break;
    ++answered;
    slowest_ms = std::max<int64_t>(slowest_ms, ms);
  }
  EXPECT_EQ(answered, 2000);
  EXPECT_LT(slowest_ms, 2000) << "a reply missed the runtime's 2 s deadline";
  RecordProperty("slowest_reply_ms", std::to_string(slowest_ms));
  // The log-file has its own writer: every decision is there.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  size_t lines = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string log = ReadFile(dir / "decisions.log");
    lines = static_cast<size_t>(std::count(log.begin(), log.end(), '\n'));
    if (lines >= 2000) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(lines, 2000u);
  // What the pipe could not take waited in the queue (2,000 lines fit in its
  // 4,096): once someone reads again, every line comes, none dropped.
  char buf[1 << 16];
  std::string err;
  fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
  auto read_until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (err.find("id=\"c1999\"") == std::string::npos &&
         std::chrono::steady_clock::now() < read_until) {
    ssize_t n = read(err_pipe[0], buf, sizeof buf);
    if (n > 0) {
      err.append(buf, static_cast<size_t>(n));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  close(err_pipe[0]);
  EXPECT_NE(err.find("id=\"c1999\""), std::string::npos) << err.substr(err.size() - 500);
  EXPECT_EQ(err.find(" dropped="), std::string::npos);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

TEST(NriPlugin, AReplyPastItsDeadlineOrNeverWrittenIsLoggedAsNotApplied) {
  TempDir dir;
  FakeRuntime runtime(dir / "nri.sock");
  const std::string config = dir / "c.toml";
  const std::string decisions = dir / "decisions.log";
  WriteFile(config, "rlimits = [\"memlock=1M\"]\nlog-file = \"" + decisions + "\"\n");
  BackgroundProcess plugin;
  auto err = plugin.Start({Plugin(), "--config", config, "--socket", dir / "nri.sock"}, {},
                          dir / "plugin.log");
  ASSERT_FALSE(err) << *err;
  ASSERT_TRUE(runtime.Accept()) << ReadFile(dir / "plugin.log");
  ASSERT_TRUE(runtime.CreateWithTimeout("on-time", 2000000000).has_value());
  // A deadline of 1 us: no reply makes it, and the plugin knows.
  ASSERT_TRUE(runtime.CreateWithTimeout("late", 1000).has_value());
  runtime.CreateAndHangUp("unsent");
  ASSERT_TRUE(WaitFor(decisions, "id=\"unsent\"")) << ReadFile(decisions);
  const std::string log = ReadFile(decisions);
  EXPECT_NE(log.find("id=\"on-time\" via=\"nri\" set memlock=unreported->1048576:1048576"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("id=\"late\" via=\"nri\" unapplied error=\"the reply was written "),
            std::string::npos)
      << log;
  EXPECT_NE(
      log.find("past the runtime's 0 ms deadline; the runtime may have created container "
               "\\\"late\\\" unadjusted\" verdict=\"set memlock=unreported->1048576:1048576\""),
      std::string::npos)
      << log;
  EXPECT_NE(log.find("id=\"unsent\" via=\"nri\" unapplied error=\"the reply was not written ("),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("id=\"late\" via=\"nri\" set"), std::string::npos) << log;
  EXPECT_EQ(log.find("id=\"unsent\" via=\"nri\" set"), std::string::npos) << log;
  EXPECT_TRUE(plugin.Running());
}

// NVIDIA's NRI plugin injects the GPUs a pod's nvidia.cdi.k8s.io annotations
// name only after every plugin has answered, so no device shows in our
// CreateContainer: a cdi rule matches those names where [cdi] injectors says
// NVIDIA's NRI plugin runs on this node, and never elsewhere.
std::string GpuPodMemlock(const std::string& injectors) {
  TempDir dir;
  FakeRuntime runtime(dir / "nri.sock");
  WriteFile(dir / "c.toml",
            "[[rule]]\nname = \"gpu\"\nrlimits = [\"memlock=4M:8M\"]\n"
            "match = { cdi = [\"nvidia.com/gpu=*\"] }\n" +
                injectors);
  BackgroundProcess plugin;
  auto err = plugin.Start({Plugin(), "--config", dir / "c.toml", "--socket", dir / "nri.sock",
                           "--status-file", dir / "nri.status"},
                          {}, dir / "plugin.log");
  if (err) return *err;
  if (!runtime.Accept()) return "no connect: " + ReadFile(dir / "plugin.log");
  nri::pb::CreateContainerRequest req;
  (*req.mutable_pod()->mutable_annotations())["nvidia.cdi.k8s.io/container.trainer"] =
      "nvidia.com/gpu=0";
  req.mutable_container()->set_id("c1");
  req.mutable_container()->set_name("trainer");
  return FakeRuntime::MemlockOf(runtime.Call("CreateContainer", req.SerializeAsString()));
}

TEST(NriPlugin, ACdiRuleMatchesTheGpusNvidiasNriPluginWillInject) {
  EXPECT_EQ(GpuPodMemlock("[cdi]\ninjectors = [\"nvidia-nri\"]\n"), "4194304:8388608");
  EXPECT_EQ(GpuPodMemlock(""), "none")
      << "no injector on this node: the names are the author's word";
  EXPECT_EQ(GpuPodMemlock("[cdi]\ninjectors = [\"nvidia-runtime\"]\n"), "none");
}

// CRI-O 1.31's NRI gives pid = 0 for every container (docs/nri.md): the heal
// at (re)connect finds the init in runc's own state under /run/runc (CRI-O's
// default root, root's own), proves it by its cgroup and start time, and
// heals it. A state a user owns is reported, never used.
class NriCrioHeal : public ::testing::Test {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("runc", "prlimit");
    WriteFile(dir_ / "c.toml", "rlimits = [\"memlock=8388608:8388608\"]\nlog-file = \"" +
                                   (dir_ / "heal.log") + "\"\n");
  }
  void TearDown() override {
    if (!id_.empty()) {
      (void)chown((std::string(kCrioRoot) + "/" + id_).c_str(), 0, 0);
      RunCmd({"runc", "--root", kCrioRoot, "delete", "-f", id_});
    }
  }
  static constexpr const char* kCrioRoot = "/run/runc";

  // A detached busybox sleep under runc's default root, memlock 1M soft under 8M hard.
  pid_t Start() {
    const std::string bundle = dir_ / "bundle";
    WriteSpec(bundle, MakeBundle(bundle, {"sleep", "1000"}));
    id_ = UniqueId("crio");
    CmdResult r = Sh("prlimit --memlock=1048576:8388608 runc --root " + std::string(kCrioRoot) +
                     " run -d --bundle " + bundle + " " + id_ + " </dev/null >/dev/null 2>" +
                     bundle + "/run.err");
    EXPECT_EQ(r.status, 0) << ReadFile(bundle + "/run.err");
    CmdResult st = RunCmd({"runc", "--root", kCrioRoot, "state", id_});
    EXPECT_EQ(st.status, 0) << st.err;
    return Json::parse(st.out, nullptr, false).value("pid", 0);
  }

  // Connects the plugin and sends CRI-O's Synchronize: the container running, pid 0.
  void Synchronize() {
    FakeRuntime runtime(dir_ / "nri.sock");
    BackgroundProcess plugin;
    auto err = plugin.Start({Plugin(), "--config", dir_ / "c.toml", "--socket", dir_ / "nri.sock",
                             "--status-file", dir_ / "nri.status"},
                            {}, dir_ / "plugin.log");
    ASSERT_FALSE(err) << *err;
    ASSERT_TRUE(runtime.Accept()) << ReadFile(dir_ / "plugin.log");
    nri::pb::SynchronizeRequest req;
    nri::pb::PodSandbox* pod = req.add_pods();
    pod->set_id("sandbox1");
    nri::pb::Container* c = req.add_containers();
    c->set_id(id_);
    c->set_pod_sandbox_id("sandbox1");
    c->set_state(nri::pb::CONTAINER_RUNNING);
    c->set_pid(0);
    ASSERT_TRUE(runtime.Call("Synchronize", req.SerializeAsString()));
    ASSERT_TRUE(WaitFor(dir_ / "plugin.log", "synchronized: 1 containers"))
        << ReadFile(dir_ / "plugin.log");
  }

  TempDir dir_;
  std::string id_;
};

TEST_F(NriCrioHeal, PidZeroIsHealedThroughRuncsOwnState) {
  const pid_t init = Start();
  ASSERT_GT(init, 0);
  Synchronize();
  const std::string limits = ReadFile("/proc/" + std::to_string(init) + "/limits");
  EXPECT_EQ(FormatLimit(LimitRow(limits, kMemlock)), "8388608:8388608")
      << ReadFile(dir_ / "plugin.log") << ReadFile(dir_ / "heal.log");
  EXPECT_NE(ReadFile(dir_ / "heal.log").find("pid=" + std::to_string(init) + " via=\"nri-sync\""),
            std::string::npos)
      << ReadFile(dir_ / "heal.log");
  EXPECT_NE(ReadFile(dir_ / "plugin.log").find("1 healed"), std::string::npos);
}

TEST_F(NriCrioHeal, AStateDirectoryAUserOwnsIsNeverUsed) {
  const pid_t init = Start();
  ASSERT_GT(init, 0);
  ASSERT_EQ(chown((std::string(kCrioRoot) + "/" + id_).c_str(), 65534, 65534), 0);
  Synchronize();
  const std::string limits = ReadFile("/proc/" + std::to_string(init) + "/limits");
  EXPECT_EQ(FormatLimit(LimitRow(limits, kMemlock)), "1048576:8388608") << "never touched";
  EXPECT_NE(ReadFile(dir_ / "heal.log").find("is owned by uid 65534, not root: not trusted"),
            std::string::npos)
      << ReadFile(dir_ / "heal.log");
  EXPECT_NE(ReadFile(dir_ / "plugin.log").find("1 cannot heal"), std::string::npos)
      << ReadFile(dir_ / "plugin.log");
}

}  // namespace
}  // namespace ocirlimit::itest
