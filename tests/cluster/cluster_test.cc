// The shipped Kubernetes manifests, applied as shipped to a real one-node cluster
// (tests/cluster/cluster.sh: etcd, kube-apiserver, controller manager, scheduler, kubelet and
// containerd 2.x in namespaces of their own), each asserted on what the node's processes read.
// The overlays go through `kubectl kustomize` (the same as `kubectl apply -k`). The only edits
// (edit-manifest.py): hostNetwork: true, the example pod's request, and (a policy change) the
// ConfigMap's config.toml.
// docs/daemons-testing.md, "Kubernetes".
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace {

namespace fs = std::filesystem;
using ocirlimit::itest::CmdResult;
using ocirlimit::itest::ReadFile;
using ocirlimit::itest::RunCmd;
using ocirlimit::itest::RunOptions;
using ocirlimit::itest::WriteFile;

const std::string kKubeDir = std::string(OCI_RLIMIT_SOURCE_DIR) + "/packaging/kubernetes";
const std::string kHere = std::string(OCI_RLIMIT_SOURCE_DIR) + "/tests/cluster";
// What a pod asks (oci-rlimit.io/rlimits, under the fleet policy's ceilings): no process here may
// raise a hard limit above 8 MiB. containerd runs with 1 MiB soft / 8 MiB hard, so a pod that
// gets oci-rlimit's limit reads 8388608 8388608 and one that does not reads 1048576 8388608.
const std::string kRlimits = "memlock=8388608";
const std::string kAsks = "oci-rlimit.io/rlimits: \"" + kRlimits + "\"";
const std::string kGranted = "Max locked memory 8388608 8388608 bytes";
const std::string kPlain = "Max locked memory 1048576 8388608 bytes";

struct Cluster {
  bool skip = false;
  std::string error;
  std::map<std::string, std::string> env;  // DIR/env: DIR NODE NODE_IP INIT_PID KUBECTL IN
  std::string operator[](const std::string& k) const {
    auto it = env.find(k);
    return it == env.end() ? "" : it->second;
  }
};

std::map<std::string, std::string> ReadVars(const std::string& path) {
  std::map<std::string, std::string> vars;
  std::istringstream in(ReadFile(path));
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq != std::string::npos) vars[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return vars;
}

// The cluster the ctest fixture cluster.start made (OCI_RLIMIT_CLUSTER_STATE names its state).
const Cluster& TheCluster() {
  static const Cluster c = [] {
    Cluster r;
    const char* state = std::getenv("OCI_RLIMIT_CLUSTER_STATE");
    if (state == nullptr || !fs::exists(state)) {
      r.error = "no cluster: run through ctest (fixture cluster.start), state file " +
                std::string(state ? state : "OCI_RLIMIT_CLUSTER_STATE unset") + " missing";
      return r;
    }
    auto vars = ReadVars(state);
    if (vars.count("SKIP")) {
      r.skip = true;
      return r;
    }
    r.env = ReadVars(vars["DIR"] + "/env");
    if (r.env.count("KUBECTL") == 0)
      r.error = "cluster.start did not finish: no " + vars["DIR"] + "/env";
    return r;
  }();
  return c;
}

#define REQUIRE_CLUSTER()                                                            \
  do {                                                                               \
    if (TheCluster().skip) GTEST_SKIP() << "no Kubernetes binaries (cluster.start)"; \
    ASSERT_EQ(TheCluster().error, "");                                               \
  } while (0)

CmdResult Kubectl(std::vector<std::string> args, const std::string& input = "",
                  int timeout_s = 150) {
  args.insert(args.begin(), TheCluster()["KUBECTL"]);
  RunOptions o;
  o.stdin_data = input;
  o.timeout_s = timeout_s;
  return RunCmd(args, o);
}

// A command inside the cluster's namespaces (its mount, PID, network and UTS namespaces).
CmdResult In(std::vector<std::string> argv, int timeout_s = 60) {
  argv.insert(argv.begin(), TheCluster()["IN"]);
  RunOptions o;
  o.timeout_s = timeout_s;
  return RunCmd(argv, o);
}

std::string NodeFile(const std::string& path) {
  CmdResult r = In({"cat", path});
  return r.status == 0 ? r.out : "";
}

// oci-rlimit's config on the node: config.toml (the fleet's) and its config.d drop-ins (the
// installer's).
std::string NodeConfig() {
  return In({"sh", "-c",
             "cat /etc/oci-rlimit/config.toml /etc/oci-rlimit/config.d/*.toml 2>/dev/null"})
      .out;
}

// The shipped manifest with the allowed edits (edit-manifest.py); `request`: the pod's
// oci-rlimit.io/rlimits becomes kRlimits.
std::string Manifest(const std::string& file, bool request = false) {
  std::vector<std::string> argv = {"python3", kHere + "/edit-manifest.py", kKubeDir + "/" + file};
  if (request) {
    argv.push_back("--request");
    argv.push_back(kRlimits);
  }
  CmdResult r = RunCmd(argv);
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

// An overlay of packaging/kubernetes as `kubectl kustomize` (the cluster's kubectl) makes it, with
// the allowed edits; `policy`: a file whose text becomes the ConfigMap's config.toml.
std::string Overlay(const std::string& dir, const std::string& policy = "") {
  CmdResult k = Kubectl({"kustomize", kKubeDir + "/" + dir});
  EXPECT_EQ(k.status, 0) << k.err;
  std::vector<std::string> argv = {"python3", kHere + "/edit-manifest.py", "-"};
  if (!policy.empty()) argv.insert(argv.end(), {"--policy", policy});
  RunOptions o;
  o.stdin_data = k.out;
  CmdResult r = RunCmd(argv, o);
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

void Apply(const std::string& yaml) {
  CmdResult r = Kubectl({"apply", "-f", "-"}, yaml);
  ASSERT_EQ(r.status, 0) << r.err << r.out;
}

void Label(const std::string& label) {
  CmdResult r = Kubectl({"label", "node", "--overwrite", TheCluster()["NODE"], label});
  ASSERT_EQ(r.status, 0) << r.err;
}

// What went wrong, for a failure message: the pods, the events, the DaemonSet's logs.
std::string Diagnose(const std::string& ns = "oci-rlimit") {
  std::string out = Kubectl({"get", "pods", "-A", "-o", "wide"}).out;
  out += Kubectl({"get", "events", "-n", ns, "--sort-by=.lastTimestamp"}).out;
  out += Kubectl({"logs", "-n", ns, "--all-containers", "--prefix", "--tail=30", "-l",
                  "app.kubernetes.io/name"})
             .out;
  return out;
}

void RolledOut(const std::string& ds) {
  CmdResult r = Kubectl(
      {"-n", "oci-rlimit", "rollout", "status", "daemonset/" + ds, "--timeout=150s"}, "", 170);
  ASSERT_EQ(r.status, 0) << r.err << r.out << Diagnose();
}

bool Eventually(const std::function<bool()>& ok, int seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!ok()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  return true;
}

// A busybox pod (hostNetwork, as every pod here) printing its memlock limit, then idling.
std::string PodYaml(const std::string& name, const std::string& runtime_class = "",
                    const std::string& annotation = "") {
  std::string y =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: default\n";
  if (!annotation.empty()) y += "  annotations: {" + annotation + "}\n";
  y += "spec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n";
  if (!runtime_class.empty()) y += "  runtimeClassName: " + runtime_class + "\n";
  y += "  containers:\n  - name: main\n    image: busybox:1.36\n"
       "    command: [\"sh\", \"-c\", \"grep 'locked memory' /proc/self/limits; exec sleep "
       "3600\"]\n";
  return y;
}

// The pod's first log line (its limit), once it runs.
std::string PodLimit(const std::string& name, const std::string& ns = "default") {
  CmdResult w = Kubectl(
      {"-n", ns, "wait", "--for=condition=Ready", "pod/" + name, "--timeout=120s"}, "", 140);
  EXPECT_EQ(w.status, 0) << w.err << Diagnose(ns) << Diagnose();
  std::string line;
  Eventually(
      [&] {
        std::istringstream in(Kubectl({"-n", ns, "logs", name}).out);
        std::getline(in, line);
        return !line.empty();
      },
      20);
  return std::regex_replace(std::regex_replace(line, std::regex(" +"), " "), std::regex(" $"), "");
}

void DeletePods(const std::vector<std::string>& names) {
  std::vector<std::string> argv = {
      "-n", "default", "delete", "pod", "--wait=false", "--grace-period=1", "--ignore-not-found"};
  argv.insert(argv.end(), names.begin(), names.end());
  Kubectl(argv);
}

int ContainerdStarts() {
  std::istringstream in(ReadFile(TheCluster()["DIR"] + "/containerd-starts"));
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.empty() ? 0 : 1;
  return n;
}

// The handler overlay (the installer DaemonSet, the RuntimeClass, the base) on the node,
// labelled as its comment says.
void EnsureInstalled() {
  Label("oci-rlimit.io/installed=true");
  Apply(Overlay("handler"));
  RolledOut("oci-rlimit-installer");
}

// The samples of a Prometheus text page as promtool input series, with the labels a scrape adds
// (instance, job), each value held for an hour of one-minute steps.
std::string InputSeries(const std::string& page, const std::string& labels) {
  std::string out;
  std::istringstream in(page);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto sp = line.rfind(' ');
    std::string name = line.substr(0, sp), value = line.substr(sp + 1);
    auto brace = name.find('{');
    name = brace == std::string::npos ? name + "{" + labels + "}"
                                      : name.substr(0, name.size() - 1) + "," + labels + "}";
    out += "      - series: '" + name + "'\n        values: '" + value + "x60'\n";
  }
  return out;
}

// promtool test rules on prometheus-rules.yaml: over SERIES (InputSeries), whether ALERT is firing
// at 30m (past every `for:`), with exactly the labels `firing` (`instance="..",severity=".."`), or
// not at all (`firing` empty). ALERTS is the series Prometheus keeps of its alerts.
CmdResult AlertAt30m(const std::string& name, const std::string& series, const std::string& alert,
                     const std::string& firing) {
  const std::string file = TheCluster()["DIR"] + "/" + name + "-rules-test.yaml";
  const std::string sel = "ALERTS{alertname=\"" + alert + "\",alertstate=\"firing\"";
  std::string exp = firing.empty() ? "        exp_samples: []\n"
                                   : "        exp_samples:\n          - labels: '" + sel + "," +
                                         firing + "}'\n            value: 1\n";
  WriteFile(file, "rule_files:\n  - " + kKubeDir +
                      "/prometheus-rules.yaml\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n"
                      "    input_series:\n" +
                      series + "    promql_expr_test:\n      - expr: '" + sel +
                      "}'\n        eval_time: 30m\n" + exp);
  return RunCmd({"promtool", "test", "rules", file});
}

TEST(ClusterTest, TheNodeIsNotCalledByItsAddress) {
  REQUIRE_CLUSTER();
  CmdResult r = Kubectl({"get", "node", "-o",
                         "jsonpath={.items[0].metadata.name} "
                         "{.items[0].status.addresses[?(@.type==\"InternalIP\")].address}"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, TheCluster()["NODE"] + " " + TheCluster()["NODE_IP"]);
  EXPECT_NE(TheCluster()["NODE"], TheCluster()["NODE_IP"]);
}

// The handler overlay as shipped: install.sh edits the node's /etc/containerd/config.toml (the
// cluster's, never this machine's) and restarts containerd (SIGHUP: no systemd here; the
// supervisor starts it again, as systemd would), writes the fleet's policy as the node's
// config.toml, and the DaemonSet becomes ready only after.
TEST(ClusterTest, InstallerDaemonSetAddsTheHandlerAndRestartsContainerd) {
  REQUIRE_CLUSTER();
  const int starts = ContainerdStarts();
  EnsureInstalled();
  const std::string config = NodeFile("/etc/containerd/config.toml");
  EXPECT_NE(config.find("runtimes.oci-rlimit]"), std::string::npos) << config;
  CmdResult dump = In({"containerd", "config", "dump"});
  ASSERT_EQ(dump.status, 0) << dump.err;
  EXPECT_NE(dump.out.find("BinaryName = '/usr/local/bin/oci-rlimit-runtime'"), std::string::npos)
      << dump.out;
  EXPECT_EQ(NodeFile("/etc/oci-rlimit/config.toml"), ReadFile(kKubeDir + "/base/config.toml"));
  // containerd was started again after the config was written (only the installer restarts it)
  if (starts == 1) {
    EXPECT_GE(ContainerdStarts(), 2) << "containerd never restarted";
  }
  CmdResult mtime = In({"stat", "-c", "%Y", "/etc/containerd/config.toml"});
  std::istringstream in(ReadFile(TheCluster()["DIR"] + "/containerd-starts"));
  double last = 0;
  for (std::string line; std::getline(in, line);) last = std::atof(line.c_str());
  EXPECT_GE(static_cast<long>(last), std::atol(mtime.out.c_str()))
      << "the running containerd started before the installer wrote its config";
  // this machine's own files are untouched
  CmdResult host = RunCmd({kHere + "/cluster.sh", "host-snapshot"});
  EXPECT_EQ(host.out, ReadFile(TheCluster()["DIR"] + "/host-before"));
  EXPECT_NE(NodeFile("/usr/local/bin/oci-rlimit-runtime"), "");
}

// The handler overlay's RuntimeClass and example-pod.yaml (its request edited): the pod reads the
// limit it asked for; a pod without the RuntimeClass keeps containerd's.
TEST(ClusterTest, ExamplePodReadsItsLimitThroughTheRuntimeClass) {
  REQUIRE_CLUSTER();
  EnsureInstalled();
  Apply(Manifest("example-pod.yaml", true));
  Apply(PodYaml("plain"));
  EXPECT_EQ(PodLimit("rdma-test"), kGranted);
  EXPECT_EQ(PodLimit("plain"), kPlain);
  DeletePods({"rdma-test", "plain"});
}

// The nri overlay as shipped (the fleet's policy: requests up to finite ceilings): a pod that
// asks reads its limit, one that does not keeps containerd's, and /metrics counts the request.
TEST(ClusterTest, NriDaemonSetGrantsAnAskingPodAndCountsIt) {
  REQUIRE_CLUSTER();
  Label("oci-rlimit.io/nri=true");
  Apply(Overlay("nri"));
  RolledOut("oci-rlimit-nri");
  ASSERT_TRUE(Eventually([] { return NodeFile("/run/oci-rlimit/nri.status") != ""; }, 30))
      << Diagnose();
  Apply(PodYaml("nri-asks", "", kAsks));
  Apply(PodYaml("nri-plain"));
  EXPECT_EQ(PodLimit("nri-asks"), kGranted);
  EXPECT_EQ(PodLimit("nri-plain"), kPlain);
  CmdResult m =
      In({"busybox", "wget", "-qO-", "http://" + TheCluster()["NODE_IP"] + ":9464/metrics"});
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_TRUE(std::regex_search(
      m.out, std::regex("oci_rlimit_nri_requests_total\\{[^}]*source=\"oci-rlimit\"[^}]*result="
                        "\"granted\"[^}]*\\} [1-9]")))
      << m.out;
  EXPECT_NE(m.out.find("oci_rlimit_nri_connected{node=\"" + TheCluster()["NODE"] + "\"} 1"),
            std::string::npos)
      << m.out;
  // The plugin's alert over its scraped series (instance: the pod's address and port): a connected
  // plugin raises none.
  const std::string labels =
      "instance=\"" + TheCluster()["NODE_IP"] + ":9464\",job=\"oci-rlimit-nri\"";
  const std::string up = "      - series: 'up{" + labels + "}'\n        values: '1x60'\n";
  CmdResult quiet =
      AlertAt30m("nri", InputSeries(m.out, labels) + up, "OciRlimitNriPluginNotConnected", "");
  EXPECT_EQ(quiet.status, 0) << quiet.out << quiet.err;
  // ... and the same page with the plugin disconnected does (so the series above are the ones
  // the alert reads)
  const std::string down =
      std::regex_replace(m.out, std::regex("\n(oci_rlimit_nri_connected\\{[^}]*\\}) 1"), "\n$1 0");
  CmdResult fires =
      AlertAt30m("nri-down", InputSeries(down, labels) + up, "OciRlimitNriPluginNotConnected",
                 "instance=\"" + TheCluster()["NODE_IP"] + ":9464\",node=\"" +
                     TheCluster()["NODE"] + "\",severity=\"critical\"");
  EXPECT_EQ(fires.status, 0) << fires.out << fires.err;
  DeletePods({"nri-asks", "nri-plain"});
}

// The ceiling at the door (docs/policy.md, "At admission"): the admission overlay as shipped (what
// `oci-rlimit admission-policy` writes from the fleet's ConfigMap,
// kustomize.admission_overlay_current), on the cluster's API server. A pod the plugin would refuse
// (over the ConfigMap's ceiling) is refused at `kubectl apply`, and by --dry-run=server, with the
// node's own words; one under the ceiling is admitted and, on the node, reads the limit the plugin
// gives it. (tests/admission runs the whole case table against explain on an API server of its
// own.)
TEST(ClusterTest, AdmissionPolicyRefusesAtTheDoorAndAdmitsWhatTheNodeGrants) {
  REQUIRE_CLUSTER();
  Label("oci-rlimit.io/nri=true");
  Apply(Overlay("nri"));
  RolledOut("oci-rlimit-nri");
  ASSERT_TRUE(Eventually([] { return NodeFile("/run/oci-rlimit/nri.status") != ""; }, 30))
      << Diagnose();
  Apply(Overlay("admission"));
  const std::string refused =
      PodYaml("door-refused", "", "oci-rlimit.io/rlimits: \"memlock=128G\"");
  const std::string node_words =
      "denied request: container \"main\": annotation \"oci-rlimit.io/rlimits\" = "
      "\"memlock=128G\": memlock=137438953472:137438953472 is over the ceiling "
      "memlock=68719476736:68719476736 (over-ceiling = \"reject\")";
  // The API server loads a new policy a moment after it is created.
  CmdResult dry;
  EXPECT_TRUE(Eventually(
      [&] {
        dry = Kubectl({"create", "--dry-run=server", "-f", "-"}, refused);
        return dry.status != 0;
      },
      30))
      << dry.out << dry.err;
  EXPECT_NE(dry.err.find(node_words), std::string::npos) << dry.err;
  CmdResult applied = Kubectl({"apply", "-f", "-"}, refused);
  EXPECT_NE(applied.status, 0) << applied.out;
  EXPECT_NE(applied.err.find(node_words), std::string::npos) << applied.err;
  Apply(PodYaml("door-granted", "", kAsks));
  EXPECT_EQ(PodLimit("door-granted"), kGranted);
  Kubectl({"delete", "validatingadmissionpolicybinding,validatingadmissionpolicy", "-l",
           "app.kubernetes.io/managed-by=oci-rlimit"});
  DeletePods({"door-granted", "door-refused"});
}

// The handler-nvidia overlay on a GPU node as NVIDIA's toolkit leaves it (an `nvidia` handler whose
// BinaryName is /usr/bin/nvidia-container-runtime: here a stand-in that logs its argv and execs
// runc; containerd restarted on it), labelled oci-rlimit.io/nvidia=true: the plain installer leaves
// the node, the NVIDIA one makes the oci-rlimit handler a copy of NVIDIA's, and a pod of
// runtimeclass-nvidia.yaml reads its limit through oci-rlimit-runtime -> NVIDIA's runtime -> runc.
TEST(ClusterTest, NvidiaInstallerChainsThroughNvidiasRuntime) {
  REQUIRE_CLUSTER();
  const std::string calls = "/var/log/nvidia-container-runtime.calls";
  CmdResult gpu = In({"sh", "-c",
                      R"(set -e
grep -q "runtimes.nvidia]" /etc/containerd/config.toml && exit 0
printf '#!/bin/sh\necho "$*" >> )" +
                          calls + R"(\nexec runc "$@"\n' >/usr/bin/nvidia-container-runtime
chmod 755 /usr/bin/nvidia-container-runtime
cat >>/etc/containerd/config.toml <<'EOF'
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia]
  runtime_type = 'io.containerd.runc.v2'
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia.options]
    BinaryName = '/usr/bin/nvidia-container-runtime'
    SystemdCgroup = false
EOF
# as nvidia-ctk does: restart containerd (its supervisor starts it again on the new config)
kill $(busybox pidof containerd)
sleep 0.5
for i in $(seq 100); do ctr version >/dev/null 2>&1 && exit 0; sleep 0.2; done
exit 1
)"});
  ASSERT_EQ(gpu.status, 0) << gpu.err;
  Label("oci-rlimit.io/installed=true");
  Label("oci-rlimit.io/nvidia=true");
  Apply(Overlay("handler-nvidia"));
  RolledOut("oci-rlimit-installer-nvidia");
  // the plain installer's pod is gone from the GPU node (its affinity)
  EXPECT_TRUE(Eventually(
      [] {
        return Kubectl({"-n", "oci-rlimit", "get", "pods", "-l",
                        "app.kubernetes.io/name=oci-rlimit-installer", "-o", "name"})
            .out.empty();
      },
      60));
  CmdResult dump = In({"containerd", "config", "dump"});
  EXPECT_NE(dump.out.find("runtimes.nvidia]"), std::string::npos) << dump.out;
  EXPECT_NE(NodeConfig().find("/usr/bin/nvidia-container-runtime"), std::string::npos)
      << NodeConfig();
  Apply(PodYaml("gpu-pod", "oci-rlimit-nvidia", kAsks));
  EXPECT_EQ(PodLimit("gpu-pod"), kGranted);
  EXPECT_NE(NodeFile(calls).find("create"), std::string::npos)
      << "oci-rlimit-runtime did not exec NVIDIA's runtime: " << NodeFile(calls);
  DeletePods({"gpu-pod"});
}

// The audit textfile once it is newer than `after` (the DaemonSet's pod audits at its start).
std::string FreshTextfile(long after) {
  const std::string f = "/var/lib/node_exporter/textfile/oci-rlimit.prom";
  std::string text;
  Eventually(
      [&] {
        CmdResult t = In({"stat", "-c", "%Y", f});
        if (t.status != 0 || std::atol(t.out.c_str()) < after) return false;
        text = NodeFile(f);
        return text.find("oci_rlimit_audit_last_run_timestamp_seconds") != std::string::npos;
      },
      90);
  return text;
}

long Missing(const std::string& textfile) {
  std::smatch m;
  if (!std::regex_search(
          textfile, m,
          std::regex("\noci_rlimit_audit_containers\\{state=\"missing\"[^}]*\\} ([0-9]+)"))) {
    return -1;
  }
  return std::atol(m[1].str().c_str());
}

// The init's host PID of the pod's container (the cluster's PID namespace).
std::string InitPid(const std::string& pod) {
  CmdResult id = Kubectl({"-n", "default", "get", "pod", pod, "-o",
                          "jsonpath={.status.containerStatuses[0].containerID}"});
  std::string cid = id.out.substr(id.out.find("://") + 3);
  CmdResult t = In({"ctr", "-n", "k8s.io", "task", "ls"});
  std::istringstream in(t.out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string c, pid;
    f >> c >> pid;
    if (c == cid) return pid;
  }
  return "";
}

void RestartAudit() {
  Kubectl({"-n", "oci-rlimit", "delete", "pod", "-l",
           "app.kubernetes.io/name=oci-rlimit-audit-metrics", "--wait=false", "--grace-period=1"});
}

// The samples of a Prometheus page without `label` (e.g. node="n"), one a line; "" when all have
// it.
std::string SamplesWithout(const std::string& page, const std::string& label) {
  std::string out;
  std::istringstream in(page);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#' && line.find(label) == std::string::npos)
      out += line + "\n";
  }
  return out;
}

// The audit overlay as shipped, on a RuntimeClass node: pods without the handler are
// outside the scope (0 missing); a handler pod whose limit was lowered is the one missing.
// issue 38: fails until the audit DaemonSet sees the install record and containerd's root (the
// manifest mounts only /run, /etc/oci-rlimit and the textfile directory, so its scope is "no
// installer record: every container").
TEST(ClusterTest, AuditDaemonSetCountsOnlyTheLoweredHandlerPodMissing) {
  REQUIRE_CLUSTER();
  EnsureInstalled();
  // Not an NRI node (the NRI test may have made it one): oci-rlimit-nri's status file makes every
  // container audit's (docs/audit.md, "What audit judges").
  Label("oci-rlimit.io/nri-");
  ASSERT_TRUE(Eventually(
      [] {
        return Kubectl({"-n", "oci-rlimit", "get", "pods", "-l",
                        "app.kubernetes.io/name=oci-rlimit-nri", "-o", "name"})
            .out.empty();
      },
      60));
  In({"rm", "-f", "/run/oci-rlimit/nri.status"});
  Apply(PodYaml("audit-plain"));
  Apply(PodYaml("audit-handler", "oci-rlimit", kAsks));
  EXPECT_EQ(PodLimit("audit-plain"), kPlain);
  EXPECT_EQ(PodLimit("audit-handler"), kGranted);
  Label("oci-rlimit.io/audit=true");
  long t0 = static_cast<long>(time(nullptr));
  RestartAudit();
  Apply(Overlay("audit"));
  RolledOut("oci-rlimit-audit-metrics");
  std::string before = FreshTextfile(t0);
  EXPECT_EQ(Missing(before), 0) << "ordinary pods are outside a RuntimeClass node's scope:\n"
                                << before;
  // lower the handler pod's init, as something on the node might
  const std::string pid = InitPid("audit-handler");
  ASSERT_NE(pid, "");
  CmdResult lower = In({"prlimit", "--pid", pid, "--memlock=1048576:8388608"});
  ASSERT_EQ(lower.status, 0) << lower.err;
  std::this_thread::sleep_for(std::chrono::seconds(1));
  t0 = static_cast<long>(time(nullptr));
  RestartAudit();
  RolledOut("oci-rlimit-audit-metrics");
  std::string after = FreshTextfile(t0);
  EXPECT_EQ(Missing(after), 1) << after;
  // The alert over the scraped series (node_exporter's textfile collector: instance NODE_IP:9100;
  // its `for:` is too long to wait out): it fires for the node with one missing, not for the node
  // as it was before.
  const std::string instance = TheCluster()["NODE_IP"] + ":9100";
  const std::string labels = "instance=\"" + instance + "\",job=\"node\"";
  CmdResult fires = AlertAt30m(
      "missing", InputSeries(after, labels), "OciRlimitContainersMissingLimits",
      "instance=\"" + instance + "\",node=\"" + TheCluster()["NODE"] + "\",severity=\"warning\"");
  EXPECT_EQ(fires.status, 0) << fires.out << fires.err;
  CmdResult quiet = AlertAt30m("none-missing", InputSeries(before, labels),
                               "OciRlimitContainersMissingLimits", "");
  EXPECT_EQ(quiet.status, 0) << quiet.out << quiet.err;
  DeletePods({"audit-plain", "audit-handler"});
}

// Every series of the plugin's /metrics page and the audit's textfile can be joined to its node:
// the node's name is in a label (here it is not its address, so the check can fail).
// Both DaemonSets set NODE_NAME from the pod's spec.nodeName (the downward API); every sample
// carries node="NODE". A 0600 textfile from before is replaced by a world-readable (0644) one.
TEST(ClusterTest, PluginAndAuditSeriesNameTheNode) {
  REQUIRE_CLUSTER();
  EnsureInstalled();
  Label("oci-rlimit.io/nri=true");
  Label("oci-rlimit.io/audit=true");
  Apply(Overlay("nri"));
  Apply(Overlay("audit"));
  RolledOut("oci-rlimit-nri");
  RolledOut("oci-rlimit-audit-metrics");
  const std::string named = "=\"" + TheCluster()["NODE"] + "\"";
  CmdResult m =
      In({"busybox", "wget", "-qO-", "http://" + TheCluster()["NODE_IP"] + ":9464/metrics"});
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_EQ(SamplesWithout(m.out, "node" + named), "") << m.out;
  EXPECT_NE(m.out.find("oci_rlimit_nri_config_last_reload_successful{node" + named + "} 1"),
            std::string::npos)
      << m.out;
  const std::string textfile = FreshTextfile(0);
  EXPECT_NE(textfile, "");
  EXPECT_EQ(SamplesWithout(textfile, "node" + named), "") << textfile;
  EXPECT_NE(textfile.find("oci_rlimit_audit_out_of_scope_containers{node" + named + "}"),
            std::string::npos)
      << textfile;
  const std::string f = "/var/lib/node_exporter/textfile/oci-rlimit.prom";
  ASSERT_EQ(In({"chmod", "600", f}).status, 0);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const long t0 = static_cast<long>(time(nullptr));
  RestartAudit();
  RolledOut("oci-rlimit-audit-metrics");
  EXPECT_NE(FreshTextfile(t0), "");
  EXPECT_EQ(In({"stat", "-c", "%a", f}).out, "644\n");
}

// The containers a textfile counts, every state (pod sandboxes included).
long Counted(const std::string& textfile) {
  long n = 0;
  const std::regex sample("\noci_rlimit_audit_containers\\{state=\"[a-z_]+\"[^}]*\\} ([0-9]+)");
  for (auto it = std::sregex_iterator(textfile.begin(), textfile.end(), sample);
       it != std::sregex_iterator(); ++it) {
    n += std::atol((*it)[1].str().c_str());
  }
  return n;
}

// The digest of the policy in FILE (core/policy_digest.h), as the admission policy made from it
// carries it.
std::string DigestOf(const std::string& file) {
  CmdResult r =
      RunCmd({ocirlimit::itest::OurBinary("oci-rlimit"), "admission-policy", "--config", file});
  std::smatch m;
  EXPECT_TRUE(std::regex_search(r.out, m, std::regex("policy-digest: \"([0-9a-f]{64})\"")))
      << r.err;
  return m.size() > 1 ? m[1].str() : "";
}

std::string PluginMetrics() {
  return In({"busybox", "wget", "-qO-", "http://" + TheCluster()["NODE_IP"] + ":9464/metrics"}).out;
}

// A series' value on a Prometheus page: the first sample of `name` (with any labels).
std::string SampleOf(const std::string& page, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(page, m, std::regex("\n" + name + "\\{[^}]*\\} ([0-9.e+]+)"))) return "";
  return m[1].str();
}

