// The node installer beside NVIDIA's container toolkit v1.19/v1.20, whose
// installer writes containerd's settings as a drop-in, conf.d/99-nvidia.toml,
// holding a copy of the whole CRI table from `containerd config dump`, and
// adds `imports` to config.toml (../shared/notes/gpu-node-today.md). Played
// here with toml++ over the real containerd 1.7 and 2.x binaries' own dump.
// Each step asserts that the installer, doctor and containerd agree on
// whether containerd runs handler oci-rlimit: NVIDIA first, oci-rlimit
// first, NVIDIA's drop-in rebuilt between reruns (a SIGKILL and a restart),
// NVIDIA's graceful stop, and uninstall in the middle.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "harness.h"
#include "tests/testing/tree_snapshot.h"

namespace ocirlimit::itest {
namespace {
namespace fs = std::filesystem;

const std::string kInstaller =
    std::string(OCI_RLIMIT_SOURCE_DIR) + "/packaging/kubernetes/install.sh";
constexpr const char* kWrapper = "/usr/local/bin/oci-rlimit-runtime";
constexpr const char* kNvidiaDir = "/usr/local/nvidia/toolkit";
constexpr const char* kImports = "/etc/containerd/conf.d/*.toml";
constexpr const char* kNvidiaDropin = "/etc/containerd/conf.d/99-nvidia.toml";

struct Ctd {
  std::string name;
  std::string bin;
  const char* plugin;  // the CRI table of its dump
  int version;         // its dump's version
};
void PrintTo(const Ctd& c, std::ostream* os) { *os << c.name; }
std::string Cache() {
  const char* c = std::getenv("OCI_RLIMIT_CACHE");
  return c != nullptr && *c != '\0' ? c : "/var/cache/oci-rlimit";
}

toml::table Parse(const std::string& text) {
  try {
    return toml::parse(text);
  } catch (const toml::parse_error& e) {
    ADD_FAILURE() << e.description() << "\n" << text;
    return {};
  }
}
std::string Render(const toml::table& t) {
  std::ostringstream os;
  os << t << "\n";
  return os.str();
}

class GpuDropinTest : public ::testing::TestWithParam<Ctd> {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("bash", GetParam().bin);
    host_ = dir_ / "host";
    for (const char* d : {"/etc/containerd", "/usr/local/bin", "/usr/bin", "/usr/sbin", kNvidiaDir})
      fs::create_directories(host_ + d);
    // The node's containerd (doctor and the installer ask its version) and runc.
    WriteFile(host_ + "/usr/bin/containerd", "#!/bin/sh\nexec " + GetParam().bin + " \"$@\"\n",
              0755);
    WriteFile(host_ + "/usr/sbin/runc", "#!/bin/sh\necho runc version 1.1.5\n", 0755);
    for (const char* n : {"", ".cdi", ".legacy"}) {
      WriteFile(host_ + kNvidiaDir + "/nvidia-container-runtime" + n,
                "#!/bin/sh\nexec runc \"$@\"\n", 0755);
    }
    CmdResult def = RunCmd({GetParam().bin, "config", "default"});
    ASSERT_EQ(def.status, 0) << def.err;
    WriteFile(host_ + "/etc/containerd/config.toml", def.out);
    GiveHostTheLibrariesOf(OurBinary("oci-rlimit-hook"));
    GiveHostTheLibrariesOf(OurBinary("oci-prlimit-helper"));
    GiveHostTheLibrariesOf(OurBinary("oci-rlimit"));
  }

  void GiveHostTheLibrariesOf(const std::string& program) {
    CmdResult r = RunCmd({"sh", "-c",
                          "ldd \"$1\" | grep -o '/[^ ]*' | while read -r l; do "
                          "mkdir -p \"$0${l%/*}\" && cp -L \"$l\" \"$0$l\" || exit 1; done",
                          host_, program});
    ASSERT_EQ(r.status, 0) << r.err;
  }

  std::string HostFile(const std::string& rel) const { return ReadFile(host_ + rel); }
  bool HostHas(const std::string& rel) const { return fs::exists(host_ + rel); }

  // `containerd config dump` of the node's files: the imports point into the
  // host root (a copy of config.toml with its paths moved).
  toml::table Dump() {
    std::string text = HostFile("/etc/containerd/config.toml");
    for (size_t at = text.find(kImports); at != std::string::npos;
         at = text.find(kImports, at + host_.size() + 1)) {
      text.insert(at, host_);
    }
    const std::string config = dir_ / "dump.toml";
    WriteFile(config, text);
    CmdResult dump = RunCmd({GetParam().bin, "--config", config, "config", "dump"});
    EXPECT_EQ(dump.status, 0) << dump.err << text;
    return Parse(dump.out);
  }
  // The BinaryName of handler `name` containerd runs, or "" when it has none.
  std::string Runs(const std::string& name) {
    toml::table t = Dump();
    const toml::table* h =
        t["plugins"][GetParam().plugin]["containerd"]["runtimes"][name].as_table();
    if (h == nullptr) return "";
    return (*h)["options"]["BinaryName"].value_or(std::string("(runc)"));
  }

