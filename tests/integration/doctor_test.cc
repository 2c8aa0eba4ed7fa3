// The oci-rlimit admin CLI as a program: doctor on a node fixture (a temp
// root with the config files of docker, containerd, podman and systemd) and
// on this machine, and validate/explain on real files. Asserts the paths and
// verdicts it prints, in --json and as a table, and its exit status.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

#include "daemons.h"
#include "harness.h"
#include "tests/testing/deep_toml.h"

namespace ocirlimit::itest {
namespace {

std::string Cli() { return OurBinary("oci-rlimit"); }

Json ParseJson(const CmdResult& r) {
  Json j = Json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

// The check of `area` whose text contains `what`, or null.
Json FindCheck(const Json& report, const std::string& area, const std::string& what) {
  for (const auto& c : report["checks"]) {
    if (c["area"] == area && c["what"].get<std::string>().find(what) != std::string::npos) {
      return c;
    }
  }
  return nullptr;
}

void Script(const std::string& path, const std::string& version_line) {
  WriteFile(path, "#!/bin/sh\necho '" + version_line + "'\n", 0755);
}

class DoctorFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string& r = root_.path();
    Sh("mkdir -p " + r + "/usr/bin " + r + "/usr/sbin " + r + "/usr/local/bin " + r +
       "/etc/docker " + r + "/etc/containerd " + r + "/usr/share/containers/oci/hooks.d " + r +
       "/lib/systemd/system " + r + "/etc/systemd/system/docker.service.d " + r +
       "/etc/oci-rlimit " + r + "/proc/self");
    Script(root_ / "usr/sbin/runc", "runc version 1.1.5");
    Script(root_ / "usr/bin/crun", "crun version 1.8.1");
    Script(root_ / "usr/sbin/dockerd", "Docker version 20.10.24+dfsg1, build 5d6db84");
    Script(root_ / "usr/bin/containerd", "containerd github.com/containerd/containerd 1.6.20");
    Script(root_ / "usr/bin/podman", "podman version 4.3.1");
    Script(root_ / "usr/bin/oci-rlimit-hook", "oci-rlimit-hook 0.1.0");
    Script(root_ / "usr/bin/oci-rlimit-runtime", "oci-rlimit-runtime 0.1.0");
    // NVIDIA's own hook, the chain target of ours below.
    Script(root_ / "usr/bin/nvidia-container-runtime-hook", "NVIDIA Container Runtime Hook 1.17.8");
    // An absolute link, as a package installs it: resolved under the root.
    EXPECT_EQ(symlink("/usr/bin/oci-rlimit-hook",
                      (root_ / "usr/local/bin/nvidia-container-runtime-hook").c_str()),
              0);
    WriteFile(root_ / "etc/docker/daemon.json",
              R"({"runtimes":{"oci-rlimit":{"path":"/usr/bin/oci-rlimit-runtime"}}})");
    WriteFile(root_ / "etc/containerd/config.toml", R"(version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit]
runtime_type = "io.containerd.runc.v2"
pod_annotations = ["oci-rlimit.io/*"]
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit.options]
BinaryName = "/usr/bin/oci-rlimit-runtime"
)");
    WriteFile(root_ / "usr/share/containers/oci/hooks.d/oci-rlimit.json",
              R"({"version":"1.0.0","hook":{"path":"/usr/bin/oci-rlimit-hook",
                  "args":["oci-rlimit-hook","createRuntime"]},
                  "when":{"always":true},"stages":["createRuntime"]})");
    WriteFile(root_ / "lib/systemd/system/containerd.service",
              "[Unit]\nDescription=containerd\n[Service]\nExecStart=/usr/bin/containerd\n"
              "LimitMEMLOCK=8M\n");
    WriteFile(root_ / "lib/systemd/system/docker.service", "[Service]\nLimitNOFILE=1048576\n");
    WriteFile(root_ / "etc/systemd/system/docker.service.d/memlock.conf",
              "[Service]\nLimitMEMLOCK=infinity\n");
    WriteFile(root_ / "etc/oci-rlimit/config.toml",
              "[[rule]]\nname = \"gpu\"\nrlimits = [\"memlock=unlimited\"]\n"
              "match = { env = [\"NVIDIA_VISIBLE_DEVICES\"] }\n"
              "[requests]\nenabled = true\nceilings = [\"memlock=64G\"]\n");
    WriteFile(root_ / "proc/self/status", "Name:\tx\nCapEff:\t000001fffeffffff\n");
  }

  CmdResult Doctor(bool json) {
    std::vector<std::string> argv = {Cli(), "doctor", "--root", root_.path()};
    if (json) argv.push_back("--json");
    return RunCmd(argv);
  }

  TempDir root_;
};

