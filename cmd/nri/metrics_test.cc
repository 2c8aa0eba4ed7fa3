#include "nri/metrics.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <sstream>
#include <string>

#include "core/policy.h"
#include "formats/text.h"
#include "nri/metrics/metrics_http.h"
#include "nri/metrics/metrics_server_linux.h"
#include "nri/output_fake_test.h"
#include "tests/testing/case_name.h"

namespace ocirlimit::nri {
namespace {

constexpr const char* kPolicy = R"(
rlimits = ["nofile=1024:4096"]
[[rule]]
name = "gpu"
rlimits = ["memlock=64M"]
match = { annotations = { "example.com/gpu" = "true" } }
[requests]
enabled = true
ceilings = ["memlock=1G", "nofile=8192"]
)";

constexpr const char* kOnlyRule = R"(
[[rule]]
name = "gpu"
rlimits = ["memlock=64M"]
match = { annotations = { "example.com/gpu" = "true" } }
)";

struct CountCase {
  std::string name;
  std::string toml;
  std::map<std::string, std::string> annotations;  // the pod's
  ContainerCount want;
  std::string requests;  // SOURCE=RESULT of each source that asked, in RequestSource order
  std::vector<Rlimit> spec = {};
};

std::string Requests(const Counted& c) {
  std::string out;
  for (size_t s = 0; s < kRequestSources; ++s) {
    if (!c.requests.at(s)) continue;
    out += Cat(out.empty() ? "" : ",", RequestSourceName(static_cast<RequestSource>(s)), "=",
               RequestCountName(*c.requests.at(s)));
  }
  return out;
}

void PrintTo(const CountCase& c, std::ostream* os) { *os << c.name; }

class CountCreateTest : public ::testing::TestWithParam<CountCase> {};

// The counts beside Admit's real verdicts, on facts as NRI gives them (the
// pod's annotations known apart, the container named "app").
TEST_P(CountCreateTest, CountsWhatAdmitDecided) {
  const CountCase& c = GetParam();
  const Config cfg = MustParse(c.toml);
  ContainerFacts facts;
  facts.annotations = c.annotations;
  facts.pod_annotations = c.annotations;
  facts.container_name = "app";
  facts.spec_rlimits = c.spec;
  const Counted got = CountCreate(cfg, facts, AdmitNri(cfg, facts));
  EXPECT_EQ(got.container, c.want);
  EXPECT_EQ(Requests(got), c.requests);
}

const std::string kReq(kRequestAnnotation);
const std::string kWarnReject = std::string("on-error = 'warn'\n") + kPolicy;
const std::string kAdj = "ulimits.noderesource.dev/container.app";
const std::string kAllSources =
    std::string(kPolicy) + "sources = ['spec', 'ulimit-adjuster', 'oci-rlimit']\n";
const std::string kAllReject = kAllSources + "over-ceiling = 'reject'\n";
const std::string kAllWarn = "on-error = 'warn'\n" + kAllSources;
const std::string kBadYaml = "- type: memlock\n  soft: 0777\n  hard: 1024\n";
const std::string kGoodYaml = "- type: memlock\n  soft: 1024\n  hard: 1024\n";
const Rlimit kSpecOver{FindRlimit("memlock")->resource, uint64_t{2} << 30, uint64_t{2} << 30};
const Rlimit kSpecUnder{FindRlimit("memlock")->resource, 1024, 1024};