  // NVIDIA's installer starting: `imports` in config.toml (rewritten without
  // comments), and its drop-in: the dump's CRI table with its handlers.
  void NvidiaStarts() {
    toml::table main = Parse(HostFile("/etc/containerd/config.toml"));
    const toml::array* imports = main["imports"].as_array();
    if (imports == nullptr || imports->empty()) {
      main.insert_or_assign("imports", toml::array{kImports});
    }
    toml::table cri = *Dump()["plugins"][GetParam().plugin].as_table();
    cri.insert_or_assign("enable_cdi", true);
    toml::table* rt = cri["containerd"]["runtimes"].as_table();
    for (const std::string n : {"", ".cdi", ".legacy"}) {
      toml::table h{{"runtime_type", "io.containerd.runc.v2"},
                    {"options", toml::table{{"BinaryName", std::string(kNvidiaDir) +
                                                               "/nvidia-container-runtime" + n}}}};
      if (GetParam().version == 3) h.insert("sandboxer", "podsandbox");
      rt->insert_or_assign(n.empty() ? "nvidia" : "nvidia-" + n.substr(1), h);
    }
    toml::table dropin{{"version", GetParam().version},
                       {"plugins", toml::table{{GetParam().plugin, cri}}}};
    fs::create_directories(host_ + "/etc/containerd/conf.d");
    WriteFile(host_ + kNvidiaDropin, Render(dropin));
    WriteFile(host_ + "/etc/containerd/config.toml", Render(main));
  }
  // SIGTERM: the nvidia* handlers out of both files, the drop-in deleted.
  void NvidiaStops() {
    fs::remove(host_ + kNvidiaDropin);
    toml::table main = Parse(HostFile("/etc/containerd/config.toml"));
    for (const char* p : {"io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime"}) {
      if (toml::table* rt = main["plugins"][p]["containerd"]["runtimes"].as_table()) {
        for (const char* n : {"nvidia", "nvidia-cdi", "nvidia-legacy"}) rt->erase(n);
      }
    }
    WriteFile(host_ + "/etc/containerd/config.toml", Render(main));
  }

  CmdResult Install() {
    return RunCmd({"bash", kInstaller, "--host-root", host_, "--source",
                   fs::path(OurBinary("oci-rlimit-hook")).parent_path(), "--runtime",
                   "containerd"});
  }
  CmdResult Uninstall() {
    return RunCmd({"bash", kInstaller, "--uninstall", "--host-root", host_, "--source",
                   fs::path(OurBinary("oci-rlimit-hook")).parent_path()});
  }
  // doctor's lines about handler oci-rlimit ("ok ..." / "FAIL ...").
  std::vector<std::string> DoctorSays() {
    CmdResult r = RunCmd({OurBinary("oci-rlimit"), "doctor", "--root", host_});
    std::istringstream lines(r.out);
    std::string line;
    std::vector<std::string> out;
    while (std::getline(lines, line)) {
      if (line.find("handler \"oci-rlimit\"") != std::string::npos) out.push_back(line);
    }
    return out;
  }
  static bool Any(const std::vector<std::string>& lines, const char* status) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.starts_with(status); });
  }
  // containerd and doctor agree that handler oci-rlimit runs the wrapper
  // (doctor: ok, no FAIL), or that it does not (doctor: no ok).
  void ExpectAgree(bool runs, const std::string& step) {
    SCOPED_TRACE(step);
    EXPECT_EQ(Runs("oci-rlimit"), runs ? kWrapper : "") << HostFile("/etc/containerd/config.toml");
    const std::vector<std::string> doctor = DoctorSays();
    std::string all;
    for (const auto& l : doctor) all += l + "\n";
    EXPECT_EQ(Any(doctor, "ok "), runs) << all;
    if (runs) {
      EXPECT_FALSE(Any(doctor, "FAIL")) << all;
    }
  }
  bool V2() const { return GetParam().version == 3; }

  TempDir dir_;
  std::string host_;
};

