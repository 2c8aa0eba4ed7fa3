#include "crio_fixture.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "cri_containerd.h"
#include "pinned.h"

namespace ocirlimit::itest::crio {
namespace fs = std::filesystem;

namespace {

constexpr auto kPoll = std::chrono::milliseconds(50);
constexpr auto kReady = std::chrono::seconds(60);
constexpr const char* kCgroupRoot = "/sys/fs/cgroup";

// sha256 of the uncompressed binaries (../shared/cluster/README.md).
constexpr Pinned kPinned[] = {
    {"crio", "2adc10083d38004fadce46deb536420993b4636127c678a8149119b9de51d327"},
    {"pinns", "c3ccdb9152f62c3d7e8fa10dd8eab406e2952ef244f47e085db36e131b4b3def"},
};

// The directories crio and the installer must see as CRI-O's defaults, each
// overlaid in the namespace: {mount point, name of its upper dir in T/ovl}.
constexpr std::pair<const char*, const char*> kOverlays[] = {
    {"/etc", "etc"},
    {"/usr/local/bin", "usr-local-bin"},
    {"/usr/share/containers", "usr-share-containers"},
    {"/var/lib", "var-lib"},
};

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }  // TOML literal string

std::string ConfigText(const std::string& t, const std::string& pinns) {
  std::ostringstream c;
  c << "[crio]\nroot = " << Quote(t + "/storage/root")
    << "\nrunroot = " << Quote(t + "/storage/runroot")
    << "\nstorage_driver = 'vfs'\nlog_dir = " << Quote(t + "/logs")
    << "\nversion_file = " << Quote(t + "/version")
    << "\nversion_file_persist = " << Quote(t + "/version-persist")
    << "\nclean_shutdown_file = " << Quote(t + "/clean.shutdown") << "\n"
    << "[crio.api]\nlisten = " << Quote(t + "/crio.sock")
    << "\nstream_address = '127.0.0.1'\nstream_port = '0'\n"
    << "[crio.runtime]\ndefault_runtime = 'runc'\ncgroup_manager = 'cgroupfs'\n"
    << "conmon_cgroup = 'pod'\nnamespaces_dir = " << Quote(t + "/ns")
    << "\npinns_path = " << Quote(pinns) << "\ncontainer_exits_dir = " << Quote(t + "/exits")
    << "\ncontainer_attach_socket_dir = " << Quote(t + "/attach") << "\n"
    << "[crio.runtime.runtimes.runc]\nruntime_path = '/usr/sbin/runc'\nruntime_type = 'oci'\n"
    << "monitor_path = '/usr/bin/conmon'\n"
    << "[crio.image]\npause_image = " << Quote(kCrioImage)
    << "\npause_command = ''\nsignature_policy = " << Quote(t + "/policy.json") << "\n"
    << "[crio.network]\nnetwork_dir = " << Quote(t + "/cni") << "\nplugin_dirs = ["
    << Quote(t + "/cni") << "]\n"
    << "[crio.nri]\nenable_nri = true\nnri_listen = " << Quote(t + "/nri.sock")
    << "\nnri_plugin_dir = " << Quote(t + "/nri/plugins")
    << "\nnri_plugin_config_dir = " << Quote(t + "/nri/conf.d") << "\n";
  return c.str();
}

// The busybox image into crio's storage, with skopeo from an OCI layout.
std::optional<std::string> ImportImage(const std::string& t) {
  const std::string work = t + "/image";
  if (auto err = cri::MakeImageLayoutTar(work, t + "/image.tar")) return err;
  // The layout names both of the CRI suite's images "1": keep the first
  // (busybox, Cmd sh) under a name of its own.
  Json index = Json::parse(ReadFile(work + "/layout/index.json"));
  index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"] = "busybox";
  index["manifests"].erase(1);
  WriteFile(work + "/layout/index.json", index.dump());
  std::vector<std::string> argv = {
      "skopeo",
      "--policy",
      t + "/policy.json",
      "copy",
      "-q",
      "oci:" + work + "/layout:busybox",
      "containers-storage:[vfs@" + t + "/storage/root+" + t + "/storage/runroot]" + kCrioImage};
  if (CmdResult r = RunCmd(argv); r.status != 0) return DescribeExit(argv, r);
  return std::nullopt;
}

// The namespace holder: overlays and a tmpfs /run, then sleeps in its own
// session until Stop kills it.
std::optional<std::string> StartHolder(const std::string& t) {
  std::string script = "set -e\n";
  for (const auto& [at, name] : kOverlays) {
    const std::string o = t + "/ovl/" + name;
    fs::create_directories(o + "/upper");
    fs::create_directories(o + "/work");
    script += std::string("mount -t overlay oci-rlimit-crio -o lowerdir=") + at + ",upperdir=" + o +
              "/upper,workdir=" + o + "/work " + at + "\n";
  }
  script += "mount -t tmpfs oci-rlimit-crio /run\necho $$ > " + t + "/holder.pid.tmp\nmv " + t +
            "/holder.pid.tmp " + t + "/holder.pid\nexec sleep 2147483647\n";
  WriteFile(t + "/holder.sh", script, 0755);
  CmdResult r = RunCmd({"sh", "-c",
                        "setsid -f unshare -m --propagation private sh \"$0/holder.sh\" "
                        ">\"$0/holder.log\" 2>&1 </dev/null",
                        t});
  if (r.status != 0) return "starting the namespace holder: " + r.err;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!fs::exists(t + "/holder.pid")) {
    if (std::chrono::steady_clock::now() > deadline) {
      return "the namespace holder did not start: " + ReadFile(t + "/holder.log");
    }
    std::this_thread::sleep_for(kPoll);
  }
  const std::string holder = Trim(ReadFile(t + "/holder.pid"));
  std::error_code ec;
  WriteFile(t + "/mntns", fs::read_symlink("/proc/" + holder + "/ns/mnt", ec).string());
  if (ec) return "the namespace holder " + holder + ": " + ec.message();
  return std::nullopt;
}

