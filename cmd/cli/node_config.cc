#include "cli/node_config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <sstream>

#include "adapters/engines/toml_read.h"
#include "core/text.h"

namespace ocirlimit::node {
namespace {

constexpr std::string_view kMarker =
    "# oci-rlimit: this handler is written by oci-rlimit's node installer (install.sh); "
    "--uninstall removes it";

bool IsBare(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

class Scanner {
 public:
  explicit Scanner(std::string_view text) : t_(text) {}

  Result<std::vector<TomlHeader>> Run() {
    std::vector<TomlHeader> out;
    bool line_start = true;
    size_t line_begin = 0;
    while (i_ < t_.size()) {
      char c = t_[i_];
      if (c == '\n') {
        ++i_;
        line_start = true;
        line_begin = i_;
        continue;
      }
      if (line_start) {
        line_start = false;
        while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t')) ++i_;
        if (depth_ == 0 && i_ < t_.size() && t_[i_] == '[') {
          auto h = Header(line_begin);
          if (!h) return h.error();
          out.push_back(std::move(*h));
        }
        continue;
      }
      if (c == '#') {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
      } else if (c == '"' || c == '\'') {
        if (auto st = SkipString(); !st) return st.error();
      } else {
        if (c == '[' || c == '{') ++depth_;
        if ((c == ']' || c == '}') && depth_ > 0) --depth_;
        ++i_;
      }
    }
    for (size_t k = 0; k < out.size(); ++k) {
      out[k].end = k + 1 < out.size() ? out[k + 1].begin : t_.size();
    }
    return out;
  }

 private:
  Error Err(const std::string& what) const {
    size_t line = 1 + static_cast<size_t>(std::count(t_.begin(), t_.begin() + i_, '\n'));
    return MakeError("line " + std::to_string(line) + ": " + what);
  }

  // At a quote: skips the whole string (basic, literal, or multi-line).
  Status SkipString() {
    const char q = t_[i_];
    const bool multi = t_.substr(i_, 3) == std::string(3, q);
    i_ += multi ? 3 : 1;
    while (i_ < t_.size()) {
      char c = t_[i_];
      if (c == '\\' && q == '"') {
        i_ += 2;
        continue;
      }
      if (!multi && c == '\n') return Err("unterminated string");
      if (c == q && (!multi || t_.substr(i_, 3) == std::string(3, q))) {
        i_ += multi ? 3 : 1;
        // A multi-line string may end with up to two more quotes.
        while (multi && i_ < t_.size() && t_[i_] == q) ++i_;
        return Ok{};
      }
      ++i_;
    }
    return Err("unterminated string");
  }

  Result<std::string> Key() {
    char c = t_[i_];
    std::string out;
    if (c == '"' || c == '\'') {
      ++i_;
      while (i_ < t_.size() && t_[i_] != c && t_[i_] != '\n') {
        if (c == '"' && t_[i_] == '\\' && i_ + 1 < t_.size()) ++i_;
        out += t_[i_++];
      }
      if (i_ >= t_.size() || t_[i_] != c) return Err("unterminated key in a table header");
      ++i_;
      return out;
    }
    while (i_ < t_.size() && IsBare(t_[i_])) out += t_[i_++];
    if (out.empty()) return Err("bad key in a table header");
    return out;
  }

  void Spaces() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t')) ++i_;
  }

  Result<TomlHeader> Header(size_t line_begin) {
    TomlHeader h;
    h.begin = line_begin;
    h.array = t_.substr(i_, 2) == "[[";
    i_ += h.array ? 2 : 1;
    for (;;) {
      Spaces();
      if (i_ >= t_.size()) return Err("unterminated table header");
      auto k = Key();
      if (!k) return k.error();
      h.path.push_back(std::move(*k));
      Spaces();
      if (i_ < t_.size() && t_[i_] == '.') {
        ++i_;
        continue;
      }
      std::string_view close = h.array ? "]]" : "]";
      if (t_.substr(i_, close.size()) != close) return Err("unterminated table header");
      i_ += close.size();
      break;
    }
    while (i_ < t_.size() && t_[i_] != '\n') ++i_;  // a comment, or nothing
    return h;
  }

  std::string_view t_;
  size_t i_ = 0;
  int depth_ = 0;
};

// Every TOML file goes through the node model's one guarded parse.
Result<toml::table> Parse(std::string_view text, const std::string& where) {
  return engines::ParseToml(text, where);
}

std::string Serialize(const toml::table& t) {
  std::ostringstream os;
  os << t;
  std::string s = os.str();
  if (!s.empty() && s.back() != '\n') s += '\n';
  return s;
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

bool StartsWith(const std::vector<std::string>& path, const std::vector<std::string>& prefix) {
  return path.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

std::string_view LineAt(std::string_view text, size_t begin) {
  size_t nl = text.find('\n', begin);
  return text.substr(begin, nl == std::string_view::npos ? std::string_view::npos : nl - begin);
}

bool IsBlankOrComment(std::string_view line) {
  std::string_view t = Trim(line);
  return t.empty() || t.starts_with("#");
}

// Text with the sections of the given handler tables cut out (with our
// marker line above them).
Result<std::string> CutSections(std::string_view text,
                                const std::vector<std::vector<std::string>>& prefixes) {
  auto headers = Scanner(text).Run();
  if (!headers) return headers.error();
  std::vector<std::pair<size_t, size_t>> cuts;
  for (const auto& h : *headers) {
    bool hit = std::any_of(prefixes.begin(), prefixes.end(),
                           [&](const auto& p) { return StartsWith(h.path, p); });
    if (!hit) continue;
    size_t begin = h.begin;
    // Our marker on the line above belongs to the section.
    if (begin >= 2) {
      size_t nl = text.rfind('\n', begin - 2);
      size_t prev = nl == std::string_view::npos ? 0 : nl + 1;
      if (Trim(LineAt(text, prev)) == kMarker) {
        begin = prev;
        // And the blank line install put above the marker.
        if (begin >= 1 && text[begin - 1] == '\n' && (begin == 1 || text[begin - 2] == '\n'))
          --begin;
      }
    }
    // Comments and blank lines at the end belong to what follows.
    size_t end = h.begin;
    for (size_t at = h.begin; at < h.end;) {
      size_t nl = text.find('\n', at);
      size_t next = nl == std::string_view::npos || nl + 1 > h.end ? h.end : nl + 1;
      if (at == h.begin || !IsBlankOrComment(text.substr(at, next - at))) end = next;
      at = next;
    }
    cuts.emplace_back(begin, end);
  }
  // Blank lines between two cut sections (the handler and its options) go too.
  std::vector<std::pair<size_t, size_t>> merged;
  for (const auto& c : cuts) {
    if (!merged.empty() &&
        Trim(text.substr(merged.back().second, c.first - merged.back().second)).empty()) {
      merged.back().second = c.second;
    } else {
      merged.push_back(c);
    }
  }
  cuts = std::move(merged);
  std::string out(text);
  for (auto it = cuts.rbegin(); it != cuts.rend(); ++it)
    out.erase(it->first, it->second - it->first);
  return out;
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
    edit.text = Serialize(want);
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
  if (!n || CriPluginFor(*n).empty()) {
    return MakeError(where + ": version: " +
                     (n ? std::to_string(*n) : std::string("a non-integer")) + " is not 2 or 3");
  }
  return *n;
}

}  // namespace

std::string_view CriPluginFor(int64_t version) {
  if (version == 2) return kCriPluginV2;
  if (version == 3) return kCriPluginV3;
  return "";
}

Result<std::vector<TomlHeader>> ScanTomlHeaders(std::string_view text) {
  return Scanner(text).Run();
}

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
  const std::string_view plugin = CriPluginFor(*version);
  const std::string_view other = OtherPlugin(plugin);
  const std::string at = where + ": handler " + Quote(req.name);

  const toml::table* existing = Handler(root, plugin, req.name);
  if (toml::node* n = root["plugins"][plugin]["containerd"]["runtimes"][req.name].node();
      n != nullptr && existing == nullptr) {
    return MakeError(at + ": must be a table");
  }
  if (existing != nullptr && !IsOurs(*existing)) {
    return MakeError(at + " runs " + Quote(BinaryOf(*existing)) + ", not " +
                     std::string(kRuntimeBinaryName) +
                     "; rename it or remove it, or pass another handler name");
  }
  const toml::table* stale = Handler(root, other, req.name);
  const bool remove_stale = stale != nullptr && IsOurs(*stale);

  // The handler to copy: the one asked for, else runc, else the default.
  const toml::table* base = Handler(root, plugin, req.base);
  if (base == nullptr && req.base != "runc") {
    edit.notes.push_back(at + ": no base handler " + Quote(req.base) + "; copied \"runc\"");
    base = Handler(root, plugin, "runc");
  }
  if (base == nullptr) {
    auto def = root["plugins"][plugin]["containerd"]["default_runtime_name"].value<std::string>();
    if (def && *def != req.name) base = Handler(root, plugin, *def);
  }
  toml::table want_handler = base != nullptr ? *base : toml::table{};
  if (base != nullptr) edit.base_binary = BinaryOf(*base);
  want_handler.insert_or_assign("runtime_type", "io.containerd.runc.v2");
  if (!want_handler["options"].is_table()) want_handler.insert_or_assign("options", toml::table{});
  want_handler["options"].as_table()->insert_or_assign("BinaryName", req.binary);
  toml::array annotations;
  if (const toml::array* a = want_handler["pod_annotations"].as_array()) {
    for (const auto& e : *a) {
      if (e.is_string()) annotations.push_back(*e.value<std::string>());
    }
  }
  bool have = std::any_of(annotations.begin(), annotations.end(), [](const toml::node& e) {
    return e.value<std::string>() == kPodAnnotations;
  });
  if (!have) annotations.push_back(std::string(kPodAnnotations));
  want_handler.insert_or_assign("pod_annotations", std::move(annotations));

  if (existing != nullptr && *existing == want_handler && !remove_stale) {
    edit.text = std::string(text);
    return edit;
  }

  toml::table want = root;
  if (!want.contains("version")) want.insert("version", 2);
  // A runtimes table in the file replaces containerd 1.x's built-in one, so
  // a file without the default handler would lose runc: declare it as
  // containerd's default does (UninstallHandler drops it again).
  const std::string def_name =
      root["plugins"][plugin]["containerd"]["default_runtime_name"].value_or(std::string("runc"));
  const bool add_default = Handler(root, plugin, def_name) == nullptr && def_name != req.name &&
                           !root["plugins"][plugin]["containerd"]["runtimes"][def_name];
  toml::table block_runtimes;
  if (add_default) {
    toml::table minimal{{"runtime_type", "io.containerd.runc.v2"}};
    RuntimesForWrite(want, plugin).insert_or_assign(def_name, minimal);
    block_runtimes.insert(def_name, minimal);
  }
  block_runtimes.insert(req.name, want_handler);
  RuntimesForWrite(want, plugin).insert_or_assign(req.name, want_handler);
  if (remove_stale) {
    Runtimes(want, other)->erase(req.name);
    edit.notes.push_back(at + ": removed its table under plugins." + Quote(std::string(other)) +
                         ", which a version " + std::to_string(*version) + " file does not read");
  }

  std::vector<std::vector<std::string>> cut = {HandlerPath(plugin, req.name)};
  if (remove_stale) cut.push_back(HandlerPath(other, req.name));
  auto edited = CutSections(text, cut);
  if (!edited) return edited.error().Wrap(where);
  if (add_default) edit.added_default = def_name;
  std::string out = std::move(*edited);
  if (!out.empty() && out.back() != '\n') out += '\n';
  if (!root.contains("version")) out += "version = 2\n";
  toml::table block;
  block.insert("plugins",
               toml::table{{plugin, toml::table{{"containerd",
                                                 toml::table{{"runtimes", block_runtimes}}}}}});
  out += "\n" + std::string(kMarker) + "\n" + Serialize(block);
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
        *def == toml::table{{"runtime_type", "io.containerd.runc.v2"}}) {
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
  auto edited = CutSections(text, cut);
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