// The pods of the oci-rlimit namespace, by uid: the same set means none was deleted.
std::string PieceUids() {
  return Kubectl({"-n", "oci-rlimit", "get", "pods", "-o",
                  "jsonpath={range .items[*]}{.metadata.uid}{\"\\n\"}{end}"})
      .out;
}

// One policy change (issue 46): the fleet's config.toml changed and the overlays applied again
// reaches, with no pod deleted and no moment without the plugin, the node's config.toml (the
// installer's sync container), the plugin (a reload, and oci_rlimit_policy_info's digest) and
// audit (its textfile's digest); the admission policy made from the new file refuses by the new
// ceiling, and --check calls the cluster's old one stale, naming its digest.
TEST(ClusterTest, APolicyChangeReachesEveryPieceWithNoPodDeleted) {
  REQUIRE_CLUSTER();
  EnsureInstalled();
  Label("oci-rlimit.io/nri=true");
  Label("oci-rlimit.io/audit=true");
  Apply(Overlay("nri"));
  Apply(Overlay("audit"));
  Apply(Overlay("admission"));
  RolledOut("oci-rlimit-nri");
  RolledOut("oci-rlimit-audit-metrics");
  const std::string old_digest = DigestOf(kKubeDir + "/base/config.toml");
  const std::string old_series = "digest=\"" + old_digest + "\"";
  ASSERT_TRUE(Eventually([&] { return PluginMetrics().find(old_series) != std::string::npos; }, 60))
      << PluginMetrics();
  const long t0_audit = static_cast<long>(time(nullptr));
  RestartAudit();
  RolledOut("oci-rlimit-audit-metrics");
  const std::string first = FreshTextfile(t0_audit);
  ASSERT_NE(first.find(old_series), std::string::npos) << first;
  // On a node with the plugin, audit finds the node's containers (the runtime's roots under the
  // /run it mounts) on its first run.
  EXPECT_GT(Counted(first), 0) << first;
  // The pods as they are now: none still terminating (RestartAudit's).
  ASSERT_TRUE(Eventually(
      [] {
        return Kubectl({"-n", "oci-rlimit", "get", "pods", "-o",
                        "jsonpath={.items[*].metadata.deletionTimestamp}"})
            .out.empty();
      },
      60));
  const std::string uids = PieceUids();
  const std::string connects = SampleOf(PluginMetrics(), "oci_rlimit_nri_connects_total");

  const std::string fleet = TheCluster()["DIR"] + "/fleet-changed.toml";
  const std::string text =
      "[requests]\nenabled = true\nceilings = [\"memlock=4M\"]\nover-ceiling = \"reject\"\n";
  WriteFile(fleet, text);
  const std::string new_digest = DigestOf(fleet);
  ASSERT_NE(new_digest, old_digest);
  const std::string new_series = "digest=\"" + new_digest + "\"";
  const auto t0 = std::chrono::steady_clock::now();
  for (const char* o : {"handler", "nri", "audit"}) Apply(Overlay(o, fleet));
  EXPECT_TRUE(Eventually([&] { return NodeFile("/etc/oci-rlimit/config.toml") == text; }, 180))
      << NodeFile("/etc/oci-rlimit/config.toml") << Diagnose();
  EXPECT_TRUE(
      Eventually([&] { return PluginMetrics().find(new_series) != std::string::npos; }, 180))
      << PluginMetrics();
  EXPECT_TRUE(Eventually(
      [&] {
        return NodeFile("/var/lib/node_exporter/textfile/oci-rlimit.prom").find(new_series) !=
               std::string::npos;
      },
      180))
      << NodeFile("/var/lib/node_exporter/textfile/oci-rlimit.prom");
  std::cerr << "policy change converged in "
            << std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                                t0)
                   .count()
            << " s\n";
  EXPECT_EQ(PieceUids(), uids) << "a pod was replaced";
  EXPECT_EQ(SampleOf(PluginMetrics(), "oci_rlimit_nri_connects_total"), connects)
      << "the plugin reconnected: a window without it";

  // The cluster's admission policy is the old file's: --check says stale and names it.
  const std::string cluster_policy =
      Kubectl({"get", "validatingadmissionpolicy", "-l", "app.kubernetes.io/managed-by=oci-rlimit",
               "-o", "yaml"})
          .out;
  RunOptions in;
  in.stdin_data = cluster_policy;
  CmdResult stale = RunCmd(
      {ocirlimit::itest::OurBinary("oci-rlimit"), "admission-policy", "--check", "--config", fleet},
      in);
  EXPECT_EQ(stale.status, 1) << stale.out << stale.err;
  EXPECT_NE(stale.err.find("stale: "), std::string::npos) << stale.err;
  EXPECT_NE(stale.err.find(old_digest), std::string::npos) << stale.err;
  // Regenerated from the new file and applied: a pod the new ceiling refuses is refused at the
  // door.
  CmdResult policy =
      RunCmd({ocirlimit::itest::OurBinary("oci-rlimit"), "admission-policy", "--config", fleet});
  ASSERT_EQ(policy.status, 0) << policy.err;
  Apply(policy.out);
  const std::string asks = PodYaml("door-new-ceiling", "", kAsks);
  CmdResult dry;
  EXPECT_TRUE(Eventually(
      [&] {
        dry = Kubectl({"create", "--dry-run=server", "-f", "-"}, asks);
        return dry.status != 0;
      },
      30))
      << dry.out << dry.err;
  EXPECT_NE(dry.err.find("memlock=8388608:8388608 is over the ceiling memlock=4194304:4194304"),
            std::string::npos)
      << dry.err;
  in.stdin_data = Kubectl({"get", "validatingadmissionpolicy", "-l",
                           "app.kubernetes.io/managed-by=oci-rlimit", "-o", "yaml"})
                      .out;
  CmdResult current = RunCmd(
      {ocirlimit::itest::OurBinary("oci-rlimit"), "admission-policy", "--check", "--config", fleet},
      in);
  EXPECT_EQ(current.status, 0) << current.out << current.err;

  // The shipped policy back, for the tests after this one.
  for (const char* o : {"handler", "nri", "audit", "admission"}) Apply(Overlay(o));
  EXPECT_TRUE(Eventually(
      [&] {
        return NodeFile("/etc/oci-rlimit/config.toml") == ReadFile(kKubeDir + "/base/config.toml");
      },
      180));
}