// crio, in the namespace, in its own session, under prlimit; its pid in T/crio.pid.
std::optional<std::string> LaunchCrio(const std::string& t) {
  const std::string holder = Trim(ReadFile(t + "/holder.pid"));
  const std::string crio = "/usr/local/bin/crio";
  std::error_code ec;
  fs::remove(t + "/crio.pid", ec);
  CmdResult r =
      RunCmd({"sh", "-c",
              "setsid -f nsenter -t \"$1\" -m -- sh -c 'echo $$ > \"$0/crio.pid\"; exec prlimit "
              "--memlock=1048576:8388608 \"$1\"' \"$0\" \"$2\" >>\"$0/crio.log\" 2>&1 </dev/null",
              t, holder, crio});
  if (r.status != 0) return "starting crio: " + r.err;
  return std::nullopt;
}

std::optional<std::string> WaitCrioReady(const std::string& t, CriClient& client) {
  const auto deadline = std::chrono::steady_clock::now() + kReady;
  std::string why = "no answer";
  for (;;) {
    if (SocketListens(t + "/crio.sock").value_or(false)) {
      ocirlimit::Status ready = client.RuntimeReady();
      if (ready) {
        auto image = client.ImagePresent(kCrioImage);
        if (image && *image) return std::nullopt;
        why = image ? std::string("no image ") + kCrioImage : image.error().Text();
      } else {
        why = ready.error().Text();
      }
    }
    std::string pid = Trim(ReadFile(t + "/crio.pid"));
    if (!pid.empty() && !fs::exists("/proc/" + pid)) {
      return "crio exited: " + Tail(ReadFile(t + "/crio.log"));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return "crio not ready: " + why + "\n" + Tail(ReadFile(t + "/crio.log"));
    }
    std::this_thread::sleep_for(kPoll);
  }
}

// Processes whose mount namespace is `mntns` ("mnt:[N]").
std::vector<pid_t> InMountNamespace(const std::string& mntns) {
  std::vector<pid_t> out;
  for (const auto& entry : DirEntries("/proc")) {
    std::string name = fs::path(entry).filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec;
    if (fs::read_symlink(entry + "/ns/mnt", ec).string() == mntns) {
      out.push_back(std::atoi(name.c_str()));
    }
  }
  return out;
}

