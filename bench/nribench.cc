// oci-rlimit-nri's cost per CreateContainer (docs/performance.md), not a test:
//  1. in-process: request bytes received -> reply bytes ready (Session +
//     Plugin service + policy), and received -> reply sent through a real
//     socketpair (read(2) ... send(2) timed on the plugin's side);
//     Beside them, in the same run: the baseline every plugin pays (protobuf
//     decode of the request, encode of an empty reply) and the handling's
//     stages one by one, timed separately.
//  2. the real binary, pre-registered on a socketpair as containerd starts
//     it: round trip seen from the runtime's side, and the plugin's peak RSS
//     (VmHWM) after all requests; twice, interleaved: without metrics, and
//     with --metrics-address while a thread scrapes it every 10 ms and
//     another holds 32 idle connections open to it, reconnecting each one
//     the server drops (docs/nri.md: idle peers must not hold the port):
//     the ratio of the two is the cost of metrics.
//   nribench PATH/TO/oci-rlimit-nri [N=10000]
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "adapters/nri/facts.h"
#include "core/config.h"
#include "nri/decide.h"
#include "nri/plugin.h"
#include "nri/session.h"
#include "tests/testing/nri_peer.h"

namespace {

using namespace ocirlimit;
using namespace ocirlimit::nri;
using Clock = std::chrono::steady_clock;

constexpr const char* kConfig =
    "rlimits = ['nofile=1024:4096']\n"
    "[[rule]]\nname = 'gpu'\nrlimits = ['memlock=unlimited']\n"
    "match = { annotations = { 'nvidia.com/gpu.present' = 'true' }, env = "
    "['NVIDIA_VISIBLE_DEVICES'] }\n"
    "[[rule]]\nname = 'rdma'\nrlimits = ['memlock=64G']\n"
    "match = { devices = ['/dev/infiniband/*'] }\n"
    "[requests]\nenabled = true\nceilings = ['memlock=unlimited']\n";

// A CreateContainer as containerd sends it for a kubelet pod: a dozen
// annotations, a typical env, a couple of devices.
std::string CreatePayload(int i) {
  pb::CreateContainerRequest req;
  auto* pod = req.mutable_pod();
  pod->set_id("pod" + std::to_string(i));
  pod->set_name("trainer-" + std::to_string(i));
  pod->set_namespace_("ml");
  auto& pa = *pod->mutable_annotations();
  pa["kubernetes.io/config.seen"] = "2026-12-01T09:00:00.000000000Z";
  pa["kubernetes.io/config.source"] = "api";
  pa["nvidia.com/gpu.present"] = i % 2 == 0 ? "true" : "false";
  if (i % 3 == 0) pa["oci-rlimit.io/rlimits"] = "memlock=32G";
  auto* c = req.mutable_container();
  c->set_id(std::string(64, static_cast<char>('a' + i % 26)));
  c->set_name("worker");
  auto& ca = *c->mutable_annotations();
  for (const char* k : {"io.kubernetes.cri.container-type", "io.kubernetes.cri.sandbox-id",
                        "io.kubernetes.cri.sandbox-name", "io.kubernetes.cri.sandbox-namespace",
                        "io.kubernetes.cri.container-name", "io.kubernetes.cri.image-name"}) {
    ca[k] = "value-" + std::to_string(i);
  }
  for (const char* e : {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                        "HOSTNAME=trainer", "NVIDIA_VISIBLE_DEVICES=all", "NCCL_DEBUG=INFO",
                        "KUBERNETES_SERVICE_HOST=10.0.0.1", "KUBERNETES_SERVICE_PORT=443"}) {
    c->add_env(e);
  }
  c->mutable_linux()->add_devices()->set_path("/dev/infiniband/uverbs0");
  c->mutable_linux()->add_devices()->set_path("/dev/nvidia0");
  return req.SerializeAsString();
}

class Quiet : public Output {
 public:
  void Say(const std::string&) override {}
  void LogLine(const Config&, const std::string&) override {}
};

struct Stats {
  double median_us, p99_us, max_us;
};

Stats Summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() * 99 / 100], us.back()};
}

void Print(const char* what, const Stats& s) {
  std::printf("%-52s median %7.1f us  p99 %7.1f us  max %8.1f us\n", what, s.median_us, s.p99_us,
              s.max_us);
}

double Us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// One request stage by stage, timed separately: the baseline every plugin
// pays (decode the request, encode an empty reply), then decode, facts,
// policy, and the reply with the adjustment.
struct StageTimes {
  double base, decode, facts, admit, encode;
};

