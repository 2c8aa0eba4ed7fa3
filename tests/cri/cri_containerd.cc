#include "cri_containerd.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

namespace ocirlimit::itest::cri {
namespace fs = std::filesystem;

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(50);
constexpr const char* kCgroupRoot = "/sys/fs/cgroup";
constexpr const char* kRunc = "runc";

// Removes a cgroup directory tree bottom-up (rmdir only: a cgroup with tasks stays).
void RemoveCgroupTree(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory(ec)) RemoveCgroupTree(e.path().string());
  }
  rmdir(dir.c_str());
}

std::string GoArch() {
  utsname u{};
  uname(&u);
  std::string m = u.machine;
  if (m == "x86_64") return "amd64";
  if (m == "aarch64") return "arm64";
  if (m.starts_with("arm")) return "arm";
  return m;
}

// Moves `file` into the layout's blob store under its sha256; returns
// {"sha256:HEX", size} or an error text in `error`.
std::pair<std::string, uint64_t> AddBlob(const std::string& layout, const std::string& file,
                                         std::string* error) {
  CmdResult r = RunCmd({"sha256sum", file});
  std::string hex = r.out.substr(0, r.out.find(' '));
  if (r.status != 0 || hex.size() != 64) {
    *error = DescribeExit({"sha256sum", file}, r);
    return {};
  }
  uint64_t size = fs::file_size(file);
  fs::create_directories(layout + "/blobs/sha256");
  fs::rename(file, layout + "/blobs/sha256/" + hex);
  return {"sha256:" + hex, size};
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }  // TOML literal string

std::string QuoteList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const auto& i : items) out += (out.size() > 1 ? ", " : "") + Quote(i);
  return out + "]";
}

std::string StripCriLogPrefixes(const std::string& text) {
  // Each line: TIMESTAMP STREAM TAG CONTENT, TAG "P" (partial) or "F" (full).
  std::string out;
  std::istringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    size_t a = line.find(' ');
    size_t b = a == std::string::npos ? a : line.find(' ', a + 1);
    size_t c = b == std::string::npos ? b : line.find(' ', b + 1);
    if (c == std::string::npos) continue;
    std::string tag = line.substr(b + 1, c - b - 1);
    out += line.substr(c + 1);
    if (tag != "P") out += "\n";
  }
  return out;
}

// One `key = value` to set in a TOML text, in the table whose path is
// `table` ({} for the top level).
struct TomlSetting {
  std::vector<std::string> table;
  std::string key;
  std::string value;  // TOML, e.g. "true" or "'/tmp/x'"
};

// A table path as its header writes it, dotted parts quoted: a.'b.c'.
std::string WrittenPath(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& p : path) {
    out += (out.empty() ? "" : ".") + (p.find('.') == std::string::npos ? p : Quote(p));
  }
  return out;
}

// The table path of a `[a."b.c".d]` header line as "a\x1fb.c\x1fd" (quotes
// and blanks dropped), "[[" for an array-of-tables header, nullopt otherwise.
std::optional<std::string> HeaderPath(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '[') return std::nullopt;
  if (line.compare(i, 2, "[[") == 0) return std::string("[[");
  std::string out;
  char quote = 0;
  for (size_t k = i + 1; k < line.size(); ++k) {
    char c = line[k];
    if (quote != 0) {
      if (c == quote)
        quote = 0;
      else
        out += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == ']') {
      return out;
    } else if (c == '.') {
      out += '\x1f';
    } else if (c != ' ' && c != '\t') {
      out += c;
    }
  }
  return std::nullopt;
}

std::string JoinPath(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& p : path) out += (out.empty() ? "" : "\x1f") + p;
  return out;
}