// NVIDIA's drop-in first. containerd 1.7 would hide a handler in config.toml
// behind it: the installer refuses before writing, naming the drop-in, and
// the node stays byte for byte. 2.x: our own drop-in after NVIDIA's.
TEST_P(GpuDropinTest, NvidiaFirst) {
  NvidiaStarts();
  const testsupport::Tree before = testsupport::SnapshotTree(host_);
  CmdResult r = Install();
  if (!V2()) {
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("only from /etc/containerd/conf.d/99-nvidia.toml"), std::string::npos)
        << r.err;
    EXPECT_EQ(testsupport::TreeDifferences(before, testsupport::SnapshotTree(host_)),
              std::vector<std::string>{});
    ExpectAgree(false, "1.7 refused");
    return;
  }
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(HostHas("/etc/containerd/conf.d/99-oci-rlimit.toml"));
  ExpectAgree(true, "installed after NVIDIA");
  EXPECT_EQ(Runs("nvidia"), std::string(kNvidiaDir) + "/nvidia-container-runtime");

  // NVIDIA killed and started again: its new drop-in copies our handler.
  NvidiaStarts();
  ASSERT_EQ(Install().status, 0);
  ExpectAgree(true, "rerun after NVIDIA's restart");

  // Uninstall while NVIDIA's drop-in holds a copy: it fails naming the file,
  // and the wrapper the copy points at stays.
  CmdResult u = Uninstall();
  EXPECT_EQ(u.status, 1) << u.out << u.err;
  EXPECT_NE(u.err.find(kNvidiaDropin), std::string::npos) << u.err;
  EXPECT_NE(u.err.find("nvidia-ctk runtime configure --runtime=containerd"), std::string::npos)
      << "a way for nodes without the GPU Operator: " << u.err;
  EXPECT_EQ(u.out.find("uninstalled"), std::string::npos) << u.out;
  EXPECT_TRUE(HostHas(kWrapper));
  EXPECT_EQ(Runs("oci-rlimit"), kWrapper) << "the copy still runs an existing program";

  // NVIDIA stops gracefully (its drop-in goes); uninstall now completes.
  NvidiaStops();
  CmdResult done = Uninstall();
  EXPECT_EQ(done.status, 0) << done.err;
  EXPECT_FALSE(HostHas(kWrapper));
  ExpectAgree(false, "uninstalled");
}

// oci-rlimit first: the handler in config.toml, then NVIDIA's drop-in copies
// it (both versions), reruns converge, and uninstall names NVIDIA's copy.
TEST_P(GpuDropinTest, OciRlimitFirst) {
  ASSERT_EQ(Install().status, 0);
  ExpectAgree(true, "installed alone");
  NvidiaStarts();
  ExpectAgree(true, "NVIDIA copied the handler");
  CmdResult again = Install();
  ASSERT_EQ(again.status, 0) << again.err;
  ExpectAgree(true, "rerun beside NVIDIA");
  EXPECT_EQ(HostHas("/etc/containerd/conf.d/99-oci-rlimit.toml"), V2());
  NvidiaStarts();  // a SIGKILL and a restart: rebuilt from the dump
  ASSERT_EQ(Install().status, 0);
  ExpectAgree(true, "rerun after NVIDIA's restart");

  CmdResult u = Uninstall();
  EXPECT_EQ(u.status, 1) << u.out << u.err;
  EXPECT_NE(u.err.find(kNvidiaDropin), std::string::npos) << u.err;
  EXPECT_TRUE(HostHas(kWrapper));
  EXPECT_EQ(Runs("oci-rlimit"), kWrapper);
  // The admin takes the copy out of NVIDIA's drop-in; uninstall completes.
  toml::table nv = Parse(HostFile(kNvidiaDropin));
  nv["plugins"][GetParam().plugin]["containerd"]["runtimes"].as_table()->erase("oci-rlimit");
  WriteFile(host_ + kNvidiaDropin, Render(nv));
  ASSERT_EQ(Uninstall().status, 0);
  ExpectAgree(false, "uninstalled");
  EXPECT_EQ(Runs("nvidia"), std::string(kNvidiaDir) + "/nvidia-container-runtime");
}

// issue 38: an upgraded node on containerd 2.x: config.toml is still 1.7's
// version 2 default, oci-rlimit is installed, then NVIDIA's version 3 drop-in
// copies the whole CRI table. containerd serves oci-rlimit and runc from the
// copy; doctor agrees and FAILs neither.
TEST_P(GpuDropinTest, UpgradedNodeVersion2MainWithNvidiasVersion3Dropin) {
  if (!V2()) GTEST_SKIP() << "containerd 2.x only (1.7 is covered above)";
  CmdResult v2 = RunCmd({Cache() + "/containerd-1.7/usr/bin/containerd", "config", "default"});
  ASSERT_EQ(v2.status, 0) << v2.err;
  ASSERT_NE(v2.out.find("version = 2"), std::string::npos) << v2.out;
  WriteFile(host_ + "/etc/containerd/config.toml", v2.out);
  CmdResult r = Install();
  ASSERT_EQ(r.status, 0) << r.err;
  NvidiaStarts();
  ExpectAgree(true, "NVIDIA's version 3 copy beside a version 2 config.toml");
  toml::table dump = Dump();
  EXPECT_NE(dump["plugins"][GetParam().plugin]["containerd"]["runtimes"]["runc"].as_table(),
            nullptr)
      << "containerd serves runc";
  CmdResult doctor = RunCmd({OurBinary("oci-rlimit"), "doctor", "--root", host_});
  EXPECT_EQ(doctor.out.find("FAIL"), std::string::npos) << doctor.out;
}

INSTANTIATE_TEST_SUITE_P(Containerd, GpuDropinTest,
                         ::testing::Values(Ctd{"v1_7",
                                               Cache() + "/containerd-1.7/usr/bin/containerd",
                                               "io.containerd.grpc.v1.cri", 2},
                                           Ctd{"v2_x", Cache() + "/containerd-2/usr/bin/containerd",
                                               "io.containerd.cri.v1.runtime", 3}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ocirlimit::itest