StageTimes Staged(const Config& cfg, const std::string& p, std::string& out) {
  auto t0 = Clock::now();
  {
    pb::CreateContainerRequest req;
    if (!req.ParseFromArray(p.data(), static_cast<int>(p.size()))) std::abort();
    out.clear();
    pb::CreateContainerResponse().SerializeToString(&out);
  }
  auto t1 = Clock::now();
  pb::CreateContainerRequest req;
  if (!req.ParseFromArray(p.data(), static_cast<int>(p.size()))) std::abort();
  auto t2 = Clock::now();
  const NriFacts f = FactsFromCreate(req);
  auto t3 = Clock::now();
  const Verdict v = AdmitNri(cfg, f.facts);
  auto t4 = Clock::now();
  pb::CreateContainerResponse resp;
  SetAdjustmentRlimits(v.limits, *resp.mutable_adjust());
  out.clear();
  resp.SerializeToString(&out);
  auto t5 = Clock::now();
  return {Us(t1 - t0), Us(t2 - t1), Us(t3 - t2), Us(t4 - t3), Us(t5 - t4)};
}

// Per request, in turn (so load lands on every figure alike): the whole
// handling, the same through a socketpair, and the stages on their own.
void InProcess(const Config& cfg, const std::vector<std::string>& calls,
               const std::vector<std::string>& payloads) {
  Quiet quiet;
  NriPlugin plugin([&]() -> const Config& { return cfg; }, quiet, [] { return "T"; });
  Session session(plugin, "");
  std::vector<double> handle, socket_us, base, decode, facts, admit, encode;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) std::abort();
  std::string out;
  std::vector<char> buf(1 << 16);
  for (size_t i = 0; i < calls.size(); ++i) {
    const std::string& call = calls[i];
    out.clear();
    auto t0 = Clock::now();
    if (!session.OnBytes(call, out)) std::abort();
    handle.push_back(Us(Clock::now() - t0));

    if (write(sv[0], call.data(), call.size()) != static_cast<ssize_t>(call.size())) std::abort();
    out.clear();
    auto t1 = Clock::now();
    ssize_t n = read(sv[1], buf.data(), buf.size());
    if (n <= 0 || !session.OnBytes(std::string_view(buf.data(), n), out)) std::abort();
    if (send(sv[1], out.data(), out.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out.size())) {
      std::abort();
    }
    socket_us.push_back(Us(Clock::now() - t1));
    if (read(sv[0], buf.data(), buf.size()) <= 0) std::abort();

    const StageTimes st = Staged(cfg, payloads[i], out);
    base.push_back(st.base);
    decode.push_back(st.decode);
    facts.push_back(st.facts);
    admit.push_back(st.admit);
    encode.push_back(st.encode);
  }
  close(sv[0]);
  close(sv[1]);
  const Stats h = Summarize(handle);
  const Stats b = Summarize(base);
  Print("in-process: received -> reply ready", h);
  Print("in-process: read(2) -> handled -> send(2)", Summarize(socket_us));
  Print("baseline: decode request + encode empty reply", b);
  Print("stage: decode CreateContainerRequest", Summarize(decode));
  Print("stage: FactsFromCreate", Summarize(facts));
  Print("stage: AdmitNri (policy, requests)", Summarize(admit));
  Print("stage: ContainerAdjustment + encode", Summarize(encode));
  std::printf("%-52s %.2fx the baseline (medians)\n", "in-process: received -> reply ready",
              h.median_us / b.median_us);
}

// The plugin's next message, which must be on `conn`.
std::string ReadReply(testsupport::RuntimePeer& peer, uint32_t conn) {
  auto sent = peer.Next();
  if (!sent || sent->conn != conn) std::abort();
  return sent->msg.payload;
}

// The real binary, pre-registered on a socketpair as containerd starts it,
// registered and configured; `extra` flags after --config.
struct RealPlugin {
  pid_t pid = -1;
  int fd = -1;
  std::unique_ptr<testsupport::RuntimePeer> peer;

  RealPlugin(const char* binary, const std::string& config_path,
             const std::vector<std::string>& extra) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) std::abort();
    std::vector<std::string> args = {binary, "--config", config_path};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // Its decision records beside its config, never the host's /run/oci-rlimit.
    std::string decisions =
        "OCI_RLIMIT_DECISIONS_DIR=" + config_path.substr(0, config_path.rfind('/') + 1) +
        "decisions";
    pid = fork();
    if (pid == 0) {
      dup2(sv[1], 3);  // dup2 clears CLOEXEC on fd 3
      // As containerd starts it: fds 0-2 on /dev/null (so no log lines on stderr).
      int null = open("/dev/null", O_RDWR);
      for (int f = 0; f < 3; ++f) dup2(null, f);
      char* envp[] = {const_cast<char*>("NRI_PLUGIN_NAME=oci-rlimit"),
                      const_cast<char*>("NRI_PLUGIN_IDX=10"),
                      const_cast<char*>("NRI_PLUGIN_SOCKET=3"), decisions.data(), nullptr};
      execve(binary, argv.data(), envp);
      _exit(127);
    }
    close(sv[1]);
    fd = sv[0];
    peer = std::make_unique<testsupport::RuntimePeer>(fd);
    (void)ReadReply(*peer, kRuntimeConn);  // RegisterPlugin
    if (!peer->Send(testsupport::RuntimeReply(1, {}))) std::abort();
    if (!peer->Send(testsupport::RuntimeCall(1, "Configure", ""))) std::abort();
    (void)ReadReply(*peer, kPluginConn);
  }
  double Call(const std::string& call) {
    auto t0 = Clock::now();
    if (!peer->Send(call)) std::abort();
    (void)ReadReply(*peer, kPluginConn);
    return Us(Clock::now() - t0);
  }
  std::string PeakRss() const {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line, hwm;
    while (std::getline(status, line)) {
      if (line.starts_with("VmHWM:")) hwm = line.substr(6);
    }
    return hwm;
  }
  ~RealPlugin() {
    close(fd);
    int st = 0;
    waitpid(pid, &st, 0);
  }
};