// Kills every task in the cgroup tree `dir`, then removes it bottom-up.
void KillCgroupTree(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory(ec)) KillCgroupTree(e.path().string());
  }
  for (int i = 0; i < 50; ++i) {
    std::istringstream procs(ReadFile(dir + "/cgroup.procs"));
    bool any = false;
    for (pid_t p; procs >> p;) {
      kill(p, SIGKILL);
      any = true;
    }
    if (!any || rmdir(dir.c_str()) == 0) break;
    std::this_thread::sleep_for(kPoll);
  }
  rmdir(dir.c_str());
}

std::string StripCriLogPrefixes(const std::string& text) {
  std::string out;
  std::istringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    size_t a = line.find(' ');
    size_t b = a == std::string::npos ? a : line.find(' ', a + 1);
    size_t c = b == std::string::npos ? b : line.find(' ', b + 1);
    if (c == std::string::npos) continue;
    out += line.substr(c + 1);
    if (line.substr(b + 1, c - b - 1) != "P") out += "\n";
  }
  return out;
}

}  // namespace

Binaries FindBinaries(const std::string& cache) {
  Binaries b;
  const char* dir = std::getenv(kClusterDirVar);
  if (dir == nullptr || *dir == '\0') {
    auto crio = Which("crio");
    auto pinns = Which("pinns");
    if (crio && pinns) {
      b.crio = *crio;
      b.pinns = *pinns;
    } else {
      b.skip = std::string("CRI-O tests skipped: set ") + kClusterDirVar +
               " to a directory holding crio.xz and pinns.xz (CRI-O 1.31.13, as "
               "../shared/cluster does), or put crio and pinns on PATH";
    }
    return b;
  }
  for (const auto& p : kPinned) {
    const std::string xz = std::string(dir) + "/" + p.name + ".xz";
    if (access(xz.c_str(), R_OK) != 0) {
      b.error = std::string(kClusterDirVar) + "=" + dir + ": no " + p.name +
                ".xz there (../shared/cluster/README.md says what it holds)";
      return b;
    }
    const std::string out = fs::absolute(cache).string() + "/" + p.name;  // linked to
    if (auto err = UnpackPinned(xz, out, p.sha256)) {
      b.error = *err;
      return b;
    }
    (std::string(p.name) == "crio" ? b.crio : b.pinns) = out;
  }
  return b;
}

std::optional<std::string> CriO::Start(const std::string& t, const std::string& cache) {
  Binaries b = FindBinaries(cache);
  if (!b.error.empty()) return b.error;
  const bool asked = std::getenv(kClusterDirVar) != nullptr;
  if (!b.skip.empty()) return RuntimesRequired() && asked ? b.skip : "skip: " + b.skip;
  if (auto why =
          MissingPrerequisite({"runc", "conmon", "skopeo", "nsenter", "unshare", "prlimit"})) {
    return asked || RuntimesRequired() ? *why : "skip: " + *why;
  }
  // CRI-O's stock hooks dir, there before crio starts watching it.
  for (const char* sub :
       {"logs", "ns", "exits", "attach", "cni", "nri/plugins", "nri/conf.d", "pods",
        "ovl/etc/upper/crio/crio.conf.d", "ovl/usr-share-containers/upper/oci/hooks.d"}) {
    fs::create_directories(t + "/" + sub);
  }
  WriteFile(t + "/crio.path", b.crio);
  WriteFile(t + "/policy.json", R"({"default":[{"type":"insecureAcceptAnything"}]})");
  WriteFile(t + "/cgroup", "/oci-rlimit-crio-" + fs::path(t).extension().string().substr(1));
  // crio and pinns where CRI-O's static bundle puts them, in the namespace's
  // /usr/local/bin (doctor finds crio on PATH there).
  const std::string bin = t + "/ovl/usr-local-bin/upper";
  fs::create_directories(bin);
  fs::create_symlink(b.crio, bin + "/crio");
  fs::create_symlink(b.pinns, bin + "/pinns");
  WriteFile(t + "/ovl/etc/upper/crio/crio.conf", ConfigText(t, "/usr/local/bin/pinns"));
  WriteFile(t + "/crio.conf.orig", ConfigText(t, "/usr/local/bin/pinns"));  // CrioNodeTest's reset
  if (auto err = ImportImage(t)) return "image: " + *err;
  if (auto err = StartHolder(t)) return err;
  if (auto err = LaunchCrio(t)) return err;
  CriClient client(t + "/crio.sock", std::chrono::seconds(10));
  if (auto err = WaitCrioReady(t, client)) return err;
  std::cerr << "[crio] " << Trim(RunCmd({b.crio, "--version"}).out.substr(0, 21)) << " (" << b.crio
            << ") in " << t << "\n";
  return std::nullopt;
}