// Sets every setting in place, keeping the rest of `text` (its layout and
// comments) as it is: the key's line is rewritten, a key its table lacks goes
// right after the table's header, a table the text lacks is appended.
std::string SetInPlace(const std::string& text, const std::vector<TomlSetting>& settings) {
  std::vector<std::string> lines;
  std::istringstream ss(text);
  for (std::string line; std::getline(ss, line);) lines.push_back(line);
  for (const auto& s : settings) {
    const std::string want = JoinPath(s.table);
    // The table's lines: after its header (or from the top) to the next header.
    size_t begin = 0;
    bool found = s.table.empty();
    for (size_t i = 0; i < lines.size() && !found; ++i) {
      if (HeaderPath(lines[i]) == want) {
        begin = i + 1;
        found = true;
      }
    }
    if (!found) {
      lines.push_back("[" + WrittenPath(s.table) + "]");
      lines.push_back("  " + s.key + " = " + s.value);
      continue;
    }
    size_t end = begin;
    while (end < lines.size() && !HeaderPath(lines[end])) ++end;
    bool set = false;
    for (size_t i = begin; i < end && !set; ++i) {
      size_t k = lines[i].find_first_not_of(" \t");
      if (k == std::string::npos || lines[i].compare(k, s.key.size(), s.key) != 0) continue;
      size_t eq = lines[i].find_first_not_of(" \t", k + s.key.size());
      if (eq == std::string::npos || lines[i][eq] != '=') continue;
      lines[i] = lines[i].substr(0, k) + s.key + " = " + s.value;
      set = true;
    }
    if (!set) {
      std::string indent =
          begin > 0 ? lines[begin - 1].substr(0, lines[begin - 1].find_first_not_of(" \t")) + "  "
                    : "";
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(begin),
                   indent + s.key + " = " + s.value);
    }
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// Each setting, as toml++ reads `text` back: an error text, or nullopt.
std::optional<std::string> CheckSettings(const std::string& text,
                                         const std::vector<TomlSetting>& settings) {
  try {
    toml::table t = toml::parse(text);
    for (const auto& s : settings) {
      toml::node* at = &t;
      for (const auto& p : s.table) at = at->is_table() ? at->as_table()->get(p) : nullptr;
      toml::node* got = at != nullptr && at->is_table() ? at->as_table()->get(s.key) : nullptr;
      toml::table want = toml::parse("v = " + s.value);
      std::ostringstream got_text, want_text;
      if (got != nullptr) got_text << toml::node_view<toml::node>(got);
      want_text << want["v"];
      if (got == nullptr || got_text.str() != want_text.str()) {
        return WrittenPath(s.table) + "." + s.key + " reads " + got_text.str() + ", not " + s.value;
      }
    }
  } catch (const toml::parse_error& e) {
    return std::string(e.description());
  }
  return std::nullopt;
}
}  // namespace

// ---------------------------------------------------------------------------

ContainerdRelease Containerd16() { return {"1.6", "/usr/bin", 2}; }
ContainerdRelease Containerd17() {
  return {"1.7", std::string(OCI_RLIMIT_CONTAINERD_17_DIR) + "/usr/bin", 2};
}
ContainerdRelease Containerd2() {
  return {"2", std::string(OCI_RLIMIT_CONTAINERD_2_DIR) + "/usr/bin", 3};
}
std::vector<ContainerdRelease> AllContainerdReleases() {
  return {Containerd16(), Containerd17(), Containerd2()};
}

