#include "adapters/engines/toml_read.h"

#include <sstream>

#include "formats/text.h"
#include "formats/toml_guard.h"

namespace ocirlimit::engines {

Result<toml::table> ParseToml(std::string_view text, const std::string& source) {
  if (auto guard = CheckTomlSafeText(text); !guard) return guard.error().Wrap(source);
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& err) {
    std::ostringstream os;
    os << source << ": line " << err.source().begin.line << ": " << OneLine(err.description());
    return MakeError(os.str());
  }
}

const toml::node* TomlAt(const toml::node& root, const std::vector<std::string_view>& path) {
  const toml::node* n = &root;
  for (const auto& step : path) {
    const toml::table* t = n->as_table();
    if (t == nullptr) return nullptr;
    n = t->get(step);
    if (n == nullptr) return nullptr;
  }
  return n;
}

const toml::table* TomlTableAt(const toml::node& root, const std::vector<std::string_view>& path) {
  const toml::node* n = TomlAt(root, path);
  return n == nullptr ? nullptr : n->as_table();
}

namespace {

// "FILE: [crio.runtime] hooks_dir", "FILE: runtime \"a\": options: BinaryName".
std::string Field(const std::string& where, std::string_view key) {
  return Cat(where, where.ends_with("]") ? " " : ": ", key);
}

}  // namespace

Result<std::optional<std::string>> TomlString(const toml::table& t, std::string_view key,
                                              const std::string& where) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::optional<std::string>();
  if (const auto* s = n->as_string()) return std::optional<std::string>(s->get());
  return MakeError(Field(where, key) + ": must be a string");
}

Result<std::optional<std::vector<std::string>>> TomlStrings(const toml::table& t,
                                                            std::string_view key,
                                                            const std::string& where) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::optional<std::vector<std::string>>();
  const toml::array* arr = n->as_array();
  if (arr == nullptr || (!arr->empty() && !arr->is_homogeneous<std::string>())) {
    return MakeError(Field(where, key) + ": must be an array of strings");
  }
  std::vector<std::string> out;
  for (const auto& e : *arr) out.push_back(e.as_string()->get());
  return std::optional<std::vector<std::string>>(std::move(out));
}

Result<std::optional<bool>> TomlBool(const toml::table& t, std::string_view key,
                                     const std::string& where) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::optional<bool>();
  if (const auto* b = n->as_boolean()) return std::optional<bool>(b->get());
  return MakeError(Field(where, key) + ": must be true or false");
}

}  // namespace ocirlimit::engines