void CriO::Stop(const std::string& t) {
  const std::string mntns = Trim(ReadFile(t + "/mntns"));
  if (!mntns.empty()) {
    // crio first, with SIGTERM, as systemd stops it; then all the rest.
    std::string pid = Trim(ReadFile(t + "/crio.pid"));
    if (!pid.empty()) kill(std::atoi(pid.c_str()), SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!pid.empty() && fs::exists("/proc/" + pid) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(kPoll);
    }
    for (int i = 0; i < 100; ++i) {
      auto left = InMountNamespace(mntns);
      if (left.empty()) break;
      for (pid_t p : left) kill(p, SIGKILL);
      std::this_thread::sleep_for(kPoll);
    }
  }
  const std::string cgroup = Trim(ReadFile(t + "/cgroup"));
  if (cgroup.starts_with("/oci-rlimit-crio-")) {
    for (const auto& hierarchy : DirEntries(kCgroupRoot)) KillCgroupTree(hierarchy + cgroup);
  }
  std::error_code ec;
  if (fs::exists(t + "/crio.path", ec)) fs::remove_all(t, ec);
}

CriO::CriO(std::string run_dir) : dir_(std::move(run_dir)) {
  holder_ = Trim(ReadFile(dir_ + "/holder.pid"));
  std::error_code ec;
  std::string ns = fs::read_symlink("/proc/" + holder_ + "/ns/mnt", ec).string();
  if (holder_.empty() || ns != Trim(ReadFile(dir_ + "/mntns"))) {
    error_ = "no crio namespace holder in " + dir_ + " (pid " + holder_ + ")";
    return;
  }
  client_ = std::make_unique<CriClient>(socket());
}

CriO::~CriO() = default;

std::string CriO::Log() const { return ReadFile(dir_ + "/crio.log"); }

std::string CriO::version() const {
  CmdResult r = RunCmd({Trim(ReadFile(dir_ + "/crio.path")), "--version"});
  std::istringstream ss(r.out);
  std::string crio, word, v;
  ss >> crio >> word >> v;
  return v;
}

std::string CriO::Host(const std::string& path) const {
  return "/proc/" + holder_ + "/root" + path;
}

std::vector<std::string> CriO::NsPrefix() const { return {"nsenter", "-t", holder_, "-m", "--"}; }

CmdResult CriO::InNs(const std::vector<std::string>& argv, const RunOptions& opts) const {
  std::vector<std::string> full = NsPrefix();
  full.insert(full.end(), argv.begin(), argv.end());
  return RunCmd(full, opts);
}

pid_t CriO::pid() const {
  std::string p = Trim(ReadFile(dir_ + "/crio.pid"));
  if (p.empty() || Trim(ReadFile("/proc/" + p + "/comm")) != "crio") return -1;
  return std::atoi(p.c_str());
}

void CriO::Sighup() const {
  if (pid_t p = pid(); p > 0) kill(p, SIGHUP);
}