// GET /metrics on a Unix socket, the reply's size; 0 when it failed.
size_t Scrape(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path.c_str());
  size_t got = 0;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
    const std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    if (write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
      char buf[4096];
      for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) got += static_cast<size_t>(n);
    }
  }
  close(fd);
  return got;
}

// 32 idle connections to the metrics socket, held open all the while: one
// the server drops (its 1 s deadline, or a newer one taking its place) is
// opened again at once, as a peer holding the port would.
class Idlers {
 public:
  explicit Idlers(const std::string& path) : path_(path), thread_([this] { Run(); }) {}
  ~Idlers() {
    done_ = true;
    thread_.join();
  }
  Idlers(const Idlers&) = delete;
  Idlers& operator=(const Idlers&) = delete;
  int reconnects() const { return reconnects_.load(); }

 private:
  static constexpr size_t kHeld = 32;
  int Open() const {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path_.c_str());
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) return fd;
    close(fd);
    return -1;
  }
  void Run() {
    std::vector<int> fds(kHeld, -1);
    char byte = 0;
    while (!done_) {
      for (int& fd : fds) {
        // Closed by the server (EOF, a reset) or never opened: open it again.
        if (fd >= 0) {
          if (recv(fd, &byte, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN) continue;  // still held
          close(fd);
          ++reconnects_;
        }
        fd = Open();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (int fd : fds) {
      if (fd >= 0) close(fd);
    }
  }
  std::string path_;
  std::atomic<bool> done_{false};
  std::atomic<int> reconnects_{0};
  std::thread thread_;
};

// Two real plugins, one without --metrics-address and one with it, scraped
// all the while by a thread of ours (every 10 ms, 100 times Prometheus's
// usual rate): each request goes to both, in alternating order (ABBA), so
// load lands on both arms alike; the ratio of the medians is the cost.
void RealBinaries(const char* binary, const std::string& config_path,
                  const std::vector<std::string>& calls) {
  const std::string sock = config_path + ".metrics.sock";
  RealPlugin off(binary, config_path, {});
  RealPlugin on(binary, config_path, {"--metrics-address", "unix:" + sock});
  std::atomic<bool> done{false};
  std::atomic<int> scrapes{0}, failed{0};
  Idlers idlers(sock);
  std::thread scraper([&] {
    while (!done) {
      (Scrape(sock) > 0 ? scrapes : failed)++;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  std::vector<double> rtt_off, rtt_on;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (i % 2 == 0) {
      rtt_off.push_back(off.Call(calls[i]));
      rtt_on.push_back(on.Call(calls[i]));
    } else {
      rtt_on.push_back(on.Call(calls[i]));
      rtt_off.push_back(off.Call(calls[i]));
    }
  }
  done = true;
  scraper.join();
  const Stats a = Summarize(rtt_off);
  const Stats b = Summarize(rtt_on);
  Print("oci-rlimit-nri (pre-registered): runtime's round trip", a);
  Print("  the same with --metrics-address, scraped", b);
  std::printf("%-52s %.2fx (medians), %.2fx (p99); %d scrapes, %d failed\n", "  metrics on / off",
              b.median_us / a.median_us, b.p99_us / a.p99_us, scrapes.load(), failed.load());
  std::printf("%-52s 32 held, %d reconnected after the server dropped them\n",
              "  idle metrics connections", idlers.reconnects());
  std::printf("oci-rlimit-nri peak RSS (VmHWM):%s; with metrics:%s\n", off.PeakRss().c_str(),
              on.PeakRss().c_str());
  unlink(sock.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: nribench PATH/TO/oci-rlimit-nri [N]\n");
    return 2;
  }
  int n = argc > 2 ? std::atoi(argv[2]) : 10000;
  auto cfg = ParseConfig(kConfig, "bench.toml");
  if (!cfg) return 1;
  std::vector<std::string> payloads, calls;
  for (int i = 0; i < n; ++i) {
    payloads.push_back(CreatePayload(i));
    calls.push_back(testsupport::RuntimeCall(2 * i + 3, "CreateContainer", payloads.back()));
  }
  std::printf("%d CreateContainer requests, %zu bytes each on the wire (first)\n", n,
              calls[0].size());
  InProcess(*cfg, calls, payloads);
  char path[] = "/tmp/nribench.XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0 || write(fd, kConfig, std::char_traits<char>::length(kConfig)) < 0) return 1;
  close(fd);
  RealBinaries(argv[1], path, calls);
  unlink(path);
  return 0;
}
