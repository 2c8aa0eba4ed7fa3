#include "node/node_config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <optional>

#include "adapters/engines/containerd.h"
#include "adapters/engines/toml_read.h"
#include "formats/text.h"
#include "node/toml_write.h"

namespace ocirlimit::node {
namespace {

// The runtime_type of every handler install writes (runc's v2 shim).
std::string RuncShim() { return std::string(engines::kRuncShimV2); }

constexpr std::string_view kMarker =
    "# oci-rlimit: this handler is written by oci-rlimit's node installer (install.sh); "
    "--uninstall removes it";

// Every TOML file goes through the node model's one guarded parse.
Result<toml::table> Parse(std::string_view text, const std::string& where) {
  return engines::ParseToml(text, where);
}

// A copy with every empty table dropped, for comparing meanings: an empty
// [x.runtimes] header and no header mean the same to containerd.
toml::table Pruned(const toml::table& t) {
  toml::table out;
  for (const auto& [k, v] : t) {
    if (const toml::table* sub = v.as_table()) {
      toml::table p = Pruned(*sub);
      if (!p.empty()) out.insert(k, std::move(p));
    } else {
      out.insert(k, v);
    }
  }
  return out;
}

toml::table* Runtimes(toml::table& root, std::string_view plugin) {
  toml::node* n = root["plugins"][plugin]["containerd"]["runtimes"].node();
  return n == nullptr ? nullptr : n->as_table();
}

std::string BinaryOf(const toml::table& handler) {
  const toml::table* opts = handler["options"].as_table();
  if (opts == nullptr) return "";
  return (*opts)["BinaryName"].value_or(std::string());
}

bool IsOurs(const toml::table& handler) {
  std::string bin = BinaryOf(handler);
  size_t slash = bin.rfind('/');
  return (slash == std::string::npos ? bin : bin.substr(slash + 1)) == kRuntimeBinaryName;
}

const toml::table* Handler(toml::table& root, std::string_view plugin, const std::string& name) {
  toml::table* rt = Runtimes(root, plugin);
  if (rt == nullptr) return nullptr;
  return (*rt)[name].as_table();
}

// Creates the tables on the way as needed.
toml::table& RuntimesForWrite(toml::table& root, std::string_view plugin) {
  toml::table* t = &root;
  for (std::string_view key : {std::string_view("plugins"), plugin, std::string_view("containerd"),
                               std::string_view("runtimes")}) {
    toml::node* n = t->get(key);
    if (n == nullptr || !n->is_table()) {
      t->insert_or_assign(key, toml::table{});
      n = t->get(key);
    }
    t = n->as_table();
  }
  return *t;
}

std::vector<std::string> HandlerPath(std::string_view plugin, const std::string& name) {
  return {"plugins", std::string(plugin), "containerd", "runtimes", name};
}

std::string_view OtherPlugin(std::string_view plugin) {
  return plugin == kCriPluginV2 ? kCriPluginV3 : kCriPluginV2;
}

// The text edit, checked; else toml++'s rendering of `want`.
Result<ConfigEdit> Finish(std::string_view text, const std::string& where, std::string edited,
                          const toml::table& want, ConfigEdit edit) {
  auto reparsed = Parse(edited, where + " (as edited)");
  if (reparsed && Pruned(*reparsed) == Pruned(want)) {
    edit.text = std::move(edited);
  } else {
    edit.text = SerializeToml(want);
    edit.rewritten = true;
    edit.notes.push_back(where +
                         ": the handler could not be edited in place; wrote the whole file "
                         "from its parsed form (comments dropped)");
    auto again = Parse(edit.text, where + " (rewritten)");
    if (!again || Pruned(*again) != Pruned(want)) {
      return MakeError(where + ": internal error: the rewritten file does not read back");
    }
  }
  edit.changed = edit.text != text;
  return edit;
}

Result<int64_t> VersionOf(const toml::table& root, const std::string& where, bool empty_ok) {
  const toml::node* v = root.get("version");
  if (v == nullptr) {
    if (root.empty() && empty_ok) return 2;
    return MakeError(where +
                     ": no \"version\" key, so containerd reads it as a version 1 config; "
                     "migrate it first (containerd config migrate)");
  }
  auto n = v->value<int64_t>();
  if (!n || engines::CriPluginFor(*n).empty()) {
    return MakeError(where + ": version: " +
                     (n ? std::to_string(*n) : std::string("a non-integer")) + " is not 2 or 3");
  }
  return *n;
}

// The handler `name` under `plugin` when it runs our wrapper, nullptr when
// there is none; an error when the name holds something else.
Result<const toml::table*> OursOrNone(toml::table& root, std::string_view plugin,
                                      const std::string& name, const std::string& at) {
  const toml::table* existing = Handler(root, plugin, name);
  if (toml::node* n = root["plugins"][plugin]["containerd"]["runtimes"][name].node();
      n != nullptr && existing == nullptr) {
    return MakeError(at + ": must be a table");
  }
  if (existing != nullptr && !IsOurs(*existing)) {
    return MakeError(at + " runs " + Quote(BinaryOf(*existing)) + ", not " +
                     std::string(kRuntimeBinaryName) +
                     "; rename it or remove it, or pass another handler name");
  }
  return existing;
}

// The handler to copy: the one asked for, else runc, else the default.
const toml::table* BaseHandler(toml::table& root, std::string_view plugin,
                               const HandlerRequest& req, const std::string& at,
                               std::vector<std::string>& notes) {
  const toml::table* base = Handler(root, plugin, req.base);
  if (base == nullptr && req.base != "runc") {
    notes.push_back(at + ": no base handler " + Quote(req.base) + "; copied \"runc\"");
    base = Handler(root, plugin, "runc");
  }
  if (base == nullptr) {
    auto def = root["plugins"][plugin]["containerd"]["default_runtime_name"].value<std::string>();
    if (def && *def != req.name) base = Handler(root, plugin, *def);
  }
  return base;
}

// The handler install writes: a copy of `base` (or an empty table) that
// runs `binary` as a runc v2 shim and passes our pod annotations.
toml::table WantedHandler(const toml::table* base, const std::string& binary) {
  toml::table want = base != nullptr ? *base : toml::table{};
  want.insert_or_assign("runtime_type", RuncShim());
  if (!want["options"].is_table()) want.insert_or_assign("options", toml::table{});
  want["options"].as_table()->insert_or_assign("BinaryName", binary);
  toml::array annotations;
  if (const toml::array* a = want["pod_annotations"].as_array()) {
    for (const auto& e : *a) {
      if (e.is_string()) annotations.push_back(*e.value<std::string>());
    }
  }
  bool have = std::any_of(annotations.begin(), annotations.end(), [](const toml::node& e) {
    return e.value<std::string>() == kPodAnnotations;
  });
  if (!have) annotations.push_back(std::string(kPodAnnotations));
  want.insert_or_assign("pod_annotations", std::move(annotations));
  return want;
}

// A runtimes table in the file replaces containerd 1.x's built-in one, so
// a file without the default handler would lose runc: the name of the
// default handler to declare as containerd's default does (UninstallHandler
// drops it again), or nullopt when the file has one or it is ours.
std::optional<std::string> DefaultToDeclare(toml::table& root, std::string_view plugin,
                                            const std::string& name) {
  const std::string def_name =
      root["plugins"][plugin]["containerd"]["default_runtime_name"].value_or(std::string("runc"));
  if (Handler(root, plugin, def_name) == nullptr && def_name != name &&
      !root["plugins"][plugin]["containerd"]["runtimes"][def_name]) {
    return def_name;
  }
  return std::nullopt;
}

// Puts `handler` (after the default handler to declare, if any) under
// `plugin` in `want`, and returns the same runtimes for the appended block.
toml::table PutHandlers(toml::table& want, std::string_view plugin, const std::string& name,
                        const toml::table& handler, const std::optional<std::string>& add_default) {
  toml::table block_runtimes;
  if (add_default) {
    toml::table minimal{{"runtime_type", RuncShim()}};
    RuntimesForWrite(want, plugin).insert_or_assign(*add_default, minimal);
    block_runtimes.insert(*add_default, minimal);
  }
  block_runtimes.insert(name, handler);
  RuntimesForWrite(want, plugin).insert_or_assign(name, handler);
  return block_runtimes;
}

// `text` (the file with our old sections cut) ending in a newline, then the
// version line when the file had none, and our marker above the block of
// `runtimes` under `plugin`.
std::string WithBlock(std::string text, bool add_version, std::string_view plugin,
                      const toml::table& runtimes) {
  if (!text.empty() && text.back() != '\n') text += '\n';
  if (add_version) text += "version = 2\n";
  toml::table block;
  block.insert(
      "plugins",
      toml::table{{plugin, toml::table{{"containerd", toml::table{{"runtimes", runtimes}}}}}});
  text += "\n" + std::string(kMarker) + "\n" + SerializeToml(block);
  return text;
}

}  // namespace

Result<ConfigEdit> InstallHandler(std::string_view text, const std::string& source,
                                  const HandlerRequest& req) {
  const std::string where = "containerd config " + Quote(source);
  auto parsed = Parse(text, where);
  if (!parsed) return parsed.error();
  toml::table root = std::move(*parsed);
  auto version = VersionOf(root, where, /*empty_ok=*/true);
  if (!version) return version.error();
  ConfigEdit edit;
  edit.version = *version;
  const std::string_view plugin = engines::CriPluginFor(*version);
  const std::string_view other = OtherPlugin(plugin);
  const std::string at = where + ": handler " + Quote(req.name);

  auto existing = OursOrNone(root, plugin, req.name, at);
  if (!existing) return existing.error();
  const toml::table* stale = Handler(root, other, req.name);
  const bool remove_stale = stale != nullptr && IsOurs(*stale);
  toml::table base_root;
  if (!req.base_text.empty()) {
    auto b = Parse(req.base_text, where + " (its base)");
    if (!b) return b.error();
    base_root = std::move(*b);
  }
  const toml::table* base =
      BaseHandler(req.base_text.empty() ? root : base_root, plugin, req, at, edit.notes);
  if (base != nullptr) edit.base_binary = BinaryOf(*base);
  const toml::table want_handler = WantedHandler(base, req.binary);
  if (*existing != nullptr && **existing == want_handler && !remove_stale) {
    edit.text = std::string(text);
    return edit;
  }

  toml::table want = root;
  if (!want.contains("version")) want.insert("version", 2);
  const std::optional<std::string> add_default =
      req.declare_default ? DefaultToDeclare(root, plugin, req.name) : std::nullopt;
  const toml::table block_runtimes = PutHandlers(want, plugin, req.name, want_handler, add_default);
  if (remove_stale) {
    Runtimes(want, other)->erase(req.name);
    edit.notes.push_back(at + ": removed its table under plugins." + Quote(std::string(other)) +
                         ", which a version " + std::to_string(*version) + " file does not read");
  }

  std::vector<std::vector<std::string>> cut = {HandlerPath(plugin, req.name)};
  if (remove_stale) cut.push_back(HandlerPath(other, req.name));
  auto edited = CutSections(text, cut, kMarker);
  if (!edited) return edited.error().Wrap(where);
  if (add_default) edit.added_default = *add_default;
  std::string out = WithBlock(std::move(*edited), /*add_version=*/!root.contains("version"), plugin,
                              block_runtimes);
  return Finish(text, where, std::move(out), want, std::move(edit));
}

Result<ConfigEdit> UninstallHandler(std::string_view text, const std::string& source,
                                    const std::string& name, const std::string& added_default) {
  const std::string where = "containerd config " + Quote(source);
  auto parsed = Parse(text, where);
  if (!parsed) return parsed.error();
  toml::table root = std::move(*parsed);
  ConfigEdit edit;
  edit.version = root["version"].value_or(int64_t{0});
  toml::table want = root;
  std::vector<std::vector<std::string>> cut;
  for (std::string_view plugin : {kCriPluginV2, kCriPluginV3}) {
    const toml::table* h = Handler(root, plugin, name);
    if (h == nullptr) continue;
    if (!IsOurs(*h)) {
      edit.notes.push_back(where + ": kept handler " + Quote(name) + " under plugins." +
                           Quote(std::string(plugin)) + ": it runs " + Quote(BinaryOf(*h)) +
                           ", not " + std::string(kRuntimeBinaryName));
      continue;
    }
    toml::table* rt = Runtimes(want, plugin);
    rt->erase(name);
    cut.push_back(HandlerPath(plugin, name));
    // The bare default handler install declared: with ours gone and no
    // other handler left it means what containerd's built-in table means,
    // so it goes too. One the admin wrote, or one beside other handlers
    // (without it, containerd 1.x would have no default), stays.
    const std::string def_name =
        root["plugins"][plugin]["containerd"]["default_runtime_name"].value_or(std::string("runc"));
    const toml::table* def = (*rt)[def_name].as_table();
    if (!added_default.empty() && def_name == added_default && rt->size() == 1 && def != nullptr &&
        *def == toml::table{{"runtime_type", RuncShim()}}) {
      rt->erase(def_name);
      cut.push_back(HandlerPath(plugin, def_name));
    }
  }
  auto only_version = [](const toml::table& t) {
    toml::table p = Pruned(t);
    p.erase("version");
    return p.empty();
  };
  if (cut.empty()) {
    edit.text = std::string(text);
    edit.only_version = only_version(root);
    return edit;
  }
  auto edited = CutSections(text, cut, kMarker);
  if (!edited) return edited.error().Wrap(where);
  edit.only_version = only_version(want);
  return Finish(text, where, std::move(*edited), want, std::move(edit));
}

Result<std::vector<std::string>> WrapperRoots(std::string_view text, const std::string& source,
                                              const std::string& name) {
  auto parsed = Parse(text, "containerd config " + Quote(source));
  if (!parsed) return parsed.error();
  std::vector<std::string> out;
  for (std::string_view plugin : {kCriPluginV2, kCriPluginV3}) {
    const toml::table* h = Handler(*parsed, plugin, name);
    if (h == nullptr || !IsOurs(*h)) continue;
    out.push_back((*h)["options"]["Root"].value_or(std::string()));
  }
  return out;
}

}  // namespace ocirlimit::node
