#include "lifecycle_installer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>
#include <thread>

#include "lifecycle_driver.h"

namespace ocirlimit::itest::lifecycle {
namespace {
namespace fs = std::filesystem;

constexpr const char* kRecord = "/var/lib/oci-rlimit/node-install";

bool Has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

bool IsOurTemp(const std::string& name) {
  return (name.starts_with(".oci-rlimit.") && name.size() == 18) ||
         name.starts_with(".oci-rlimit-probe.");
}

std::string Lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "  " + l + "\n";
  return out;
}

std::string Said(const CmdResult& r) {
  return "exit " + std::to_string(r.status) + "\n" + r.out + r.err;
}

}  // namespace

NodeInstaller::~NodeInstaller() = default;

std::optional<std::string> FreshInstall::Read(const NodeInstaller& node) {
  files_.clear();
  const std::string manifest = std::string(kRecord) + "/manifest";
  manifest_ = ReadFile(node.Host(manifest));
  std::istringstream in(manifest_);
  for (std::string kind, path; in >> kind >> path;) {
    if (kind == "created") files_[path] = std::hash<std::string>{}(ReadFile(node.Host(path)));
  }
  if (files_.empty()) return "no file in the fresh install's manifest " + manifest;
  for (const char* f : {"/manifest", "/mode.json"}) {
    files_[kRecord + std::string(f)] =
        std::hash<std::string>{}(ReadFile(node.Host(kRecord + std::string(f))));
  }
  return std::nullopt;
}

std::optional<std::string> FreshInstall::Check(const NodeInstaller& node, Expect expect) const {
  // Not /tmp: install.sh's probes go there, where the machine's other tests write too.
  std::vector<std::string> dirs;
  for (const auto& [path, bytes] : files_) {
    const std::string host = node.Host(path);
    std::error_code ec;
    const bool here = fs::symlink_status(host, ec).type() != fs::file_type::not_found;
    const bool partial = expect == Expect::kAny && path.ends_with("/manifest") &&
                         manifest_.starts_with(ReadFile(host)) && ReadFile(host).ends_with("\n");
    if (here && !partial && !Whole(path, host)) {
      return path + ": not the bytes a fresh install writes:\n" + ReadFile(host);
    }
    if (here && expect == Expect::kUninstalled) return path + ": still there after an uninstall";
    if (!here && expect == Expect::kInstalled) return path + ": missing while installed";
    const fs::path parent = fs::path(path).parent_path();
    dirs.push_back(parent.string());
    dirs.push_back(parent.parent_path().string());
  }
  for (const auto& dir : dirs) {
    for (const auto& entry : DirEntries(node.Host(dir))) {
      if (!IsOurTemp(fs::path(entry).filename().string())) continue;
      // A killed run's temp file outside a watched directory is the next run's to remove.
      if (expect == Expect::kAny && !dir.ends_with(".d")) continue;
      return "a temp file of ours is left in " + dir + ": " + entry;
    }
  }
  return std::nullopt;
}

bool FreshInstall::Whole(const std::string& path, const std::string& host) const {
  struct stat st {};
  if (lstat(host.c_str(), &st) != 0) return false;
  const std::string id = std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
                         std::to_string(st.st_mtim.tv_sec) + "." +
                         std::to_string(st.st_mtim.tv_nsec);
  if (verified_[path] == id) return true;
  if (std::hash<std::string>{}(ReadFile(host)) != files_.at(path)) return false;
  verified_[path] = id;
  return true;
}

std::optional<std::string> RunInstallerOp(NodeInstaller& node, const FreshInstall& fresh,
                                          const Model& model, const Op& op) {
  const std::string restart = node.Engine() + " must";
  if (op.kind == OpKind::kInstallKilled) {
    const bool killed = node.InstallKilledAfter(std::chrono::milliseconds(op.index));
    std::cout << "lifecycle: install.sh " << (killed ? "killed" : "ended before the kill") << " at "
              << op.index << " ms" << std::endl;
    if (auto err = fresh.Check(node, FreshInstall::Expect::kAny)) return "after the kill: " + *err;
  }
  if (op.kind == OpKind::kInstall || op.kind == OpKind::kInstallKilled) {
    CmdResult r = node.Install();
    if (r.status != 0) return "install.sh: " + Said(r);
    // Until the engine restarts, the installer says it must.
    if (!model.served() && !Has(r.out + r.err, restart)) {
      return "install.sh does not say \"" + restart + "\" restart: " + Said(r);
    }
    return std::nullopt;
  }
  CmdResult r = node.Uninstall();
  if (model.UninstallRefused()) {
    if (r.status != 3) return "uninstall with handler pods running: " + Said(r);
    return std::nullopt;
  }
  if (r.status != 0) return "uninstall: " + Said(r);
  if (model.installed() && !Has(r.out + r.err, restart)) {
    return "uninstall does not say \"" + restart + "\" restart: " + Said(r);
  }
  return std::nullopt;
}

