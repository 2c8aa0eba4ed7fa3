#include "node/node_ctd_plan.h"

#include <algorithm>
#include <cerrno>
#include <map>

#include "adapters/engines/containerd.h"
#include "adapters/engines/crio.h"
#include "core/pattern.h"
#include "formats/text.h"
#include "node/node_files.h"
#include "node/node_ops.h"
#include "node/rooted_node_ops.h"

namespace ocirlimit::node {
namespace {

// The node's files with some replaced: what containerd would read after the
// planned write.
class Overlay : public NodeFiles {
 public:
  Overlay(NodeFiles& base, std::map<std::string, std::string> over)
      : base_(base), over_(std::move(over)) {}
  Result<std::string> ReadFile(const std::string& path) override {
    auto it = over_.find(path);
    return it != over_.end() ? Result<std::string>(it->second) : base_.ReadFile(path);
  }
  std::vector<std::string> ListDir(const std::string& path) override {
    std::vector<std::string> out = base_.ListDir(path);
    for (const auto& [p, text] : over_) {
      if (p.starts_with(path + "/") && p.find('/', path.size() + 1) == std::string::npos) {
        out.push_back(p.substr(path.size() + 1));
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  std::optional<std::string> Resolve(const std::string& path) override {
    return base_.Resolve(path);
  }
  std::optional<std::string> WhichIn(const std::string& name,
                                     const std::string& path_list) override {
    return base_.WhichIn(name, path_list);
  }

 private:
  NodeFiles& base_;
  std::map<std::string, std::string> over_;
};

// Our drop-in's path when config.toml imports a glob that matches its name.
std::optional<std::string> DropinPath(const engines::ContainerdConfig& main) {
  for (const auto& entry : main.imports) {
    const size_t slash = entry.rfind('/');
    if (slash == std::string::npos || slash == 0) continue;
    const std::string base = entry.substr(slash + 1);
    if (base.find_first_of("*?[") == std::string::npos) continue;
    if (GlobMatch(base, std::string(kContainerdDropinName))) {
      return entry.substr(0, slash + 1) + std::string(kContainerdDropinName);
    }
  }
  return std::nullopt;
}

Result<std::string> TextOr(NodeFiles& fs, const std::string& path, bool* missing) {
  auto text = fs.ReadFile(path);
  *missing = !text && text.error().err == ENOENT;
  if (*missing) return std::string();
  if (!text) return text.error().Wrap(path);
  return text;
}

// The planned file must make containerd read handler `name` running `binary`.
Status CheckVisible(NodeFiles& fs, const CtdPlan& plan, const HandlerRequest& req, int major) {
  Overlay after(fs, {{plan.path, plan.edit.text}});
  auto view = engines::ReadContainerdConfig(after, major);
  if (!view) return view.error();
  const engines::ContainerdHandler* h =
      view->has_value() ? engines::FindHandler((*view)->config, req.name) : nullptr;
  if (h != nullptr && h->binary_name == req.binary) return Ok{};
  const std::string who =
      "containerd" + (major > 0 ? " " + std::to_string(major) + ".x" : std::string());
  if (view->has_value() && (*view)->major < 2 && (*view)->cri_source != plan.path) {
    return MakeError(who + " reads its CRI table only from " + (*view)->cri_source +
                     " (an import's table replaces config.toml's whole before 2.0), so handler " +
                     Quote(req.name) + " in " + plan.path +
                     " would be hidden; move to containerd 2.x, or configure NVIDIA's toolkit "
                     "without its drop-in (docs/deployment.md)");
  }
  return MakeError(who + " would not run handler " + Quote(req.name) + " as " + req.binary +
                   " after writing " + plan.path + " (it is " +
                   (h == nullptr ? std::string("missing") : "from " + h->source) +
                   "); docs/deployment.md");
}

}  // namespace

int NodeContainerdMajor(const std::string& host) {
  auto ops = RootedNodeOps(host.empty() ? "/" : host);
  auto bin = ops->Which("containerd");
  if (!bin) return 0;
  auto out = ops->Version(*bin);
  return out ? engines::ContainerdMajor(VersionNumber(*out)) : 0;
}

Result<CtdPlan> PlanContainerdHandler(NodeFiles& fs, const CtdRequest& req) {
  CtdPlan plan;
  plan.major = req.major;
  auto view = engines::ReadContainerdConfig(fs, req.major);
  if (!view) return view.error();
  HandlerRequest h = req.handler;
  plan.path = std::string(engines::kContainerdConfig);
  std::string text;
  if (view->has_value() && (*view)->major >= 2) {
    if (auto dropin = DropinPath((*view)->config)) {
      plan.path = *dropin;
      plan.dropin = true;
      h.declare_default = false;
      bool missing = false;
      auto old = TextOr(fs, plan.path, &missing);
      if (!old) return old.error();
      text = "version = " + std::to_string((*view)->config.version) + "\n";
      plan.missing = missing;
    }
  }
  if (!plan.dropin) {
    auto old = TextOr(fs, plan.path, &plan.missing);
    if (!old) return old.error();
    text = std::move(*old);
  }
  // The base (runc, or NVIDIA's with --nvidia) as containerd reads it: from
  // the file that wins it, NVIDIA's drop-in included.
  const auto* base = view->has_value() ? engines::FindHandler((*view)->config, h.base) : nullptr;
  if (base != nullptr && base->source != plan.path) {
    if (auto base_text = fs.ReadFile(base->source)) h.base_text = *base_text;
  }
  auto edit = InstallHandler(text, plan.path, h);
  if (!edit) return edit.error();
  plan.edit = std::move(*edit);
  if (plan.dropin) plan.edit.changed = true;  // rendered whole; Place compares the bytes
  if (auto st = CheckVisible(fs, plan, h, req.major); !st) return st.error();
  return plan;
}

Status CheckCrioVisible(NodeFiles& fs, const std::string& path, const std::string& text,
                        const std::string& wrapper) {
  Overlay after(fs, {{path, text}});
  auto cfg = engines::ParseCrioConfigs(engines::CrioConfigFiles(after));
  if (!cfg) return cfg.error();
  const engines::CrioRuntime* r = engines::FindCrioRuntime(*cfg, "oci-rlimit");
  if (r != nullptr && r->runtime_path == wrapper) {
    if (auto st = engines::CheckCrioMonitors(*cfg); !st) {
      return MakeError(st.error().Text() + ", after writing " + path);
    }
    return Ok{};
  }
  return MakeError(
      "CRI-O would not run handler \"oci-rlimit\" as " + wrapper + " after writing " + path + ": " +
      (r == nullptr ? std::string("it reads none")
                    : "it runs " + Quote(r->runtime_path) + ", set last by " + r->source) +
      " (crio.conf.d is read in name order, a later file winning per key)");
}

Result<std::string> PlanCrioHandler(NodeFiles& fs, const std::string& path,
                                    const std::string& prefix, const std::string& wrapper) {
  // The base handler as the node reads it without ours (a rerun's old file aside).
  Overlay before(fs, {{path, ""}});
  auto cfg = engines::ParseCrioConfigs(engines::CrioConfigFiles(before));
  if (!cfg) return cfg.error();
  std::string text =
      RenderCrioHandler(prefix, engines::FindCrioRuntime(*cfg, cfg->default_runtime));
  if (auto st = CheckCrioVisible(fs, path, text, wrapper); !st) return st.error();
  return text;
}

Result<std::string> WrapperHandlerSource(NodeFiles& fs, int major, const std::string& name) {
  auto view = engines::ReadContainerdConfig(fs, major);
  if (!view) return view.error();
  if (!view->has_value()) return std::string();
  const engines::ContainerdHandler* h = engines::FindHandler((*view)->config, name);
  if (h == nullptr) return std::string();
  const size_t slash = h->binary_name.rfind('/');
  const std::string base =
      slash == std::string::npos ? h->binary_name : h->binary_name.substr(slash + 1);
  return base == kRuntimeBinaryName ? h->source : std::string();
}

}  // namespace ocirlimit::node