INSTANTIATE_TEST_SUITE_P(
    Cases, CountCreateTest,
    ::testing::Values(
        CountCase{"plain_adjusted", kPolicy, {}, ContainerCount::kAdjusted, ""},
        CountCase{"no_limits_left_alone", kOnlyRule, {}, ContainerCount::kLeftNoLimits, ""},
        CountCase{"granted",
                  kPolicy,
                  {{kReq, "memlock=1M"}},
                  ContainerCount::kAdjusted,
                  "oci-rlimit=granted"},
        CountCase{"clamped",
                  kPolicy,
                  {{kReq, "memlock=2G"}},
                  ContainerCount::kAdjusted,
                  "oci-rlimit=clamped"},
        CountCase{"not_in_ceilings",
                  kPolicy,
                  {{kReq, "stack=1M"}},
                  ContainerCount::kAdjusted,
                  "oci-rlimit=clamped"},
        CountCase{"rejected_refuses",
                  std::string(kPolicy) + "over-ceiling = 'reject'\n",
                  {{kReq, "memlock=2G"}},
                  ContainerCount::kRefusedRequest,
                  "oci-rlimit=rejected"},
        CountCase{"malformed_refuses",
                  kPolicy,
                  {{kReq, "memlock=lots"}},
                  ContainerCount::kRefusedRequest,
                  "oci-rlimit=rejected"},
        CountCase{"malformed_left_out_under_warn",
                  kWarnReject,
                  {{kReq, "memlock=lots"}},
                  ContainerCount::kAdjusted,
                  "oci-rlimit=rejected"},
        CountCase{"not_enabled",
                  kOnlyRule,
                  {{kReq, "memlock=1M"}},
                  ContainerCount::kLeftNoLimits,
                  "oci-rlimit=ignored"},
        CountCase{"sandbox_request_not_counted",
                  kPolicy,
                  {{kReq, "memlock=1M"}, {"io.kubernetes.cri.container-type", "sandbox"}},
                  ContainerCount::kAdjusted,
                  ""},
        // Every source under its own name; a refusal under its true reason.
        CountCase{"adjuster_granted",
                  kAllSources,
                  {{kAdj, kGoodYaml}},
                  ContainerCount::kAdjusted,
                  "ulimit-adjuster=granted"},
        CountCase{"adjuster_malformed_refuses_as_request",
                  kAllSources,
                  {{kAdj, kBadYaml}},
                  ContainerCount::kRefusedRequest,
                  "ulimit-adjuster=rejected"},
        CountCase{"adjuster_malformed_the_other_not_applied",
                  kAllSources,
                  {{kAdj, kBadYaml}, {kReq, "memlock=1M"}},
                  ContainerCount::kRefusedRequest,
                  "oci-rlimit=not_applied,ulimit-adjuster=rejected"},
        CountCase{"adjuster_malformed_left_out_under_warn",
                  kAllWarn,
                  {{kAdj, kBadYaml}, {kReq, "memlock=1M"}},
                  ContainerCount::kAdjusted,
                  "oci-rlimit=not_applied,ulimit-adjuster=rejected"},
        CountCase{"adjuster_over_ceiling_rejected",
                  kAllReject,
                  {{kAdj, "- type: memlock\n  soft: 1\n  hard: 18446744073709551615\n"}},
                  ContainerCount::kRefusedRequest,
                  "ulimit-adjuster=rejected"},
        CountCase{"adjuster_not_enabled",
                  std::string(kOnlyRule) + "[requests]\nsources = ['ulimit-adjuster']\n",
                  {{kAdj, kGoodYaml}},
                  ContainerCount::kLeftNoLimits,
                  "ulimit-adjuster=ignored"},
        CountCase{
            "adjuster_not_a_source", kPolicy, {{kAdj, kBadYaml}}, ContainerCount::kAdjusted, ""},
        CountCase{"spec_granted",
                  kAllSources,
                  {},
                  ContainerCount::kAdjusted,
                  "spec=granted",
                  {kSpecUnder}},
        CountCase{"spec_clamped",
                  kAllSources,
                  {},
                  ContainerCount::kAdjusted,
                  "spec=clamped",
                  {kSpecOver}},
        CountCase{"spec_rejected",
                  kAllReject,
                  {},
                  ContainerCount::kRefusedRequest,
                  "spec=rejected",
                  {kSpecOver}},
        CountCase{"spec_not_applied_when_refused",
                  kAllSources,
                  {{kAdj, kBadYaml}},
                  ContainerCount::kRefusedRequest,
                  "ulimit-adjuster=rejected,spec=not_applied",
                  {kSpecUnder}},
        CountCase{"spec_kept_under_warn",
                  kAllWarn,
                  {{kAdj, kBadYaml}},
                  ContainerCount::kAdjusted,
                  "ulimit-adjuster=rejected,spec=granted",
                  {kSpecUnder}}),
    CaseName{});

