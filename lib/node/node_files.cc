#include "node/node_files.h"

#include <toml++/toml.h>

#include <sstream>

#include "adapters/oci/spec.h"
#include "core/config.h"
#include "formats/text.h"
#include "node/toml_write.h"

namespace ocirlimit::node {
namespace {

toml::array Strings(const std::vector<std::string>& v) {
  toml::array out;
  for (const auto& s : v) out.push_back(s);
  return out;
}

Result<std::vector<std::string>> StringList(const Json& j, const char* key,
                                            const std::string& where) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  if (!j[key].is_array()) return MakeError(where + ": " + key + ": not a list");
  for (const auto& e : j[key]) {
    if (!e.is_string()) return MakeError(where + ": " + key + ": not a list of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

}  // namespace

const std::vector<std::string>& NvidiaRuntimeCandidates() {
  const std::string name(engines::kNvidiaRuntimeName);
  static const std::vector<std::string> kCandidates = {
      std::string(engines::kOperatorToolkitDir) + "/" + name,
      "/usr/bin/" + name,
      "/usr/local/bin/" + name,
  };
  return kCandidates;
}

std::string RenderMode(const NodeMode& mode) {
  Json j = Json::object();
  j["prefix"] = mode.prefix;
  j["runtimes"] = mode.runtimes;
  j["nvidia"] = mode.nvidia;
  j["nvidia_runtime"] = mode.nvidia_runtime;
  j["containerd_added_default"] = mode.ctd_added_default;
  return j.dump(2) + "\n";
}

Result<NodeMode> ParseMode(std::string_view text, const std::string& source) {
  auto j = ParseJsonObject(text, source);
  if (!j) return j.error();
  NodeMode m;
  auto str = [&](const char* key, std::string* out) -> Status {
    if (!j->contains(key)) return Ok{};
    if (!(*j)[key].is_string()) return MakeError(source + ": " + key + ": not a string");
    *out = (*j)[key].get<std::string>();
    return Ok{};
  };
  if (auto st = str("prefix", &m.prefix); !st) return st.error();
  if (auto st = str("nvidia_runtime", &m.nvidia_runtime); !st) return st.error();
  if (auto st = str("containerd_added_default", &m.ctd_added_default); !st) return st.error();
  auto rt = StringList(*j, "runtimes", source);
  if (!rt) return rt.error();
  m.runtimes = std::move(*rt);
  if (j->contains("nvidia")) {
    if (!(*j)["nvidia"].is_boolean()) return MakeError(source + ": nvidia: not a boolean");
    m.nvidia = (*j)["nvidia"].get<bool>();
  }
  return m;
}

std::vector<ManifestEntry> ParseManifest(std::string_view text) {
  std::vector<ManifestEntry> out;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    size_t sp = line.find(' ');
    if (sp == std::string::npos || sp + 1 >= line.size()) continue;
    out.push_back({line.substr(0, sp), line.substr(sp + 1)});
  }
  return out;
}

std::string RenderManifest(const std::vector<ManifestEntry>& entries) {
  std::string out;
  for (const auto& e : entries) out += e.kind + " " + e.path + "\n";
  return out;
}

Result<std::vector<std::string>> CheckRlimits(std::string_view csv) {
  std::vector<std::string> entries;
  std::string item;
  std::istringstream parts{std::string(csv)};
  while (std::getline(parts, item, ',')) {
    std::string entry(Trim(item));
    if (entry.empty()) continue;
    if (auto r = ParseRlimit(entry); !r) {
      return MakeError("--rlimits: " + r.error().Text());
    }
    entries.push_back(entry);
  }
  if (auto all = ParseRlimitList(entries); !all) {
    return MakeError("--rlimits: " + Quote(std::string(csv)) + ": " + all.error().Text());
  }
  return entries;
}

Status CheckNodePath(std::string_view flag, std::string_view path) {
  const std::string what = std::string(flag) + ": " + Quote(path);
  if (!path.starts_with("/")) return MakeError(what + " must be absolute");
  for (char c : path) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return MakeError(what + " holds a control character");
    }
  }
  std::istringstream parts{std::string(path)};
  for (std::string part; std::getline(parts, part, '/');) {
    if (part == "." || part == "..") return MakeError(what + " holds a \".\" or \"..\" component");
  }
  return Ok{};
}

Result<std::string> RenderDropin(const std::vector<std::string>& rlimits,
                                 const std::vector<std::string>& nvidia_runtimes) {
  toml::table t;
  if (!rlimits.empty()) t.insert("rlimits", Strings(rlimits));
  if (!nvidia_runtimes.empty()) {
    t.insert("runtime", toml::table{{"runtimes", Strings(nvidia_runtimes)}});
  }
  std::string text =
      "# Written by oci-rlimit's node installer on every run: do not edit.\n"
      "# Put your settings in /etc/oci-rlimit/config.toml, which is read after this\n"
      "# file and wins key by key (docs/deployment.md).\n";
  if (!nvidia_runtimes.empty()) {
    text +=
        "# NVIDIA: oci-rlimit-runtime execs the first of these that exists, which\n"
        "# execs runc. There is no fallback: a node without any fails the pod\n"
        "# instead of running it without its GPUs.\n";
  }
  text += SerializeToml(t);
  // The text every program will read, read as they read it.
  if (auto c = ParseConfig(text, std::string(kDropin)); !c) {
    return c.error().Wrap("internal error: the drop-in does not read back");
  }
  return text;
}

std::string RenderCrioHook(const std::string& prefix) {
  Json j = Json::object();
  j["version"] = "1.0.0";
  j["hook"] = {{"path", prefix + "/bin/oci-rlimit-hook"},
               {"args", Json::array({"oci-rlimit-hook", "createRuntime"})}};
  j["when"] = {{"annotations", {{"^oci-rlimit\\.io/enable$", "^true$"}}}};
  j["stages"] = Json::array({"createRuntime"});
  return j.dump(2) + "\n";
}

std::string RenderCrioHandler(const std::string& prefix, const engines::CrioRuntime* base) {
  toml::table handler{{"runtime_path", prefix + "/bin/oci-rlimit-runtime"},
                      {"runtime_type", "oci"}};
  if (base != nullptr) {
    if (!base->monitor_path.empty()) handler.insert("monitor_path", base->monitor_path);
    if (!base->monitor_cgroup.empty()) handler.insert("monitor_cgroup", base->monitor_cgroup);
    if (!base->monitor_env.empty()) {
      toml::array env;
      for (const auto& e : base->monitor_env) env.push_back(e);
      handler.insert("monitor_env", env);
    }
  }
  toml::table t{
      {"crio",
       toml::table{{"runtime", toml::table{{"runtimes", toml::table{{"oci-rlimit", handler}}}}}}}};
  return "# Written by oci-rlimit's node installer; install.sh --uninstall removes it.\n"
         "# The handler for runtimeClassName: oci-rlimit. oci-rlimit-runtime reads\n"
         "# /etc/oci-rlimit/config.d/*.toml and /etc/oci-rlimit/config.toml.\n" +
         SerializeToml(t);
}

}  // namespace ocirlimit::node