TEST_F(DoctorFixture, NamesThePathsItFound) {
  CmdResult r = Doctor(true);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  Json j = ParseJson(r);
  EXPECT_EQ(j["ok"], true);
  struct Want {
    std::string area, what, path, status;
  };
  for (const Want& w : std::vector<Want>{
           {"runc", "runc 1.1.5: applies the spec's process.rlimits after hooks", "/usr/sbin/runc",
            "ok"},
           {"crun", "crun 1.8.1: applies the spec's process.rlimits before hooks", "/usr/bin/crun",
            "ok"},
           {"docker", "dockerd 20.10.24+dfsg1", "/usr/sbin/dockerd", "ok"},
           {"docker",
            "daemon.json runtime \"oci-rlimit\": /usr/bin/oci-rlimit-runtime -> /usr/sbin/runc: "
            "containers run with --runtime oci-rlimit get oci-rlimit's limits (none by default; 1 "
            "rule(s) may add; requests up to the ceilings), not NVIDIA's runtime",
            "/etc/docker/daemon.json", "ok"},
           {"docker", "nvidia-container-runtime-hook is oci-rlimit-hook",
            "/usr/local/bin/nvidia-container-runtime-hook", "ok"},
           {"docker", "docker.service has LimitMEMLOCK=infinity",
            "/etc/systemd/system/docker.service.d/memlock.conf", "warn"},
           {"containerd", "containerd 1.6.20", "/usr/bin/containerd", "ok"},
           {"containerd",
            "runtime handler \"oci-rlimit\": /usr/bin/oci-rlimit-runtime -> /usr/sbin/runc: pods "
            "with runtimeClassName oci-rlimit get oci-rlimit's limits (none by default; 1 rule(s) "
            "may add; requests up to the ceilings), not NVIDIA's runtime",
            "/etc/containerd/config.toml", "ok"},
           {"containerd", "passes the pod annotation oci-rlimit.io/rlimits",
            "/etc/containerd/config.toml", "ok"},
           {"containerd", "containerd.service has LimitMEMLOCK=8M",
            "/lib/systemd/system/containerd.service", "info"},
           {"hooks.d", "podman runs oci-rlimit-hook (stages createRuntime)",
            "/usr/share/containers/oci/hooks.d/oci-rlimit.json", "ok"},
           {"config", "0 default limit(s), 1 rule(s), requests enabled",
            "/etc/oci-rlimit/config.toml", "ok"},
           {"capabilities", "no CAP_SYS_RESOURCE", "/proc/self/status", "warn"},
       }) {
    Json c = FindCheck(j, w.area, w.what);
    ASSERT_FALSE(c.is_null()) << w.area << ": " << w.what << "\n" << j.dump(2);
    EXPECT_EQ(c["path"], w.path) << w.what;
    EXPECT_EQ(c["status"], w.status) << w.what;
  }
  CmdResult table = Doctor(false);
  EXPECT_EQ(table.status, 0);
  EXPECT_NE(table.out.find("path: /usr/share/containers/oci/hooks.d/oci-rlimit.json"),
            std::string::npos)
      << table.out;
}

TEST_F(DoctorFixture, ExitsNonZeroOnABrokenNode) {
  WriteFile(root_ / "etc/oci-rlimit/config.toml", "rlimits = [\"memlok=1\"]\n");
  WriteFile(root_ / "etc/docker/daemon.json", "{\"runtimes\":");
  CmdResult r = Doctor(true);
  EXPECT_EQ(r.status, 1) << r.out;
  Json j = ParseJson(r);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(FindCheck(j, "config", "unknown name \"memlok\"")["status"], "FAIL") << j.dump(2);
  EXPECT_EQ(FindCheck(j, "docker", "not valid JSON")["status"], "FAIL") << j.dump(2);
  CmdResult table = Doctor(false);
  EXPECT_EQ(table.status, 1);
  EXPECT_NE(table.out.find("FAIL  config"), std::string::npos) << table.out;
}