// An undecidable pod dispute refuses before any request: no request is
// counted, whatever it asks.
TEST(CountCreate, APodDisputeIsNotARequestsRefusal) {
  const Config cfg = MustParse(kAllSources +
                               "[[rule]]\nrlimits = ['memlock=2M']\n"
                               "match = { namespaces = ['gpu-*'] }\n");
  ContainerFacts facts;
  facts.annotations = {{kAdj, kBadYaml},
                       {std::string(kContainerdSandboxNamespace), "gpu-a"},
                       {std::string(kCrioPodNamespace), "default"}};
  facts.pod_annotations = facts.annotations;
  facts.container_name = "app";
  SetPodFromRuntimeAnnotations(facts);
  ASSERT_EQ(facts.disputes.size(), 1U);
  const Counted got = CountCreate(cfg, facts, AdmitNri(cfg, facts));
  EXPECT_EQ(got.container, ContainerCount::kRefusedPodDispute);
  EXPECT_EQ(Requests(got), "");
}

TEST(NriMetrics, TextHasEveryFamilyWithFixedLabels) {
  NriMetrics m([] { return int64_t{1764912000}; });
  Counted both{.container = ContainerCount::kAdjusted};
  both.requests.at(static_cast<size_t>(RequestSource::kOciRlimit)) = RequestCount::kClamped;
  both.requests.at(static_cast<size_t>(RequestSource::kSpec)) = RequestCount::kNotApplied;
  m.Count(both);
  m.Count({.container = ContainerCount::kAdjusted});
  m.CountContainer(ContainerCount::kRefusedRequest);
  m.SetConnected(true);
  m.Synchronized(3, 1);
  const std::string t = m.Text();
  for (const char* line : {
           "# TYPE oci_rlimit_nri_containers_total counter\n",
           "oci_rlimit_nri_containers_total{outcome=\"adjusted\",reason=\"policy\"} 2\n",
           "oci_rlimit_nri_containers_total{outcome=\"refused\",reason=\"request\"} 1\n",
           "oci_rlimit_nri_containers_total{outcome=\"left_alone\",reason=\"no_limits\"} 0\n",
           "oci_rlimit_nri_requests_total{source=\"oci-rlimit\",result=\"clamped\"} 1\n",
           "oci_rlimit_nri_requests_total{source=\"oci-rlimit\",result=\"granted\"} 0\n",
           "oci_rlimit_nri_requests_total{source=\"spec\",result=\"not_applied\"} 1\n",
           "oci_rlimit_nri_requests_total{source=\"ulimit-adjuster\",result=\"rejected\"} 0\n",
           "oci_rlimit_nri_heals_total{result=\"done\"} 3\n",
           "oci_rlimit_nri_heals_total{result=\"failed\"} 1\n",
           "# TYPE oci_rlimit_nri_connected gauge\n",
           "oci_rlimit_nri_connected 1\n",
           "oci_rlimit_nri_connects_total 1\n",
           "oci_rlimit_nri_last_synchronize_timestamp_seconds 1764912000\n",
           "oci_rlimit_build_info{program=\"oci-rlimit-nri\",version=\"",
       }) {
    EXPECT_NE(t.find(line), std::string::npos) << line << "\nin:\n" << t;
  }
  m.SetConnected(false);
  EXPECT_NE(m.Text().find("oci_rlimit_nri_connected 0\n"), std::string::npos);
}

// The fleet's series (issue 38): the node on every sample, the reload, the
// replies given up on, what the last Synchronize left, and when it started.
// The policy's digest (core/policy_digest.h) as oci_rlimit_policy_info, named by the node; a
// reload taken moves it.
TEST(NriMetrics, PolicyInfoCarriesTheDigestInForce) {
  NriMetrics m([] { return int64_t{1764912000}; });
  m.SetNode("gpu-1");
  m.SetPolicyDigest("aaaa");
  EXPECT_NE(m.Text().find("# TYPE oci_rlimit_policy_info gauge\n"
                          "oci_rlimit_policy_info{program=\"oci-rlimit-nri\",digest=\"aaaa\","
                          "node=\"gpu-1\"} 1\n"),
            std::string::npos)
      << m.Text();
  m.SetPolicyDigest("bbbb");
  EXPECT_EQ(m.Text().find("digest=\"aaaa\""), std::string::npos) << m.Text();
  EXPECT_NE(m.Text().find("digest=\"bbbb\""), std::string::npos) << m.Text();
}

