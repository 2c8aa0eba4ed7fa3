// The hooks.d files podman and CRI-O run: each reads its own hooks_dir list
// (stock: /usr/share/containers/oci/hooks.d only), and with one file name in
// two of its dirs the later dir wins. A file with a `when` condition runs
// only for the containers it matches, and the line says which.
#include <algorithm>

#include "adapters/engines/constants.h"
#include "adapters/engines/crio.h"
#include "adapters/engines/hooks_dir.h"
#include "adapters/oci/spec.h"
#include "cli/doctor/doctor_context.h"
#include "formats/text.h"

namespace ocirlimit::doctor {
namespace {

// One engine that reads hooks.d files, and the dirs it reads.
struct HookEngine {
  std::string name;         // "podman", "CRI-O"
  std::string configs;      // its config files, for the text
  std::string config_hint;  // where an admin sets hooks_dir
  engines::HooksDirSetting setting;
  bool found = false;  // runs one of our hooks
};

HookEngine Engine(Context& c, HookEngine e, const std::vector<engines::ConfigText>& files,
                  const std::vector<std::string>& table) {
  auto setting = engines::HooksDirFromConfigs(files, table);
  if (setting) {
    e.setting = *setting;
  } else {
    c.Add("hooks.d", CheckStatus::kWarn, setting.error().Text(), "",
          e.name + " refuses to start with it; its default is assumed here");
  }
  std::string dirs;
  for (const auto& d : e.setting.dirs) dirs += (dirs.empty() ? "" : ", ") + d;
  if (e.setting.dirs.empty()) {
    c.Add("hooks.d", CheckStatus::kWarn, e.name + "'s hooks_dir is empty: it runs no hooks.d file",
          e.setting.source);
  } else {
    c.Add("hooks.d", CheckStatus::kInfo,
          e.name + " reads hooks from " + dirs +
              (e.setting.source.empty() ? " (its default: no hooks_dir in " + e.configs + ")"
                                        : " (hooks_dir)"),
          e.setting.source);
  }
  return e;
}

std::string Join(const std::vector<HookEngine*>& engines) {
  std::string out;
  for (size_t i = 0; i < engines.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == engines.size() ? " and " : ", ") + engines[i]->name;
  }
  return out;
}

// For which containers a hooks file runs: "" for every one (when.always),
// else the conditions in words.
std::string WhenText(const Json& file) {
  auto when = file.find("when");
  if (when == file.end() || !when->is_object()) return "no container (it has no when)";
  if (auto a = when->find("always"); a != when->end() && a->is_boolean() && a->get<bool>()) {
    return "";
  }
  std::vector<std::string> parts;
  if (auto an = when->find("annotations"); an != when->end() && an->is_object()) {
    for (const auto& [k, v] : an->items()) {
      const std::string value = v.is_string() ? v.get<std::string>() : v.dump();
      if (k == "^oci-rlimit\\.io/enable$" && value == "^true$") {
        parts.push_back(Cat("annotated ", engines::kEnableAnnotation, "=true"));
      } else {
        parts.push_back(Cat("with an annotation matching ", Quote(k), "=", Quote(value)));
      }
    }
  }
  if (auto cmds = when->find("commands"); cmds != when->end() && cmds->is_array()) {
    parts.push_back("whose command matches " + cmds->dump());
  }
  if (auto b = when->find("hasBindMounts"); b != when->end() && b->is_boolean() && b->get<bool>()) {
    parts.push_back("with bind mounts");
  }
  if (parts.empty()) return "no container (no when condition holds)";
  std::string out = "containers";
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? " " : " or ") + parts[i];
  return out;
}

std::string Stages(const Json& file) {
  std::string stages;
  if (auto st = file.find("stages"); st != file.end() && st->is_array()) {
    for (const auto& s : *st) {
      if (s.is_string()) stages += (stages.empty() ? "" : ",") + s.get<std::string>();
    }
  }
  return stages;
}

void Runs(Context& c, std::vector<HookEngine*>& readers, const std::string& file,
          const std::string& hpath, const Json& json) {
  for (auto* e : readers) e->found = true;
  const std::string when = WhenText(json);
  const std::string what =
      Cat(Join(readers), " runs ", Base(hpath), " (stages ", Stages(json), ")");
  if (when.empty()) {
    c.Add("hooks.d", CheckStatus::kOk, what, file);
  } else {
    c.Add("hooks.d", CheckStatus::kInfo,
          Cat(what, when.starts_with("no ") ? " for " : " only for ", when), file,
          "containers without it get nothing from this hook");
  }
}