// An engine's TOML nested past the guard (toml++ recursed once per part of
// a dotted key or a [table] header and crashed, rc 139): doctor reports one
// FAIL line naming the file, in --json and in the table, and exits 1.
struct DeepEngineFile {
  std::string name;
  std::string area;
  std::string file;  // node path, written under the root
  std::string text;
  std::string what;  // the FAIL check's text begins with it
};
void PrintTo(const DeepEngineFile& c, std::ostream* os) { *os << c.name; }

class DoctorDeepToml : public DoctorFixture,
                       public ::testing::WithParamInterface<DeepEngineFile> {};

TEST_P(DoctorDeepToml, FailsTheFileInOneLine) {
  const DeepEngineFile& c = GetParam();
  if (c.area == "CRI-O") {
    Sh("mkdir -p " + (root_ / "etc/crio/crio.conf.d"));
    Script(root_ / "usr/bin/crio", "crio version 1.31.13");
    WriteFile(root_ / "etc/crio/crio.conf", "[crio.runtime]\n");
  }
  WriteFile(root_.path() + c.file, c.text);
  CmdResult r = Doctor(true);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, "");
  Json j = ParseJson(r);
  Json fail = FindCheck(j, c.area, c.what);
  ASSERT_FALSE(fail.is_null()) << j.dump(2).substr(0, 4000);
  EXPECT_EQ(fail["status"], "FAIL");
  CmdResult table = Doctor(false);
  EXPECT_EQ(table.status, 1) << table.err;
  EXPECT_EQ(table.err, "");
  std::istringstream lines(table.out);
  std::string line, found;
  while (std::getline(lines, line)) {
    if (line.starts_with("FAIL") && line.find(c.what) != std::string::npos) found = line;
  }
  EXPECT_NE(found, "") << table.out.substr(0, 4000);
}

INSTANTIATE_TEST_SUITE_P(
    Engines, DoctorDeepToml,
    ::testing::Values(
        DeepEngineFile{"ContainerdDeepDottedKey", "containerd", "/etc/containerd/config.toml",
                       testsupport::DeepTomlDottedKey(),
                       "/etc/containerd/config.toml: line 1, column 200: keys nested deeper "
                       "than 100 levels"},
        DeepEngineFile{"ContainerdDeepHeader", "containerd", "/etc/containerd/config.toml",
                       "version = 2\n" + testsupport::DeepTomlHeader(),
                       "/etc/containerd/config.toml: line 2, column 201: keys nested deeper "
                       "than 100 levels"},
        DeepEngineFile{"CrioDropInDeepHeader", "CRI-O", "/etc/crio/crio.conf.d/50-deep.conf",
                       testsupport::DeepTomlHeader(),
                       "/etc/crio/crio.conf.d/50-deep.conf: line 1, column 201: keys nested "
                       "deeper than 100 levels"},
        DeepEngineFile{"CrioDropInDeepDottedKey", "CRI-O", "/etc/crio/crio.conf.d/50-deep.conf",
                       testsupport::DeepTomlDottedKey(),
                       "/etc/crio/crio.conf.d/50-deep.conf: line 1, column 200: keys nested "
                       "deeper than 100 levels"}),
    [](const auto& info) { return info.param.name; });