TEST(NriMetrics, FleetSeriesNameTheNode) {
  int64_t now = 1764912000;
  NriMetrics m([&] { return now; });
  m.SetNode("gpu-1");
  now += 60;
  m.ConfigReloaded(false);
  m.RepliesGivenUp(2, true);
  m.RepliesGivenUp(1, false);
  m.Synchronized(1, 0);
  m.NeedAdmin(4, 5);
  std::string t = m.Text();
  for (const char* line : {
           "process_start_time_seconds{node=\"gpu-1\"} 1764912000\n",
           "oci_rlimit_nri_config_last_reload_successful{node=\"gpu-1\"} 0\n",
           "oci_rlimit_nri_config_last_reload_success_timestamp_seconds{node=\"gpu-1\"} "
           "1764912000\n",
           "oci_rlimit_nri_config_reloads_refused_total{node=\"gpu-1\"} 1\n",
           "oci_rlimit_nri_replies_given_up_total{why=\"late\",node=\"gpu-1\"} 2\n",
           "oci_rlimit_nri_replies_given_up_total{why=\"unsent\",node=\"gpu-1\"} 1\n",
           "oci_rlimit_nri_refused_running_containers{node=\"gpu-1\"} 4\n",
           "oci_rlimit_nri_unhealed_containers{node=\"gpu-1\"} 5\n",
           "oci_rlimit_nri_last_successful_heal_timestamp_seconds{node=\"gpu-1\"} 1764912060\n",
           "oci_rlimit_nri_connected{node=\"gpu-1\"} 0\n",
       }) {
    EXPECT_NE(t.find(line), std::string::npos) << line << "\nin:\n" << t;
  }
  // every sample names the node
  std::istringstream in(t);
  for (std::string l; std::getline(in, l);) {
    if (l[0] != '#') {
      EXPECT_NE(l.find("node=\"gpu-1\"}"), std::string::npos) << l;
    }
  }
  // a reload taken: 1 again, at its time; a heal that left one unhealed keeps the last good one
  now += 60;
  m.ConfigReloaded(true);
  m.Synchronized(0, 1);
  t = m.Text();
  EXPECT_NE(t.find("oci_rlimit_nri_config_last_reload_successful{node=\"gpu-1\"} 1\n"),
            std::string::npos);
  EXPECT_NE(t.find("reload_success_timestamp_seconds{node=\"gpu-1\"} 1764912120\n"),
            std::string::npos);
  EXPECT_NE(t.find("heal_timestamp_seconds{node=\"gpu-1\"} 1764912060\n"), std::string::npos);
}

struct AddressCase {
  std::string name;
  std::string text;
  bool ok;
  MetricsAddress want;
};

class AddressTest : public ::testing::TestWithParam<AddressCase> {};

TEST_P(AddressTest, Parses) {
  auto got = ParseMetricsAddress(GetParam().text);
  ASSERT_EQ(got.ok(), GetParam().ok) << (got ? "" : got.error().Text());
  if (got) {
    EXPECT_EQ(*got, GetParam().want);
  }
}

using Kind = MetricsAddress::Kind;
INSTANTIATE_TEST_SUITE_P(
    Addresses, AddressTest,
    ::testing::Values(
        AddressCase{"loopback", "127.0.0.1:9464", true, {Kind::kTcp, "127.0.0.1", 9464, ""}},
        AddressCase{"any", "0.0.0.0:1", true, {Kind::kTcp, "0.0.0.0", 1, ""}},
        AddressCase{"port_only", ":9464", true, {Kind::kTcp, "0.0.0.0", 9464, ""}},
        AddressCase{"v6_any", "[::]:9464", true, {Kind::kTcp, "::", 9464, ""}},
        AddressCase{"v6", "[::1]:65535", true, {Kind::kTcp, "::1", 65535, ""}},
        AddressCase{"unix", "unix:/run/m.sock", true, {Kind::kUnix, "", 0, "/run/m.sock"}},
        AddressCase{"unix_relative", "unix:m.sock", false, {}},
        AddressCase{"host_name", "localhost:9464", false, {}},
        AddressCase{"no_port", "127.0.0.1", false, {}},
        AddressCase{"port_zero", "127.0.0.1:0", false, {}},
        AddressCase{"port_too_big", "127.0.0.1:65536", false, {}},
        AddressCase{"port_not_number", "127.0.0.1:http", false, {}},
        AddressCase{"v6_without_brackets", "::1:9464", false, {}}),
    CaseName{});