std::optional<std::string> CriO::Restart() {
  client_ = std::make_unique<CriClient>(socket());  // no connection left open to wait for
  if (pid_t p = pid(); p > 0) {
    kill(p, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (fs::exists("/proc/" + std::to_string(p))) {
      if (std::chrono::steady_clock::now() > deadline) return "crio did not stop on SIGTERM";
      std::this_thread::sleep_for(kPoll);
    }
  }
  if (auto err = LaunchCrio(dir_)) return err;
  return WaitCrioReady(dir_, *client_);
}

PodSpec CriO::NewPod(const std::string& name, const std::string& handler) const {
  PodSpec p;
  p.name = name;
  p.uid = UniqueId(name);
  p.runtime_handler = handler;
  p.log_directory = dir_ + "/pods/" + p.uid;
  p.cgroup_parent = Trim(ReadFile(dir_ + "/cgroup")) + "/" + p.uid;
  std::error_code ec;
  fs::create_directories(p.log_directory, ec);
  return p;
}

ContainerSpec CriO::NewContainer(const std::string& name, const std::vector<std::string>& command) {
  ContainerSpec c;
  c.name = name;
  c.image = kCrioImage;
  c.command = command;
  return c;
}

Result<Pod> CriO::RunPod(const PodSpec& spec) { return client_->RunPodSandbox(spec); }

Result<std::string> CriO::RunContainer(const Pod& pod, const ContainerSpec& spec) {
  auto id = client_->CreateContainer(pod, spec);
  if (!id) return id.error();
  if (auto started = client_->StartContainer(*id); !started) return started.error();
  return id;
}

Result<std::string> CriO::WaitForLog(const Pod& pod, const ContainerSpec& spec,
                                     const std::string& needle,
                                     std::chrono::milliseconds timeout) const {
  const std::string file = pod.config.log_directory() + "/" +
                           (spec.log_path.empty() ? spec.name + ".log" : spec.log_path);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::string log = StripCriLogPrefixes(ReadFile(file));
    if (log.find(needle) != std::string::npos) return log;
    if (std::chrono::steady_clock::now() > deadline) {
      return MakeError("container " + spec.name + ": no \"" + needle +
                       "\" in its log: " + Tail(log, 1000));
    }
    std::this_thread::sleep_for(kPoll);
  }
}

void CriO::RemoveAll() {
  if (!client_) return;
  if (auto ids = client_->ListContainerIds()) {
    for (const auto& id : *ids) {
      (void)client_->StopContainer(id, 0);
      (void)client_->RemoveContainer(id);
    }
  }
  if (auto ids = client_->ListPodSandboxIds()) {
    for (const auto& id : *ids) {
      (void)client_->StopPodSandbox(id);
      (void)client_->RemovePodSandbox(id);
    }
  }
}

// ---------------------------------------------------------------------------

namespace {
std::string own_run_dir;    // CrioEnvironment's, when no ctest fixture gave one
std::string own_start_why;  // its Start's result
}  // namespace

CriO* SharedCrio(std::string* why) {
  static std::unique_ptr<CriO> shared;
  if (shared) return shared.get();
  std::string dir;
  if (const char* file = std::getenv("OCI_RLIMIT_CRIO_RUN")) {
    std::string content = Trim(ReadFile(file));
    if (content.empty()) {
      *why = std::string("OCI_RLIMIT_CRIO_RUN=") + file + " is empty: crio.setup did not run";
      return nullptr;
    }
    if (content.starts_with("skip: ") || content.starts_with("error: ")) {
      *why = content.starts_with("skip: ") ? content : content.substr(7);
      return nullptr;
    }
    dir = content;
  } else {
    if (!own_start_why.empty()) {
      *why = own_start_why;
      return nullptr;
    }
    dir = own_run_dir;
  }
  if (dir.empty()) {
    *why = "no crio: CrioEnvironment is not registered";
    return nullptr;
  }
  auto c = std::make_unique<CriO>(dir);
  if (!c->ok()) {
    *why = c->error();
    return nullptr;
  }
  shared = std::move(c);
  return shared.get();
}

void CrioEnvironment::SetUp() {
  if (std::getenv("OCI_RLIMIT_CRIO_RUN") != nullptr) return;
  char tmpl[] = "/tmp/oci-rlimit-crio.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    own_start_why = "mkdtemp failed";
    return;
  }
  own_run_dir = tmpl;
  const char* cache = std::getenv("OCI_RLIMIT_CRIO_CACHE");
  if (auto err = CriO::Start(own_run_dir, cache != nullptr ? cache : own_run_dir + "/bin")) {
    own_start_why = *err;
  }
}

void CrioEnvironment::TearDown() {
  if (!own_run_dir.empty()) CriO::Stop(own_run_dir);
  if (!own_run_dir.empty()) {
    std::error_code ec;
    fs::remove_all(own_run_dir, ec);
  }
}

void CrioTest::SetUp() {
  std::string why;
  crio_ = SharedCrio(&why);
  if (crio_ == nullptr && why.starts_with("skip: ")) GTEST_SKIP() << why.substr(6);
  ASSERT_NE(crio_, nullptr) << why;
}

void CrioTest::TearDown() {
  if (crio_ != nullptr) crio_->RemoveAll();
}

}  // namespace ocirlimit::itest::crio