// CRI-O with an empty crio.conf (no [crio] table) and its handler in
// crio.conf.d, the config named with --config (a node path under --root),
// and no /proc in the copy: no crash, the handler's chain, the named config,
// and nothing said about this process's capabilities.
TEST_F(DoctorFixture, CrioWithAnEmptyCrioConfAndTheConfigFlag) {
  Sh("mkdir -p " + (root_ / "etc/crio/crio.conf.d") + " " + (root_ / "srv"));
  Script(root_ / "usr/bin/crio", "crio version 1.31.13");
  WriteFile(root_ / "etc/crio/crio.conf", "");
  WriteFile(root_ / "etc/crio/crio.conf.d/50-oci-rlimit.conf",
            "[crio.runtime.runtimes.oci-rlimit]\nruntime_path = \"/usr/bin/oci-rlimit-runtime\"\n");
  WriteFile(root_ / "srv/rl.toml", "rlimits = [\"memlock=unlimited\"]\n");
  Sh("rm -r " + (root_ / "proc"));
  CmdResult r =
      RunCmd({Cli(), "doctor", "--root", root_.path(), "--config", "/srv/rl.toml", "--json"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  Json j = ParseJson(r);
  Json handler = FindCheck(j, "CRI-O",
                           "runtime handler \"oci-rlimit\": /usr/bin/oci-rlimit-runtime -> "
                           "/usr/sbin/runc: pods with runtimeClassName oci-rlimit get oci-rlimit's "
                           "limits (by default memlock=unlimited:unlimited), not NVIDIA's runtime");
  ASSERT_FALSE(handler.is_null()) << j.dump(2);
  EXPECT_EQ(handler["status"], "ok");
  EXPECT_EQ(handler["path"], "/etc/crio/crio.conf.d/50-oci-rlimit.conf");
  Json config = FindCheck(j, "config", "1 default limit(s), 0 rule(s)");
  ASSERT_FALSE(config.is_null()) << j.dump(2);
  EXPECT_EQ(config["path"], "/srv/rl.toml");
  for (const auto& c : j["checks"]) EXPECT_NE(c["area"], "capabilities") << c.dump();
}

// oci-rlimit-nri as doctor meets it on a node: a real process, found by its
// /proc/PID/comm (the fixture's proc/PID links to this machine's), and a real
// listening socket where containerd 2.x's config puts NRI's.
TEST_F(DoctorFixture, FindsTheRunningNriPluginAndContainerdsSocket) {
  Script(root_ / "usr/bin/containerd", "containerd github.com/containerd/containerd/v2 v2.1.9 x");
  const std::string wants = root_ / "etc/systemd/system/multi-user.target.wants";
  Sh("mkdir -p " + (root_ / "var/run/nri") + " " + wants);
  WriteFile(wants + "/oci-rlimit-nri.service", "[Service]\nExecStart=/usr/bin/oci-rlimit-nri\n");
  const std::string sock = root_ / "var/run/nri/nri.sock";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.size(), sizeof addr.sun_path) << sock;
  std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
  const int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  ASSERT_EQ(bind(listener, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 8), 0);

  auto nri_checks = [&] {
    CmdResult r = Doctor(true);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    const Json j = ParseJson(r);  // kept: a range over a temporary's member would dangle
    std::vector<std::string> out;
    for (const auto& c : j["checks"]) {
      if (c["area"] == "nri") {
        out.push_back(c["status"].get<std::string>() + " " + c["what"].get<std::string>() + " @" +
                      c["path"].get<std::string>());
      }
    }
    return out;
  };
  const std::string enabled =
      "ok NRI is enabled in containerd, socket /var/run/nri/nri.sock @/etc/containerd/config.toml";
  const std::string unit =
      "ok oci-rlimit-nri.service is enabled (external plugin) "
      "@/etc/systemd/system/multi-user.target.wants/oci-rlimit-nri.service";
  EXPECT_EQ(nri_checks(),
            (std::vector<std::string>{enabled, unit,
                                      "warn oci-rlimit-nri is configured but not running: "
                                      "containers are created unadjusted while no plugin is "
                                      "connected @/var/run/nri/nri.sock"}));

  BackgroundProcess plugin;
  // Its status file in the temp dir, never the host's /run; no runtime
  // configures it here, so it writes none, and doctor says so.
  const std::string status_file = root_ / "plugin.status";
  auto err =
      plugin.Start({OurBinary("oci-rlimit-nri"), "--config", root_ / "etc/oci-rlimit/config.toml",
                    "--socket", sock, "--status-file", status_file},
                   {}, root_ / "plugin.log");
  ASSERT_FALSE(err) << *err;
  const std::string pid = std::to_string(plugin.pid());
  ASSERT_EQ(symlink(("/proc/" + pid).c_str(), (root_ / ("proc/" + pid)).c_str()), 0);
  const std::string running = "ok oci-rlimit-nri is running (pid " + pid +
                              ") and containerd's NRI socket exists @/var/run/nri/nri.sock";
  const std::string no_status =
      "info oci-rlimit-nri has written no status file: not connected since it started, or "
      "started with another --status-file @" +
      status_file;
  // Wait for the exec to finish. The kernel sets comm to the program's name
  // before the new image's arguments are in place, so for a moment
  // /proc/PID/cmdline is empty and doctor sees no --status-file: it names
  // the default file. (CI once caught exactly that moment.)
  const std::vector<std::string> want{enabled, unit, running, no_status};
  std::vector<std::string> got;
  for (int i = 0; i < 100; ++i) {
    got = nri_checks();
    if (got == want) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(got, want) << ReadFile(root_ / "plugin.log");

  // containerd gone, its socket with it: the plugin is not connected.
  close(listener);
  ASSERT_EQ(unlink(sock.c_str()), 0);
  EXPECT_EQ(nri_checks(),
            (std::vector<std::string>{
                enabled, unit,
                "warn oci-rlimit-nri is running (pid " + pid +
                    ") but containerd's NRI socket does not exist: it is not connected, and "
                    "containers are created unadjusted while no plugin is connected "
                    "@/var/run/nri/nri.sock",
                no_status}));
  plugin.Stop();
}

// This machine has runc, crun, dockerd, containerd and podman installed
// (none of the daemons needs to run for doctor).
TEST(DoctorOnThisMachine, NamesTheRealPrograms) {
  OCI_RLIMIT_REQUIRE("runc", "crun", "dockerd", "containerd", "podman");
  CmdResult r = RunCmd({Cli(), "doctor", "--json"});
  Json j = ParseJson(r);
  EXPECT_EQ(r.status, j["ok"] == true ? 0 : 1) << r.out;
  for (const auto& [area, program] :
       std::vector<std::pair<std::string, std::string>>{{"runc", "runc"},
                                                        {"crun", "crun"},
                                                        {"docker", "dockerd"},
                                                        {"containerd", "containerd"}}) {
    Json c = FindCheck(j, area, area == "docker" ? "dockerd " : program + " ");
    ASSERT_FALSE(c.is_null()) << program << "\n" << j.dump(2);
    EXPECT_EQ(c["path"], *Which(program)) << program;
    EXPECT_EQ(c["status"], "ok") << program;
  }
  CmdResult v = RunCmd({*Which("runc"), "--version"});
  std::string runc_version = v.out.substr(v.out.find("version ") + 8);
  runc_version = runc_version.substr(0, runc_version.find('\n'));
  EXPECT_FALSE(FindCheck(j, "runc", "runc " + runc_version + ": applies").is_null()) << j.dump(2);
  // Podman is installed, so the hooks dirs are looked at: either our file
  // is named, or the advice says where it goes.
  EXPECT_FALSE(FindCheck(j, "hooks.d", "oci-rlimit").is_null()) << j.dump(2);
  // The verdict on CAP_SYS_RESOURCE agrees with what this process holds.
  std::string status = ReadFile("/proc/self/status");
  uint64_t capeff = std::stoull(status.substr(status.find("CapEff:") + 7, 18), nullptr, 16);
  bool has = ((capeff >> 24) & 1) != 0;
  EXPECT_FALSE(
      FindCheck(j, "capabilities", has ? "CAP_SYS_RESOURCE is effective" : "no CAP_SYS_RESOURCE")
          .is_null())
      << j.dump(2);
}

// validate and explain read real files and exit 1 on what would fail a container.
TEST(CliOnFiles, ValidateAndExplain) {
  TempDir dir;
  const std::string config = dir / "config.toml";
  WriteFile(config,
            "[[rule]]\nname = \"gpu\"\nrlimits = [\"memlock=1G\", \"nofile=4096\"]\n"
            "match = { env = [\"NVIDIA_VISIBLE_DEVICES\"] }\n"
            "[requests]\nenabled = true\nceilings = [\"memlock=2G\"]\nover-ceiling = \"reject\"\n");
  CmdResult v = RunCmd({Cli(), "validate", "--config", config});
  EXPECT_EQ(v.status, 0) << v.err;
  EXPECT_NE(v.out.find("\"gpu\": memlock=1073741824:1073741824 nofile=4096:4096 when env "
                       "NVIDIA_VISIBLE_DEVICES set"),
            std::string::npos)
      << v.out;

  const std::string bundle = dir / "bundle";
  Json spec = MakeBundle(bundle, {"true"});  // runc spec: RLIMIT_NOFILE 1024:1024
  spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=all");
  WriteSpec(bundle, spec);
  CmdResult e = RunCmd({Cli(), "explain", "--bundle", bundle, "--config", config, "--json"});
  ASSERT_EQ(e.status, 0) << e.out << e.err;
  Json j = ParseJson(e);
  EXPECT_EQ(j["rules"][0]["matched"], true);
  ASSERT_EQ(j["limits"].size(), 2u) << j.dump(2);
  EXPECT_EQ(j["limits"][1]["limit"], "nofile=4096:4096");
  EXPECT_EQ(j["limits"][1]["spec"], "nofile=1024:1024");
  EXPECT_EQ(j["limits"][1]["hook_runc"], "nofile=1024:1024");
  EXPECT_EQ(j["limits"][1]["hook_crun"], "nofile=4096:4096");
  EXPECT_EQ(j["limits"][1]["conflict"], true);

  spec["annotations"]["oci-rlimit.io/rlimits"] = "memlock=unlimited";
  WriteSpec(bundle, spec);
  CmdResult rejected = RunCmd({Cli(), "explain", "--bundle", bundle, "--config", config});
  EXPECT_EQ(rejected.status, 1);
  EXPECT_NE(rejected.out.find("REFUSED: annotation \"oci-rlimit.io/rlimits\""), std::string::npos)
      << rejected.out;

  WriteFile(config, "rlimits = [\"memlock=1G\"]\n[[rule]]\nrlimits = [\"core=0\"]\n");
  CmdResult bad = RunCmd({Cli(), "validate", "--config", config, "--json"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(ParseJson(bad)["error"].get<std::string>().find("rule \"rule[0]\": match is missing"),
            std::string::npos)
      << bad.out;
  EXPECT_EQ(RunCmd({Cli(), "explain"}).status, 2);
}

// A copy of the plugin named oci-rlimit-nri, run as uid 65534 in its own PID
// namespace with `--status-file status`, linked into the fixture's proc.
struct Impostor {
  pid_t unshare = 0;
  pid_t plugin = 0;
  ~Impostor() {
    if (unshare > 0) kill(unshare, SIGKILL);
    if (plugin > 0) kill(plugin, SIGKILL);
  }
};

void StartImpostor(const std::string& root, const TempDir& imp, const std::string& status,
                   Impostor& out) {
  const std::string copy = imp / "oci-rlimit-nri";
  Sh("chmod 755 " + imp.path() + " && cp " + OurBinary("oci-rlimit-nri") + " " + copy +
     " && chown 65534 " + copy);
  WriteFile(imp / "c.toml", "");
  Sh("chmod 644 " + (imp / "c.toml"));
  CmdResult started =
      Sh("unshare -p -f --mount-proc setpriv --reuid=65534 --regid=65534 "
         "--clear-groups " +
         copy + " --config " + (imp / "c.toml") + " --socket /nonexistent/nri.sock --status-file " +
         status + " >/dev/null 2>&1 & echo $!");
  out.unshare = std::stoi(started.out);
  for (int i = 0; i < 200 && out.plugin == 0; ++i) {
    for (int p = out.unshare + 1; p < out.unshare + 50 && out.plugin == 0; ++p) {
      if (ReadFile("/proc/" + std::to_string(p) + "/comm") == "oci-rlimit-nri\n") out.plugin = p;
    }
    if (out.plugin == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_NE(out.plugin, 0) << "the impostor did not start";
  const std::string pid = std::to_string(out.plugin);
  ASSERT_EQ(symlink(("/proc/" + pid).c_str(), (root + "/proc/" + pid).c_str()), 0);
}

// HIGH: a process of another uid (65534) in its own PID namespace, a copy of
// the plugin named oci-rlimit-nri, whose --status-file names a root-only
// file: doctor says it is not the installed plugin and never reads the file.
TEST_F(DoctorFixture, AnImpostorNamedLikeThePluginIsNotBelieved) {
  OCI_RLIMIT_REQUIRE("unshare", "setpriv");
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  Script(root_ / "usr/bin/containerd", "containerd github.com/containerd/containerd/v2 v2.1.9 x");
  const std::string wants = root_ / "etc/systemd/system/multi-user.target.wants";
  Sh("mkdir -p " + wants);
  WriteFile(wants + "/oci-rlimit-nri.service", "[Service]\nExecStart=/usr/bin/oci-rlimit-nri\n");
  const std::string secret = root_ / "secret";
  WriteFile(secret, "root:ROOT-ONLY-SECRET:0:0\n");
  ASSERT_EQ(chmod(secret.c_str(), 0600), 0);
  TempDir imp;
  Impostor impostor;
  ASSERT_NO_FATAL_FAILURE(StartImpostor(root_.path(), imp, secret, impostor));
  const std::string pid = std::to_string(impostor.plugin);
  CmdResult r = Doctor(false);
  EXPECT_NE(
      r.out.find("a process named oci-rlimit-nri (pid " + pid + ") is not the installed plugin"),
      std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("ROOT-ONLY-SECRET"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("oci-rlimit-nri is running"), std::string::npos) << r.out;
}

// MEDIUM (issue 39 finding 2): the same impostor where no engine on PATH
// serves NRI (the fixture's containerd 1.6.20, no crio), with a status file
// it forged naming itself as the writer (its real pid and start time): doctor
// neither believes it nor quotes the file.
TEST_F(DoctorFixture, AnImpostorOnContainerd16IsNotBelieved) {
  OCI_RLIMIT_REQUIRE("unshare", "setpriv");
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  TempDir imp;
  const std::string forged = imp / "forged.status";
  Impostor impostor;
  ASSERT_NO_FATAL_FAILURE(StartImpostor(root_.path(), imp, forged, impostor));
  const std::string pid = std::to_string(impostor.plugin);
  const std::string stat = ReadFile("/proc/" + pid + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string start;
  for (int i = 3; i <= 22; ++i) fields >> start;
  WriteFile(forged,
            "connected=2026-12-01T22:00:00Z\nsynchronized=2026-12-01T22:00:01Z\ncontainers=42\n"
            "healed=42\nunhealed=0\nhealed-total=42\nreport-only=no\nwriter-pid=" +
                pid + "\nwriter-start=" + start + "\n");
  Sh("chown 65534 " + forged);
  CmdResult r = Doctor(false);
  EXPECT_NE(r.out.find("containerd 1.6.20 has no NRI"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("a process named oci-rlimit-nri (pid " + pid + ") is not the installed plugin"),
      std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("healed 42 of 42"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("oci-rlimit-nri is running"), std::string::npos) << r.out;
}

// MEDIUM: a status file whose writer no longer runs (a restarted plugin that
// never connected leaves it) is stale, and doctor does not report it.
TEST_F(DoctorFixture, AStaleStatusFileIsNotBelieved) {
  Script(root_ / "usr/bin/containerd", "containerd github.com/containerd/containerd/v2 v2.1.9 x");
  const std::string wants = root_ / "etc/systemd/system/multi-user.target.wants";
  Sh("mkdir -p " + wants + " " + (root_ / "run/oci-rlimit"));
  WriteFile(wants + "/oci-rlimit-nri.service", "[Service]\nExecStart=/usr/bin/oci-rlimit-nri\n");
  CmdResult gone = Sh("true & echo $!; wait");
  WriteFile(root_ / "run/oci-rlimit/nri.status",
            "connected=2026-12-01T22:00:00Z\nsynchronized=2026-12-01T22:00:01Z\ncontainers=7\n"
            "healed=6\nunhealed=0\nhealed-total=6\nreport-only=no\nwriter-pid=" +
                std::to_string(std::stoi(gone.out)) + "\nwriter-start=1\n");
  CmdResult r = Doctor(false);
  EXPECT_NE(r.out.find("which no longer runs: stale, not believed"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("healed 6 of 7"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ocirlimit::itest