struct HttpCase {
  std::string name;
  std::string head;
  std::string status_line;
  bool body;
};

class HttpTest : public ::testing::TestWithParam<HttpCase> {};

TEST_P(HttpTest, Replies) {
  const std::string r = HttpReply(GetParam().head, [] { return std::string("m 1\n"); });
  EXPECT_EQ(r.substr(0, r.find("\r\n")), GetParam().status_line);
  EXPECT_NE(r.find("Connection: close\r\n"), std::string::npos);
  EXPECT_EQ(r.size() >= 4 && r.substr(r.size() - 4) == "m 1\n", GetParam().body) << r;
}

INSTANTIATE_TEST_SUITE_P(
    Requests, HttpTest,
    ::testing::Values(
        HttpCase{"get", "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 200 OK", true},
        HttpCase{"get_query", "GET /metrics?x=1 HTTP/1.0\r\n\r\n", "HTTP/1.1 200 OK", true},
        HttpCase{"head", "HEAD /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 200 OK", false},
        HttpCase{"other_path", "GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found", false},
        HttpCase{"post", "POST /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 405 Method Not Allowed",
                 false},
        HttpCase{"garbage", "hello\r\n\r\n", "HTTP/1.1 400 Bad Request", false}),
    CaseName{});

TEST(HttpReply, OkCarriesThePrometheusContentTypeAndLength) {
  const std::string r = HttpReply("GET /metrics HTTP/1.1\r\n\r\n", [] { return "abc\n"; });
  EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            std::string::npos);
  EXPECT_NE(r.find("Content-Length: 4\r\n"), std::string::npos);
}

// /readyz: 200 while connected, 503 while not; absent without a ready
// function, as before.
TEST(HttpReply, ReadyzFollowsTheConnection) {
  const auto metrics = [] { return std::string("m 1\n"); };
  bool connected = false;
  const auto ready = [&connected] { return connected; };
  const std::string get = "GET /readyz HTTP/1.1\r\n\r\n";
  std::string r = HttpReply(get, metrics, ready);
  EXPECT_EQ(r.substr(0, r.find("\r\n")), "HTTP/1.1 503 Service Unavailable") << r;
  EXPECT_NE(r.find("not connected to the runtime\n"), std::string::npos) << r;
  connected = true;
  r = HttpReply(get, metrics, ready);
  EXPECT_EQ(r.substr(0, r.find("\r\n")), "HTTP/1.1 200 OK") << r;
  EXPECT_EQ(r.find("m 1"), std::string::npos) << "the metrics body leaked into /readyz";
  r = HttpReply("POST /readyz HTTP/1.1\r\n\r\n", metrics, ready);
  EXPECT_EQ(r.substr(0, r.find("\r\n")), "HTTP/1.1 405 Method Not Allowed") << r;
  r = HttpReply(get, metrics);
  EXPECT_EQ(r.substr(0, r.find("\r\n")), "HTTP/1.1 404 Not Found") << r;
}

// The real server on a Unix socket: one GET, the whole reply back.
TEST(MetricsServer, ServesOverAUnixSocket) {
  char dir[] = "/tmp/nri-metrics-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/m.sock";
  auto server = StartMetricsServer({Kind::kUnix, "", 0, path}, [] { return "x 1\n"; });
  ASSERT_TRUE(server.ok()) << server.error().Text();
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::memcpy(sa.sun_path, path.c_str(), path.size());
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  const std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(write(fd, req.data(), req.size()), static_cast<ssize_t>(req.size()));
  std::string got;
  char buf[512];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  close(fd);
  server->reset();
  unlink(path.c_str());
  rmdir(dir);
  EXPECT_EQ(got.substr(0, got.find("\r\n")), "HTTP/1.1 200 OK");
  EXPECT_EQ(got.substr(got.size() - 4), "x 1\n");
}

}  // namespace
}  // namespace ocirlimit::nri
