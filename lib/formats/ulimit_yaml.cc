#include "formats/ulimit_yaml.h"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "formats/text.h"
#include "formats/ulimit_yaml_tree.h"

namespace ocirlimit {
namespace {

using yaml::Node;
using yaml::Scalar;
using yaml::Tree;
using Kind = Node::Kind;
using Type = Scalar::Type;

constexpr std::array<std::string_view, 3> kFields = {"type", "soft", "hard"};
// Merges through aliases can repeat a mapping many times; go-yaml stops
// "excessive aliasing" too. No value of 16 KiB needs more pairs than this.
constexpr int kMaxPairs = 100000;

// Go's encoding/json matches a key to a field in any case, and an "s" of
// the field also to U+017F (ſ), as bytes.EqualFold does.
bool FoldsTo(std::string_view key, std::string_view field) {
  for (char f : field) {
    if (f == 's' && key.starts_with("\xC5\xBF")) {
      key.remove_prefix(2);
      continue;
    }
    if (key.empty() || (key[0] | 0x20) != f) return false;
    key.remove_prefix(1);
  }
  return key.empty();
}

std::optional<size_t> FieldOf(std::string_view key) {
  for (size_t f = 0; f < kFields.size(); ++f) {
    if (FoldsTo(key, kFields[f])) return f;
  }
  return std::nullopt;
}

// What one item's mapping holds, as go-yaml v2 builds its Go map: keys by
// their exact text, later pairs and merges overwriting earlier ones.
struct Set {
  size_t value = 0;
  int owner = 0;  // the Fill call whose own pair set it
};

class Item {
 public:
  explicit Item(const Tree& tree) : tree_(tree) {}
  Status Fill(size_t mapping);
  const std::map<std::string, Set>& keys() const { return keys_; }

 private:
  Status Put(const std::string& key, size_t value, int me);
  Status Merge(const yaml::Ref& value);