// Which engines read `dir`/`name`, and the later file that masks it, if any.
std::vector<HookEngine*> Readers(Context& c, std::vector<HookEngine>& engines,
                                 const std::string& dir, const std::string& name,
                                 std::string& masked_by) {
  std::vector<HookEngine*> readers;
  for (auto& e : engines) {
    const auto& d = e.setting.dirs;
    auto at = std::find(d.begin(), d.end(), dir);
    if (at == d.end()) continue;
    std::string later;
    for (auto it = std::next(at); it != d.end(); ++it) {
      if (c.ops().ReadFile(Cat(*it, "/", name))) later = Cat(*it, "/", name);
    }
    if (later.empty()) {
      readers.push_back(&e);
    } else {
      masked_by = later;
    }
  }
  return readers;
}

void NotRead(Context& c, const std::vector<HookEngine>& engines, const std::string& dir,
             const std::string& file, const std::string& hpath, const std::string& masked_by) {
  if (!masked_by.empty()) {
    c.Add("hooks.d", CheckStatus::kInfo,
          Cat("this ", Base(hpath), " file does not run: ", masked_by,
              " has its name in a later hooks dir, and the later dir wins"),
          file);
    return;
  }
  std::string engines_text;
  for (size_t i = 0; i < engines.size(); ++i) {
    engines_text += (i == 0 ? "" : " or ") + engines[i].name;
  }
  const HookEngine& first = engines.front();
  c.Add("hooks.d", CheckStatus::kWarn,
        Cat(Base(hpath), " here never runs: ", dir, " is not a hooks dir ", engines_text, " reads"),
        file,
        first.setting.dirs.empty() ? "set " + first.config_hint
                                   : Cat("move it to ", first.setting.dirs.front(), "/, or add ",
                                         dir, " to ", first.config_hint));
}

// One hooks.d file `dir`/`name`: which engines run it, for which containers.
void HooksFile(Context& c, std::vector<HookEngine>& engines, const std::string& dir,
               const std::string& name) {
  const std::string file = Cat(dir, "/", name);
  std::string masked_by;
  std::vector<HookEngine*> readers = Readers(c, engines, dir, name, masked_by);
  auto text = c.ops().ReadFile(file);
  if (!text) return;
  auto json = ParseJsonObject(*text, file);
  if (!json) {
    if (!readers.empty()) {
      c.Add("hooks.d", CheckStatus::kWarn, json.error().Text(), file,
            Join(readers) + " refuses to start containers while a hooks file is invalid");
    }
    return;
  }
  auto hook = json->find("hook");
  if (hook == json->end() || !hook->is_object() || !hook->contains("path") ||
      !(*hook)["path"].is_string()) {
    return;
  }
  const std::string hpath = (*hook)["path"].get<std::string>();
  if (!c.IsOurs(hpath, engines::kHookName) && !c.IsOurs(hpath, engines::kHelperName)) return;
  if (!readers.empty()) {
    Runs(c, readers, file, hpath, *json);
  } else {
    NotRead(c, engines, dir, file, hpath, masked_by);
  }
}

std::vector<HookEngine> Engines(Context& c) {
  std::vector<HookEngine> engines;
  if (c.ops().Which("podman")) {
    engines.push_back(Engine(c,
                             {"podman",
                              "containers.conf",
                              "[engine] hooks_dir in /etc/containers/containers.conf",
                              {},
                              false},
                             engines::PodmanConfigFiles(c.ops()), {"engine"}));
  }
  if (c.ops().Which("crio")) {
    engines.push_back(Engine(c,
                             {"CRI-O",
                              "crio.conf or crio.conf.d",
                              "[crio.runtime] hooks_dir in /etc/crio/crio.conf.d/",
                              {},
                              false},
                             engines::CrioConfigFiles(c.ops()), {"crio", "runtime"}));
  }
  return engines;
}

}  // namespace

void CheckHooksDirs(Context& c) {
  std::vector<HookEngine> engines = Engines(c);
  if (engines.empty()) {
    c.Add("hooks.d", CheckStatus::kInfo, "neither podman nor crio is on PATH");
    return;
  }
  // Every dir an engine reads, and the usual admin dir, which stock
  // engines do not read.
  std::vector<std::string> dirs = {std::string(engines::kStockHooksDir),
                                   std::string(engines::kAdminHooksDir)};
  for (const auto& e : engines) {
    for (const auto& d : e.setting.dirs) {
      if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
    }
  }
  for (const auto& dir : dirs) {
    for (const auto& name : c.ops().ListDir(dir)) {
      if (name.ends_with(".json")) HooksFile(c, engines, dir, name);
    }
  }
  for (const auto& e : engines) {
    if (e.found || e.setting.dirs.empty()) continue;
    std::string dirs_text;
    for (const auto& d : e.setting.dirs) dirs_text += (dirs_text.empty() ? "" : ", ") + d;
    c.Add("hooks.d", CheckStatus::kInfo,
          "no oci-rlimit hook in the hooks dirs " + e.name + " reads (" + dirs_text + ")", "",
          "install -m 644 " + std::string(kPackagedHooksFile) + " " + e.setting.dirs.front() +
              "/ for " + e.name + " (the oci-rlimit package puts it in the stock dir)");
  }
}

}  // namespace ocirlimit::doctor
