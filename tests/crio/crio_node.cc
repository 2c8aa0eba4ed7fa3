#include "crio_node.h"

#include <sys/stat.h>

#include <filesystem>
#include <sstream>

namespace ocirlimit::itest::crio {
namespace fs = std::filesystem;

namespace {

// Everything the installer, the hook tests and AddNvidiaDropIn may leave in
// the namespace; TearDown removes each.
const std::vector<std::string> kNodeFiles = {
    "/etc/crio/crio.conf.d",
    "/etc/oci-rlimit",
    "/var/lib/oci-rlimit",
    "/usr/local/bin/oci-rlimit",
    "/usr/local/bin/oci-rlimit-hook",
    "/usr/local/bin/oci-rlimit-runtime",
    "/usr/local/bin/oci-prlimit-helper",
    "/usr/local/bin/nvidia-container-runtime",
    "/run/oci-rlimit",
};

// Directories crio watches (a removed one is no longer watched): only what
// is in them goes.
const std::vector<std::string> kWatchedDirs = {
    "/usr/share/containers/oci/hooks.d",
    "/etc/containers/oci/hooks.d",
};

std::string SourceDir() { return fs::path(OurBinary("oci-rlimit")).parent_path().string(); }

}  // namespace

void CrioNodeTest::SetUp() {
  CrioTest::SetUp();
  if (crio_ == nullptr) return;
  crio_conf_ = ReadFile(crio_->dir() + "/crio.conf.orig");
  ASSERT_FALSE(crio_conf_.empty()) << "no crio.conf.orig in " << crio_->dir();
  // A test killed before its TearDown (a ctest timeout) may have left its files.
  ASSERT_NO_FATAL_FAILURE(ResetNode());
}

void CrioNodeTest::TearDown() {
  if (crio_ == nullptr) return;
  ResetNode();
  CrioTest::TearDown();
}

void CrioNodeTest::ResetNode() {
  crio_->RemoveAll();
  auto left = crio_->cri().ListPodSandboxIds();
  if (left && !left->empty()) {
    // A pod the handler's removal stranded (issue 37): the handler back, a
    // restart, and then it can go.
    (void)InstallSh({"--runtime", "crio", "--rlimits", "memlock=8M"});
    (void)crio_->Restart();
    crio_->RemoveAll();
  }
  std::error_code ec;
  // A drop-in crio may have read; the other files need no restart.
  if (!DirEntries(crio_->Host("/etc/crio/crio.conf.d")).empty()) config_changed_ = true;
  for (const auto& f : kNodeFiles) fs::remove_all(crio_->Host(f), ec);
  for (const auto& d : kWatchedDirs) {
    for (const auto& f : DirEntries(crio_->Host(d))) fs::remove_all(f, ec);
  }
  fs::create_directories(crio_->Host("/etc/crio/crio.conf.d"), ec);
  if (ReadFile(crio_->Host("/etc/crio/crio.conf")) != crio_conf_) {
    WriteFile(crio_->Host("/etc/crio/crio.conf"), crio_conf_);
    config_changed_ = true;
  }
  if (config_changed_ || crio_->pid() < 0) {
    auto err = crio_->Restart();
    EXPECT_FALSE(err) << "crio on the suite's own config again: " << *err;
  }
  config_changed_ = false;
}

CmdResult CrioNodeTest::InstallSh(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {
      "bash",        std::string(OCI_RLIMIT_SOURCE_DIR) + "/packaging/kubernetes/install.sh",
      "--host-root", "/",
      "--source",    SourceDir()};
  argv.insert(argv.end(), args.begin(), args.end());
  config_changed_ = true;
  return crio_->InNs(argv);
}

CmdResult CrioNodeTest::UninstallSh(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {
      "bash", std::string(OCI_RLIMIT_SOURCE_DIR) + "/packaging/kubernetes/install.sh",
      "--uninstall", "--host-root", "/"};
  argv.insert(argv.end(), args.begin(), args.end());
  config_changed_ = true;
  return crio_->InNs(argv);
}

CmdResult CrioNodeTest::Cli(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {OurBinary("oci-rlimit")};
  argv.insert(argv.end(), args.begin(), args.end());
  return crio_->InNs(argv);
}

std::vector<std::string> CrioNodeTest::DoctorLines() {
  CmdResult r = Cli({"doctor", "--json"});
  Json j = Json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  std::vector<std::string> lines;
  if (j.is_discarded()) return lines;
  for (const auto& c : j["checks"]) {
    lines.push_back(c["status"].get<std::string>() + " " + c["area"].get<std::string>() + ": " +
                    c["what"].get<std::string>());
  }
  return lines;
}

std::string CrioNodeTest::DoctorLine(const std::vector<std::string>& needles) {
  for (const auto& line : DoctorLines()) {
    bool all = true;
    for (const auto& n : needles) all = all && line.find(n) != std::string::npos;
    if (all) return line;
  }
  return "";
}

void CrioNodeTest::WriteInNs(const std::string& path, const std::string& text, mode_t mode) {
  std::error_code ec;
  fs::create_directories(fs::path(crio_->Host(path)).parent_path(), ec);
  WriteFile(crio_->Host(path), text, mode);
}

void CrioNodeTest::AddNvidiaDropIn() {
  WriteInNs("/usr/local/bin/nvidia-container-runtime", "#!/bin/sh\nexec /usr/sbin/runc \"$@\"\n",
            0755);
  // Byte for byte as NVIDIA's nvidia-ctk v1.20.0 `runtime configure --runtime=crio
  // --nvidia-runtime-path PATH` writes it (crio_nvidia_test.cc runs the real one).
  WriteInNs("/etc/crio/crio.conf.d/99-nvidia.toml",
            "\n[crio]\n\n  [crio.runtime]\n\n    [crio.runtime.runtimes]\n\n"
            "      [crio.runtime.runtimes.nvidia]\n"
            "        runtime_path = \"/usr/local/bin/nvidia-container-runtime\"\n"
            "        runtime_type = \"oci\"\n");
  config_changed_ = true;
}

void CrioNodeTest::RestartCrio() {
  auto err = crio_->Restart();
  ASSERT_FALSE(err) << *err;
}

pid_t CrioNodeTest::InitPid(const std::string& id) {
  Json state =
      Json::parse(ReadFile(crio_->Host("/run/crun/" + id + "/state.json")), nullptr, false);
  if (state.is_discarded() || !state.contains("init_process_pid")) return -1;
  return state["init_process_pid"].get<pid_t>();
}

}  // namespace ocirlimit::itest::crio