// Each piece's uninstall leaves no file of it on the node (docs/guides/fleet-policy.md,
// "Uninstall"): the plugin removes its status file and audit its textfile when their pods stop,
// and the admission overlay goes with `kubectl delete -k`.
TEST(ClusterTest, UninstallOfEachPieceLeavesNoFileOnTheNode) {
  REQUIRE_CLUSTER();
  Label("oci-rlimit.io/nri=true");
  Label("oci-rlimit.io/audit=true");
  Apply(Overlay("nri"));
  Apply(Overlay("audit"));
  Apply(Overlay("admission"));
  RolledOut("oci-rlimit-nri");
  RolledOut("oci-rlimit-audit-metrics");
  const std::string status = "/run/oci-rlimit/nri.status";
  const std::string textfile = "/var/lib/node_exporter/textfile/oci-rlimit.prom";
  ASSERT_TRUE(Eventually([&] { return NodeFile(status) != "" && NodeFile(textfile) != ""; }, 90))
      << Diagnose();
  for (const char* ds : {"oci-rlimit-nri", "oci-rlimit-audit-metrics"}) {
    CmdResult d = Kubectl({"-n", "oci-rlimit", "delete", "daemonset", ds, "--wait=true"});
    EXPECT_EQ(d.status, 0) << d.err;
  }
  EXPECT_TRUE(Eventually(
      [] {
        return Kubectl({"-n", "oci-rlimit", "get", "pods", "-l",
                        "app.kubernetes.io/name in (oci-rlimit-nri,oci-rlimit-audit-metrics)", "-o",
                        "name"})
            .out.empty();
      },
      90));
  EXPECT_NE(In({"test", "-e", status}).status, 0) << NodeFile(status);
  EXPECT_NE(In({"test", "-e", textfile}).status, 0) << NodeFile(textfile);
  CmdResult adm = Kubectl({"delete", "-k", kKubeDir + "/admission"});
  EXPECT_EQ(adm.status, 0) << adm.err;
  EXPECT_EQ(Kubectl({"get", "validatingadmissionpolicy,validatingadmissionpolicybinding", "-l",
                     "app.kubernetes.io/managed-by=oci-rlimit", "-o", "name"})
                .out,
            "");
}

}  // namespace