  const Tree& tree_;
  std::map<std::string, Set> keys_;
  std::vector<bool> active_ = {false};
  int pairs_ = 0;
};

// In a flow mapping, soft:1024 without a space is one key with a null value.
Status Glued(const Node& key) {
  const std::string& k = key.scalar.text;
  const size_t colon = k.find(':');
  if (!key.plain || colon == std::string::npos || FieldOf(k)) return Ok{};
  auto f = FieldOf(k.substr(0, colon));
  if (!f) return Ok{};
  const std::string_view name = kFields[*f];
  return MakeError(Cat(Quote(k),
                       " is one key (YAML needs a space after the colon), so the NRI "
                       "sample reads ",
                       name, name == "type" ? " as empty" : " as 0", "; write ",
                       Quote(Cat(k.substr(0, colon), ": ", Trim(k.substr(colon + 1))))));
}

// A field given twice in one mapping, or a merge after a field that it then
// overrides (go-yaml v2 lets the merge win, YAML the key), is refused: a key
// set by a Fill call still running is that mapping's own.
Status Item::Put(const std::string& key, size_t value, int me) {
  auto [it, fresh] = keys_.try_emplace(key, Set{value, me});
  if (!fresh) {
    if (FieldOf(key) && active_[static_cast<size_t>(it->second.owner)]) {
      return MakeError(Cat(Quote(key), " given twice"));
    }
    it->second = Set{value, me};
  }
  return Ok{};
}

Status Item::Merge(const yaml::Ref& value) {
  const Node& n = tree_.nodes[value.node];
  if (n.kind == Kind::kMapping) return Fill(value.node);
  for (size_t i = n.items.size(); i-- > 0;) {  // go-yaml: earlier mappings win
    if (auto st = Fill(n.items[i].node); !st) return st;
  }
  return Ok{};
}

Status Item::Fill(size_t mapping) {
  const int me = static_cast<int>(active_.size());
  active_.push_back(true);
  const Node& m = tree_.nodes[mapping];
  for (size_t p = 0; p + 1 < m.items.size(); p += 2) {
    if (++pairs_ > kMaxPairs) return MakeError("aliases repeat too many keys");
    const Node& key = tree_.nodes[m.items[p].node];
    if (m.merge[p / 2]) {
      if (auto st = Merge(m.items[p + 1]); !st) return st;
    } else if (key.scalar.type == Type::kString) {
      Status st = Glued(key);
      if (st) st = Put(key.scalar.text, m.items[p + 1].node, me);
      if (!st) return st.error().Wrap(Cat("line ", std::to_string(key.line)));
    }
  }
  active_[static_cast<size_t>(me)] = false;
  return Ok{};
}

// Go's strings.ToUpper, then the sample's RLIMIT_ prefix: "nofile" and
// "rlimit_nofile" are RLIMIT_NOFILE; U+0131 (ı) and U+017F (ſ) upper-case to
// I and S there.
const RlimitInfo* SampleType(std::string_view type) {
  std::string upper;
  for (size_t i = 0; i < type.size(); ++i) {
    const std::string_view rest = type.substr(i);
    if (rest.starts_with("\xC4\xB1") || rest.starts_with("\xC5\xBF")) {
      upper += rest[1] == '\xB1' ? 'I' : 'S';
      ++i;
    } else {
      const char c = type[i];
      upper += c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    }
  }
  if (!upper.starts_with("RLIMIT_")) upper = "RLIMIT_" + upper;
  for (const auto& info : AllRlimits()) {
    if (info.spec_type == upper) return &info;
  }
  return nullptr;
}

Result<const RlimitInfo*> TypeOf(const Tree& tree, const Set* set) {
  if (set == nullptr) return MakeError("no type (needs type, soft and hard)");
  const Node& n = tree.nodes[set->value];
  if (n.kind != Kind::kScalar) return MakeError("type is a list or a mapping");
  if (n.scalar.type == Type::kNull) return MakeError("type is null (needs type, soft and hard)");
  const RlimitInfo* info = n.scalar.type == Type::kString ? SampleType(n.scalar.text) : nullptr;
  if (info == nullptr)
    return MakeError(Cat("type ", Quote(n.scalar.text), " is not a Linux rlimit"));
  return info;
}

std::string Octal(std::string_view name, const Scalar& s, uint64_t n) {
  return Cat(name, " ", Quote(s.text),
             " has a leading zero, which YAML 1.1 (the NRI sample) reads "
             "as octal: ",
             std::to_string(n), " there; write ", std::to_string(n),
             " for that, or the number without leading zeros");
}

Result<uint64_t> ValueOf(const Tree& tree, const Set* set, std::string_view name) {
  if (set == nullptr) {
    return MakeError(Cat("no ", name, ": the NRI sample reads a missing ", name, " as 0; write ",
                         name, ": 0 if that is meant"));
  }
  const Node& n = tree.nodes[set->value];
  if (n.kind != Kind::kScalar) return MakeError(Cat(name, " is a list or a mapping"));
  const Scalar& s = n.scalar;
  if (s.type == Type::kNull) {
    return MakeError(
        Cat(name, " ", Quote(s.text), " is null: the NRI sample reads it as 0; write the number"));
  }
  auto v = yaml::JsonUint64(s);
  if (!v) return v.error().Wrap(std::string(name));
  if (s.octal) return MakeError(Octal(name, s, *v));
  uint64_t exact = s.from_int ? static_cast<uint64_t>(s.i) : 0;
  const bool whole = s.from_int || yaml::ExactWhole(s.text, exact);
  if (s.type == Type::kFloat && (!whole || exact != *v)) {
    return MakeError(Cat(name, " ", Quote(s.text), " is read as a float: the NRI sample reads ",
                         std::to_string(*v), "; write the whole number you mean"));
  }
  return *v;
}

Result<Rlimit> ToRlimit(const Tree& tree, size_t mapping) {
  Item item(tree);
  if (auto st = item.Fill(mapping); !st) return st.error();
  std::array<const Set*, 3> fields{};
  for (const auto& [key, set] : item.keys()) {
    auto f = FieldOf(key);
    if (!f) continue;
    if (fields[*f] != nullptr) {
      return MakeError(Cat(kFields[*f], " given twice, in two spellings"));
    }
    fields[*f] = &set;
  }
  auto type = TypeOf(tree, fields[0]);
  if (!type) return type.error();
  auto soft = ValueOf(tree, fields[1], "soft");
  if (!soft) return soft.error();
  auto hard = ValueOf(tree, fields[2], "hard");
  if (!hard) return hard.error();
  Rlimit r{(*type)->resource, *soft, *hard};
  if (r.soft > r.hard) return MakeError(FormatRlimit(r) + ": soft is over hard");
  return r;
}

Result<std::vector<Rlimit>> Decode(const Tree& tree) {
  std::vector<Rlimit> out;
  if (!tree.root) return out;
  const Node& root = tree.nodes[*tree.root];
  if (root.kind == Kind::kScalar && root.scalar.type == Type::kNull) return out;
  if (root.kind != Kind::kSequence) {
    return MakeError(
        "not a list: write \"- type: NAME\" items, or [{type: NAME, soft: N, hard: N}]");
  }
  for (size_t i = 0; i < root.items.size(); ++i) {
    const Node& n = tree.nodes[root.items[i].node];
    const std::string where =
        Cat("item ", std::to_string(i), " (line ", std::to_string(n.line), ")");
    if (n.kind != Kind::kMapping) {
      return MakeError(Cat(where, ": not a mapping of type, soft and hard"));
    }
    auto r = ToRlimit(tree, root.items[i].node);
    if (!r) return r.error().Wrap(where);
    for (const auto& o : out) {
      if (o.resource == r->resource) {
        return MakeError(Cat(where, ": type ", r->info().name, " given twice"));
      }
    }
    out.push_back(*r);
  }
  return out;
}

}  // namespace

Result<std::vector<Rlimit>> ParseUlimitYaml(std::string_view text) {
  if (text.size() > kMaxUlimitYamlBytes) {
    return MakeError(Cat("longer than ", std::to_string(kMaxUlimitYamlBytes), " bytes (",
                         std::to_string(text.size()), ")"));
  }
  auto tree = yaml::ReadTree(text);
  if (!tree) return tree.error();
  return Decode(*tree);
}

}  // namespace ocirlimit
