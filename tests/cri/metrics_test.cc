// A real Prometheus server (Debian's `prometheus`, on loopback, its own data
// dir and a free port) scrapes oci-rlimit-nri's --metrics-address while pods
// run through CRI on containerd 2.x; a query through Prometheus's HTTP API
// must return the adjusted-container count the run created, and the plugin
// connected (docs/nri.md, "Metrics"; docs/audit.md, "Fleet").
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "cri_containerd.h"
#include "cri_probe.h"
#include "harness.h"

namespace ocirlimit::itest::cri {
namespace {

using Clock = std::chrono::steady_clock;
constexpr Limit kConfigured{8 << 20, 8 << 20};  // memlock=8M
const std::vector<std::string> kDaemonPrefix = {"prlimit", "--memlock=1048576:8388608"};

// A loopback TCP port nobody listens on now.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  if (bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
    close(fd);
    return -1;
  }
  close(fd);
  return ntohs(sa.sin_port);
}

// GET `target` from 127.0.0.1:port; the body of a 200, else nullopt.
std::optional<std::string> HttpGet(int port, const std::string& target) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string got;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
    const std::string req =
        "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
      char buf[4096];
      for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  const size_t body = got.find("\r\n\r\n");
  if (got.rfind("HTTP/1.", 0) != 0 || got.find(" 200 ") != got.find(' ') ||
      body == std::string::npos) {
    return std::nullopt;
  }
  return got.substr(body + 4);
}

// The one value of an instant-vector query, or nullopt (no result yet).
std::optional<std::string> QueryValue(int port, const std::string& url_encoded_query) {
  auto body = HttpGet(port, "/api/v1/query?query=" + url_encoded_query);
  if (!body) return std::nullopt;
  auto j = nlohmann::json::parse(*body, nullptr, false);
  if (j.is_discarded() || j.value("status", "") != "success") return std::nullopt;
  const auto& result = j["data"]["result"];
  if (!result.is_array() || result.size() != 1) return std::nullopt;
  return result[0]["value"][1].get<std::string>();
}

TEST(NriMetricsPrometheus, APrometheusServerScrapesTheAdjustedContainerCount) {
  OCI_RLIMIT_REQUIRE("prlimit", "prometheus");
  OCI_RLIMIT_REQUIRE_CONTAINERD(Containerd2());
  const std::string plugin_bin = OurBinary("oci-rlimit-nri");
  ASSERT_TRUE(Which(plugin_bin)) << plugin_bin << " has not been built";
  TempDir dir;
  WriteFile(dir / "config.toml", "rlimits = [\"memlock=8M\"]\n");

  CriContainerd::Options opts;
  opts.release = Containerd2();
  opts.prefix = kDaemonPrefix;
  opts.nri = NriSetup{};
  CriContainerd containerd(opts);
  ASSERT_TRUE(containerd.ok()) << containerd.error();

  const int metrics_port = FreePort();
  const int prom_port = FreePort();
  ASSERT_GT(metrics_port, 0);
  ASSERT_GT(prom_port, 0);
  BackgroundProcess plugin;
  auto err = plugin.Start({plugin_bin, "--config", dir / "config.toml", "--socket",
                           containerd.nri_socket(), "--status-file", dir / "nri.status",
                           "--metrics-address", "127.0.0.1:" + std::to_string(metrics_port)},
                          {}, dir / "plugin.log");
  ASSERT_FALSE(err) << *err;
  auto configured =
      plugin.WaitForLog("the plugin", "configured by", Clock::now() + std::chrono::seconds(20));
  ASSERT_FALSE(configured) << *configured << "\n" << containerd.Log();

  WriteFile(dir / "prometheus.yml",
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "scrape_configs:\n"
            "  - job_name: oci-rlimit-nri\n"
            "    static_configs: [{targets: ['127.0.0.1:" +
                std::to_string(metrics_port) + "']}]\n");
  BackgroundProcess prometheus;
  err = prometheus.Start({"prometheus", "--config.file=" + (dir / "prometheus.yml"),
                          "--storage.tsdb.path=" + (dir / "data"),
                          "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
                         {}, dir / "prometheus.log");
  ASSERT_FALSE(err) << *err;
  auto ready = prometheus.WaitReady("prometheus", [&]() -> std::optional<std::string> {
    if (HttpGet(prom_port, "/-/ready")) return std::nullopt;
    return "not ready on /-/ready";
  });
  ASSERT_FALSE(ready) << *ready;

  constexpr int kPods = 3;
  for (int i = 0; i < kPods; ++i) {
    std::optional<Limit> init;
    const std::string id =
        RunPrintingPod(containerd, containerd.NewPod("scraped-" + std::to_string(i)), &init);
    ASSERT_FALSE(id.empty());
    EXPECT_EQ(init, kConfigured) << "pod " << i;
  }

  // sum(oci_rlimit_nri_containers_total{outcome="adjusted"}), URL-encoded.
  const std::string adjusted = "sum(oci_rlimit_nri_containers_total%7Boutcome%3D%22adjusted%22%7D)";
  std::optional<std::string> got;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline) {
    got = QueryValue(prom_port, adjusted);
    if (got == std::to_string(kPods)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_EQ(got.value_or("(no result)"), std::to_string(kPods))
      << "Prometheus's sum of adjusted containers\n"
      << prometheus.Log() << "\n"
      << HttpGet(metrics_port, "/metrics").value_or("(no /metrics)");
  EXPECT_EQ(QueryValue(prom_port, "oci_rlimit_nri_connected").value_or("(none)"), "1");
  EXPECT_EQ(QueryValue(prom_port, "up%7Bjob%3D%22oci-rlimit-nri%22%7D").value_or("(none)"), "1");
}

}  // namespace
}  // namespace ocirlimit::itest::cri