std::string TestName(const ContainerdRelease& release) {
  std::string name = "containerd_" + release.name;
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

std::optional<std::string> MissingRelease(const ContainerdRelease& release) {
  if (auto why = MissingPrerequisite({kRunc})) return why;
  for (const char* bin : {"containerd", "ctr", "containerd-shim-runc-v2"}) {
    std::string path = release.bin_dir + "/" + bin;
    if (access(path.c_str(), X_OK) != 0) {
      return "containerd " + release.name + ": " + path + " missing" +
             (release.name == "1.6" ? " (apt-get install containerd)"
                                    : " (run scripts/fetch-containerd.sh)");
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------

std::optional<std::string> MakeImageLayoutTar(const std::string& work, const std::string& tar) {
  std::string rootfs = MakeRootfs(work);
  std::string layout = work + "/layout";
  fs::create_directories(layout);
  std::string error;
  std::string layer_tar = work + "/layer.tar";
  std::vector<std::string> tar_layer = {"tar", "--numeric-owner", "-C", rootfs,
                                        "-cf", layer_tar,         "."};
  if (CmdResult r = RunCmd(tar_layer); r.status != 0) return DescribeExit(tar_layer, r);
  auto [layer_digest, layer_size] = AddBlob(layout, layer_tar, &error);
  if (!error.empty()) return error;

  const std::string arch = GoArch();
  Json index = {{"schemaVersion", 2}, {"manifests", Json::array()}};
  struct Image {
    const char* name;
    std::vector<std::string> cmd;
  };
  for (const Image& image : {Image{kCriBusyboxImage, {"/bin/sh"}},
                             Image{kCriPauseImage, {"/bin/sleep", "2147483647"}}}) {
    Json config = {
        {"architecture", arch},
        {"os", "linux"},
        {"config",
         {{"Env", {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}},
          {"Cmd", image.cmd},
          {"WorkingDir", "/"}}},
        {"rootfs", {{"type", "layers"}, {"diff_ids", {layer_digest}}}},
    };
    std::string config_file = work + "/config.json";
    WriteFile(config_file, config.dump());
    auto [config_digest, config_size] = AddBlob(layout, config_file, &error);
    if (!error.empty()) return error;
    Json manifest = {
        {"schemaVersion", 2},
        {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
        {"config",
         {{"mediaType", "application/vnd.oci.image.config.v1+json"},
          {"digest", config_digest},
          {"size", config_size}}},
        {"layers",
         {{{"mediaType", "application/vnd.oci.image.layer.v1.tar"},
           {"digest", layer_digest},
           {"size", layer_size}}}},
    };
    std::string manifest_file = work + "/manifest.json";
    WriteFile(manifest_file, manifest.dump());
    auto [manifest_digest, manifest_size] = AddBlob(layout, manifest_file, &error);
    if (!error.empty()) return error;
    std::string name = image.name;
    index["manifests"].push_back(
        {{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
         {"digest", manifest_digest},
         {"size", manifest_size},
         {"platform", {{"architecture", arch}, {"os", "linux"}}},
         {"annotations",
          {{"io.containerd.image.name", name},
           {"org.opencontainers.image.ref.name", name.substr(name.rfind(':') + 1)}}}});
  }
  WriteFile(layout + "/index.json", index.dump());
  WriteFile(layout + "/oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
  std::vector<std::string> tar_layout = {"tar", "-C",         layout,       "-cf",
                                         tar,   "oci-layout", "index.json", "blobs"};
  if (CmdResult r = RunCmd(tar_layout); r.status != 0) return DescribeExit(tar_layout, r);
  return std::nullopt;
}

// ---------------------------------------------------------------------------

std::string CriContainerd::ConfigText(const Options& opts) const {
  const std::string& d = dir_.path();
  const bool v3 = release_.config_version >= 3;
  std::ostringstream t;
  t << "version = " << release_.config_version << "\n"
    << "root = " << Quote(d + "/root") << "\n"
    << "state = " << Quote(d + "/state") << "\n"
    << "[grpc]\n  address = " << Quote(socket()) << "\n"
    << "[ttrpc]\n  address = " << Quote(d + "/containerd.sock.ttrpc") << "\n"
    << "[debug]\n  address = " << Quote(d + "/debug.sock") << "\n  level = 'info'\n"
    << "[plugins.'io.containerd.internal.v1.opt']\n  path = " << Quote(d + "/opt") << "\n";
  if (v3) {
    t << "[plugins.'io.containerd.image-verifier.v1.bindir']\n  bin_dir = "
      << Quote(d + "/image-verifier") << "\n";
  }
  if (release_.name != "1.6") {
    // NRI is on by default in 2.x, with its socket in /var/run/nri: always
    // point it here, and turn it on only when asked.
    t << "[plugins.'io.containerd.nri.v1.nri']\n"
      << "  disable = " << (opts.nri ? "false" : "true") << "\n"
      << "  socket_path = " << Quote(nri_socket()) << "\n"
      << "  plugin_path = " << Quote(nri_plugin_dir()) << "\n"
      << "  plugin_config_path = " << Quote(nri_config_dir()) << "\n";
    if (opts.nri) t << opts.nri->extra_toml << "\n";
  }

  // The CRI plugin. Version 2 keeps it all under io.containerd.grpc.v1.cri;
  // version 3 splits images and runtime.
  const std::string cri =
      v3 ? "plugins.'io.containerd.cri.v1.runtime'" : "plugins.'io.containerd.grpc.v1.cri'";
  if (v3) {
    t << "[plugins.'io.containerd.cri.v1.images']\n  snapshotter = 'overlayfs'\n"
      << "[plugins.'io.containerd.cri.v1.images'.pinned_images]\n  sandbox = "
      << Quote(kCriPauseImage) << "\n";
  }
  t << "[" << cri << "]\n";
  if (!v3) t << "  sandbox_image = " << Quote(kCriPauseImage) << "\n";
  // Without CAP_SYS_RESOURCE every pod fails to write oom_score_adj otherwise.
  t << "  restrict_oom_score_adj = true\n" << opts.cri_toml;
  t << "[" << cri << ".cni]\n"
    << (v3 ? "  bin_dirs = [" + Quote(d + "/cni/bin") + "]\n"
           : "  bin_dir = " + Quote(d + "/cni/bin") + "\n")
    << "  conf_dir = " << Quote(d + "/cni/net.d") << "\n";
  t << "[" << cri << ".containerd]\n  default_runtime_name = 'runc'\n";
  if (!v3) t << "  snapshotter = 'overlayfs'\n";

  std::vector<RuntimeHandler> handlers = {RuntimeHandler{"runc", "", {}, {}, {}}};
  handlers.insert(handlers.end(), opts.handlers.begin(), opts.handlers.end());
  t << HandlerTables(cri, handlers);
  t << opts.extra_toml << "\n";
  return t.str();
}

std::string CriContainerd::HandlerTables(const std::string& cri,
                                         const std::vector<RuntimeHandler>& handlers) const {
  std::ostringstream t;
  for (const auto& h : handlers) {
    const std::string table = cri + ".containerd.runtimes." + Quote(h.name);
    t << "[" << table << "]\n  runtime_type = 'io.containerd.runc.v2'\n";
    if (!h.pod_annotations.empty()) {
      t << "  pod_annotations = " << QuoteList(h.pod_annotations) << "\n";
    }
    if (!h.container_annotations.empty()) {
      t << "  container_annotations = " << QuoteList(h.container_annotations) << "\n";
    }
    t << "[" << table << ".options]\n"
      << "  BinaryName = " << Quote(h.binary_name) << "\n"
      << "  Root = " << Quote(runc_root()) << "\n"
      << "  SystemdCgroup = false\n";
    for (const auto& line : h.options) t << "  " << line << "\n";
  }
  return t.str();
}

std::string CriContainerd::StockConfigText(const Options& opts) {
  const std::vector<std::string> argv = {release_.bin_dir + "/containerd", "config", "default"};
  CmdResult def = RunCmd(argv);
  if (def.status != 0 || def.out.empty()) {
    error_ = DescribeExit(argv, def);
    return "";
  }
  const std::string& d = dir_.path();
  const bool v3 = release_.config_version >= 3;
  const std::string cri = v3 ? "io.containerd.cri.v1.runtime" : "io.containerd.grpc.v1.cri";
  // What this sandbox needs, and nothing else (docs/daemons-testing.md):
  // every path under the TempDir, and the settings the fixture's own config has.
  std::vector<TomlSetting> settings = {
      {{}, "root", Quote(d + "/root")},
      {{}, "state", Quote(d + "/state")},
      {{"grpc"}, "address", Quote(socket())},
      {{"ttrpc"}, "address", Quote(d + "/containerd.sock.ttrpc")},
      {{"plugins", "io.containerd.internal.v1.opt"}, "path", Quote(d + "/opt")},
      // Without CAP_SYS_RESOURCE every pod fails to write oom_score_adj otherwise.
      {{"plugins", cri}, "restrict_oom_score_adj", "true"},
      {{"plugins", cri, "cni"}, "conf_dir", Quote(d + "/cni/net.d")},
      {{"plugins", cri, "containerd", "runtimes", "runc", "options"}, "Root", Quote(runc_root())},
  };
  if (v3) {
    settings.push_back({{"plugins", cri, "cni"}, "bin_dirs", QuoteList({d + "/cni/bin"})});
    settings.push_back({{"plugins", "io.containerd.cri.v1.images", "pinned_images"},
                        "sandbox",
                        Quote(kCriPauseImage)});
    settings.push_back({{"plugins", "io.containerd.image-verifier.v1.bindir"},
                        "bin_dir",
                        Quote(d + "/image-verifier")});
  } else {
    settings.push_back({{"plugins", cri, "cni"}, "bin_dir", Quote(d + "/cni/bin")});
    settings.push_back({{"plugins", cri}, "sandbox_image", Quote(kCriPauseImage)});
  }
  if (release_.name != "1.6") {
    const std::vector<std::string> nri = {"plugins", "io.containerd.nri.v1.nri"};
    settings.push_back({nri, "disable", opts.nri ? "false" : "true"});
    settings.push_back({nri, "socket_path", Quote(nri_socket())});
    settings.push_back({nri, "plugin_path", Quote(nri_plugin_dir())});
    settings.push_back({nri, "plugin_config_path", Quote(nri_config_dir())});
  }
  std::string text = SetInPlace(def.out, settings);
  if (opts.nri && !opts.nri->extra_toml.empty()) {
    // More keys for the nri table: right after its header.
    const std::string want = JoinPath({"plugins", "io.containerd.nri.v1.nri"});
    size_t at = 0;
    for (size_t next; at < text.size(); at = next) {
      next = text.find('\n', at);
      next = next == std::string::npos ? text.size() : next + 1;
      if (HeaderPath(text.substr(at, next - at)) == want) {
        text.insert(next, opts.nri->extra_toml + "\n");
        break;
      }
    }
  }
  if (auto bad = CheckSettings(text, settings)) {
    error_ =
        "containerd " + release_.name + "'s config default with the sandbox's settings: " + *bad;
    return "";
  }
  return text + HandlerTables("plugins." + Quote(cri), opts.handlers) + opts.extra_toml + "\n";
}

CriContainerd::CriContainerd(const Options& opts) : release_(opts.release) {
  if (auto why = MissingRelease(release_)) {
    error_ = *why;
    return;
  }
  if (opts.nri && release_.name == "1.6") {
    error_ = "NRI needs containerd 1.7 or later";
    return;
  }
  const std::string& d = dir_.path();
  cgroup_parent_ = "/oci-rlimit-cri-" + fs::path(d).extension().string().substr(1);
  for (const char* sub : {"cni/bin", "cni/net.d", "pods", "runc", "nri/plugins", "nri/conf.d",
                          "image-verifier", "opt"}) {
    fs::create_directories(dir_ / sub);
  }
  if (opts.nri) {
    for (const auto& [name, program] : opts.nri->plugins) {
      std::error_code ec;
      fs::create_symlink(program, nri_plugin_dir() + "/" + name, ec);
      if (ec) {
        error_ = "NRI plugin " + name + ": " + ec.message();
        return;
      }
    }
  }

  const std::string containerd = release_.bin_dir + "/containerd";
  CmdResult v = RunCmd({containerd, "--version"});
  std::istringstream vs(v.out);
  std::string word;
  for (int i = 0; i < 3 && vs >> word; ++i) version_ = word;
  std::cerr << "[cri] containerd " << version_ << " (" << containerd << ", config version "
            << release_.config_version << ")\n";

  if (auto err = MakeImageLayoutTar(dir_ / "image", dir_ / "images.tar")) {
    error_ = "image: " + *err;
    return;
  }
  if (opts.stock_config) {
    std::string text = StockConfigText(opts);
    if (text.empty()) return;
    WriteFile(config_path(), text);
  } else {
    WriteFile(config_path(), ConfigText(opts));
  }
  if (opts.edit_config) {
    if (auto err = opts.edit_config(config_path())) {
      error_ = "edit_config: " + *err;
      return;
    }
  }

  daemon_ = opts;
  // The shim (containerd-shim-runc-v2) is looked up on PATH: this release's first.
  if (release_.bin_dir != "/usr/bin")
    daemon_.path_dirs.insert(daemon_.path_dirs.begin(), release_.bin_dir);
  if (auto err = Launch(true)) error_ = *err;
}

std::optional<std::string> CriContainerd::Launch(bool import) {
  const std::string containerd = release_.bin_dir + "/containerd";
  if (auto err =
          proc_.Start({containerd, "--config", config_path()}, daemon_, dir_ / "containerd.log")) {
    return err;
  }
  const auto deadline = BackgroundProcess::Clock::now() + kReadyTimeout;
  if (auto err = proc_.WaitListening("containerd", socket(), deadline)) return err;
  client_ = std::make_unique<CriClient>(socket());
  if (import) {
    std::vector<std::string> images = {"images", "import", dir_ / "images.tar"};
    if (CmdResult r = Ctr(images); r.status != 0) {
      return DescribeExit(images, r) + "\n" + Tail(Log());
    }
  }
  // Ready: RuntimeReady, and both images in CRI's own image store, which
  // learns of ctr's import from events, later (seen on 2.1: RunPodSandbox
  // right after the import tried to pull the pause image).
  auto cri_ready = [&]() -> std::optional<std::string> {
    if (Status ready = client_->RuntimeReady(); !ready) return ready.error().Text();
    for (const char* image : {kCriPauseImage, kCriBusyboxImage}) {
      auto present = client_->ImagePresent(image);
      if (!present) return present.error().Text();
      if (!*present) return std::string("CRI does not list image ") + image + " yet";
    }
    return std::nullopt;
  };
  return proc_.WaitReady("containerd's CRI", cri_ready, deadline);
}

std::optional<std::string> CriContainerd::Restart() {
  client_.reset();
  proc_.Stop();
  return Launch(false);
}

CriContainerd::~CriContainerd() {
  if (proc_.Running() && client_) RemoveAll();
  client_.reset();
  proc_.Stop();
  KillLeftovers();
}

void CriContainerd::KillLeftovers() {
  // Containers a failed test left: kill and delete them through runc itself
  // (the shims' runc root is runc_root()/NAMESPACE), then the shims.
  RunOptions bounded;
  bounded.timeout_s = 30;
  for (const auto& root : DirEntries(runc_root())) {
    CmdResult list = RunCmd({kRunc, "--root", root, "list", "-q"}, bounded);
    std::istringstream ss(list.out);
    for (std::string id; ss >> id;) {
      RunCmd({kRunc, "--root", root, "kill", "--all", id, "KILL"}, bounded);
      RunCmd({kRunc, "--root", root, "delete", "--force", id}, bounded);
    }
  }
  for (pid_t pid : ProcessesMentioning(socket())) kill(pid, SIGKILL);
  (void)WaitNoneMentions(socket(), std::chrono::seconds(10));
  if (!cgroup_parent_.empty()) {
    for (const auto& hierarchy : DirEntries(kCgroupRoot)) {
      RemoveCgroupTree(hierarchy + cgroup_parent_);
    }
  }
}

void CriContainerd::RemoveAll() {
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

std::string CriContainerd::Log() const { return proc_.Log(); }

CmdResult CriContainerd::Ctr(const std::vector<std::string>& args, const RunOptions& opts) {
  std::vector<std::string> argv = {release_.bin_dir + "/ctr", "-a", socket(), "-n", "k8s.io"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCmd(argv, opts);
}

PodSpec CriContainerd::NewPod(const std::string& name, const std::string& handler) const {
  PodSpec p;
  p.name = name;
  p.uid = UniqueId(name);
  p.runtime_handler = handler;
  p.log_directory = dir_ / ("pods/" + p.uid);
  p.cgroup_parent = cgroup_parent_ + "/" + p.uid;
  std::error_code ec;
  fs::create_directories(p.log_directory, ec);
  return p;
}

ContainerSpec CriContainerd::NewContainer(const std::string& name,
                                          const std::vector<std::string>& command) {
  ContainerSpec c;
  c.name = name;
  c.image = kCriBusyboxImage;
  c.command = command;
  return c;
}

Result<Pod> CriContainerd::RunPod(const PodSpec& spec) {
  if (!client_) return MakeError("no CRI client: " + error_);
  return client_->RunPodSandbox(spec);
}

Result<std::string> CriContainerd::RunContainer(const Pod& pod, const ContainerSpec& spec) {
  if (!client_) return MakeError("no CRI client: " + error_);
  auto id = client_->CreateContainer(pod, spec);
  if (!id) return id.error();
  if (auto started = client_->StartContainer(*id); !started) return started.error();
  return id;
}

std::string CriContainerd::ContainerLog(const Pod& pod, const ContainerSpec& spec) const {
  std::string rel = spec.log_path.empty() ? spec.name + ".log" : spec.log_path;
  return StripCriLogPrefixes(ReadFile(pod.config.log_directory() + "/" + rel));
}

Result<std::string> CriContainerd::WaitForLog(const Pod& pod, const ContainerSpec& spec,
                                              const std::string& needle,
                                              std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::string log = ContainerLog(pod, spec);
    if (log.find(needle) != std::string::npos) return log;
    if (std::chrono::steady_clock::now() > deadline) {
      return MakeError("container " + spec.name + ": no \"" + needle + "\" in its log after " +
                       std::to_string(timeout.count()) + " ms: " + Tail(log, 1000));
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

}  // namespace ocirlimit::itest::cri