std::optional<std::string> CheckInstaller(NodeInstaller& node, const FreshInstall& fresh,
                                          const Model& model) {
  if (auto err = fresh.Check(node, model.installed() ? FreshInstall::Expect::kInstalled
                                                     : FreshInstall::Expect::kUninstalled)) {
    return "the node's files: " + *err;
  }
  const std::vector<std::string> doctor = node.Doctor();
  std::string fail;
  std::string handler;  // doctor's line on the engine's handler oci-rlimit
  for (const auto& line : doctor) {
    if (fail.empty() && line.starts_with("FAIL")) fail = line;
    if (handler.empty() && Has(line, "runtime handler \"oci-rlimit\"")) handler = line;
  }
  std::optional<std::string> wrong;
  if (!model.installed() && model.served() && !Has(fail, "oci-rlimit")) {
    wrong = node.Engine() + " still serves the removed handler, and no FAIL names it";
  } else if (model.installed() && !model.served() &&
             (handler.empty() || handler.starts_with("ok"))) {
    wrong = node.Engine() + " does not serve the installed handler yet, and doctor says it does";
  } else if (model.installed() == model.served() && !model.changed_since_start() && !fail.empty()) {
    // Not checked while the installer changed the config since the engine
    // started: doctor cannot tell which handlers the engine read then.
    wrong = node.Engine() + " serves what is installed, and doctor fails";
  } else if (handler.starts_with("ok") && !model.HandlerStarts()) {
    wrong = "doctor says ok, and " + node.Engine() + "'s pods of the handler fail";
  } else if (model.HandlerStarts() && !model.changed_since_start() && !handler.starts_with("ok")) {
    wrong = node.Engine() + " serves the installed handler, and doctor does not say ok";
  }
  if (wrong) return "doctor: " + *wrong + ":\n" + Lines(doctor);
  return std::nullopt;
}

std::optional<std::string> ExpectHandlerRefused(LifecycleNode& node, const cri::PodSpec& spec) {
  auto pod = node.RunPod(spec);
  if (!pod) return std::nullopt;
  cri::ContainerSpec c;
  c.name = "app";
  c.command = {"/bin/sh", "-c", "exec sleep 3600"};
  auto id = node.RunContainer(*pod, c);
  std::optional<std::string> err;
  if (id) err = "a handler pod started while the engine does not serve the installed handler";
  if (auto s = node.cri().StopPodSandbox(pod->id); !s) {
    return "StopPodSandbox of the refused pod: " + s.error().Text();
  }
  if (auto s = node.cri().RemovePodSandbox(pod->id); !s) {
    return "RemovePodSandbox of the refused pod: " + s.error().Text();
  }
  return err;
}

bool RunKilledAfter(const std::vector<std::string>& argv, std::chrono::milliseconds delay) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    setpgid(0, 0);
    const int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    execvp(args[0], args.data());
    _exit(127);
  }
  setpgid(pid, pid);
  std::this_thread::sleep_for(delay);
  int status = 0;
  const bool running = waitpid(pid, &status, WNOHANG) == 0;
  kill(-pid, SIGKILL);
  if (running) waitpid(pid, &status, 0);
  return running;
}

std::vector<std::string> DoctorChecks(const CmdResult& r) {
  Json j = Json::parse(r.out, nullptr, false);
  if (j.is_discarded() || !j.contains("checks")) {
    return {"FAIL doctor: no JSON (" + Said(r) + ")"};
  }
  std::vector<std::string> lines;
  for (const auto& c : j["checks"]) {
    lines.push_back(c.value("status", "") + " " + c.value("area", "") + ": " + c.value("what", ""));
  }
  return lines;
}

std::vector<Fixed> InstallerSequences() {
  return {
      // Issue 44's break 3: a refused uninstall keeps everything, and the
      // same command finishes it once the handler's pods are gone; once more
      // it has nothing to do (a random sequence found it failing: no CLI left).
      {"RefusedUninstallFinishedLater", "create:handler uninstall delete:0 uninstall uninstall"},
      // Break 4: after an uninstall, until the engine restarts, doctor is not
      // clean and the engine serves the removed handler, whose pods fail;
      // after an install, until the restart, the engine does not serve it.
      // An install and an uninstall with no restart between (a random sequence).
      {"DoctorWaitsForTheRestart",
       "uninstall create:handler engine-restart install uninstall install engine-restart "
       "create:handler"},
      // install.sh SIGKILLed mid-run, the rerun finishes it; after an uninstall
      // the engine still serves the handler, so the reinstalled one starts pods.
      {"KilledInstallIsRerun", "install-killed:300 uninstall install-killed:900 create:handler"},
  };
}

}  // namespace ocirlimit::itest::lifecycle
