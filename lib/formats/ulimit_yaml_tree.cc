#include "formats/ulimit_yaml_tree.h"

#include <yaml.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "formats/text.h"

namespace ocirlimit::yaml {
namespace {

using Kind = Node::Kind;
using Type = Scalar::Type;
constexpr std::string_view kMergeTag = "tag:yaml.org,2002:merge";

std::string Str(const yaml_char_t* s) {
  return s == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(s));
}

std::string At(const yaml_mark_t& m) {
  return Cat("line ", std::to_string(m.line + 1), " column ", std::to_string(m.column + 1));
}

// libyaml 0.2.5 refuses a plain scalar ending in ':' before a flow indicator
// (`{soft:}`); go-yaml v2.4.0 reads it as one key, so the NRI sample reads
// that field as missing: refused as the glued colon is (docs/policy.md).
std::optional<std::string> GluedBeforeFlow(const yaml_parser_t& p, std::string_view text) {
  if (p.problem == nullptr || p.context == nullptr ||
      std::string_view(p.problem) != "found unexpected ':'" ||
      std::string_view(p.context) != "while scanning a plain scalar" ||
      p.problem_mark.index < p.context_mark.index || p.problem_mark.index > text.size()) {
    return std::nullopt;
  }
  const std::string key(
      text.substr(p.context_mark.index, p.problem_mark.index - p.context_mark.index));
  return Cat(Quote(key + ":"), " is one key (YAML needs a space after the colon), so the NRI ",
             "sample reads it as a key of that name with no value; write ", Quote(key + ": VALUE"));
}

// libyaml's parser and its current event, freed on every path.
class Events {
 public:
  explicit Events(std::string_view text) : text_(text) {
    ok_ = yaml_parser_initialize(&parser_) != 0;
    if (ok_) {
      yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                   text.size());
    }
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  ~Events() {
    Free();
    yaml_parser_delete(&parser_);
  }

  Result<const yaml_event_t*> Next() {
    Free();
    if (!ok_) return MakeError("out of memory");
    if (yaml_parser_parse(&parser_, &event_) == 0) {
      if (auto glued = GluedBeforeFlow(parser_, text_)) return MakeError(*glued);
      const yaml_mark_t& m = parser_.problem_mark;
      std::string why = parser_.problem != nullptr ? parser_.problem : "not YAML";
      if (parser_.context != nullptr) {
        why += Cat(" (", parser_.context, " at ", At(parser_.context_mark), ")");
      }
      return MakeError(Cat(At(m), ": ", why));
    }
    has_event_ = true;
    return &event_;
  }

 private:
  void Free() {
    if (has_event_) yaml_event_delete(&event_);
    has_event_ = false;
  }
  std::string_view text_;
  yaml_parser_t parser_{};
  yaml_event_t event_{};
  bool ok_ = false;
  bool has_event_ = false;
};

class Builder {
 public:
  Result<Tree> Read(std::string_view text);

 private:
  Status Start(const yaml_event_t& e, Kind kind, const yaml_char_t* anchor);
  Status End();
  Status Scalar(const yaml_event_t& e);
  Status Alias(const yaml_event_t& e);
  Status Add(Ref ref);
  Status CheckKey(const Node& key, size_t line) const;
  Status CheckMerge(Ref value) const;
  bool Unwritable(const Node& n) const;

  Tree tree_;
  std::vector<size_t> open_;
  std::vector<bool> flow_;  // per open collection: flow style ([...], {...})
  std::map<std::string, size_t> anchors_;
};

Status Builder::Start(const yaml_event_t& e, Kind kind, const yaml_char_t* anchor) {
  const size_t at = tree_.nodes.size();
  tree_.nodes.push_back(Node{.kind = kind, .line = e.start_mark.line + 1});
  if (anchor != nullptr) anchors_[Str(anchor)] = at;
  open_.push_back(at);
  flow_.push_back(kind == Kind::kSequence ? e.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE
                                          : e.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE);
  return Ok{};
}

Status Builder::End() {
  const size_t at = open_.back();
  open_.pop_back();
  flow_.pop_back();
  tree_.nodes[at].done = true;
  tree_.nodes[at].unwritable = Unwritable(tree_.nodes[at]);
  return Add(Ref{at});
}

Status Builder::Scalar(const yaml_event_t& e) {
  const auto& s = e.data.scalar;
  const std::string_view value(reinterpret_cast<const char*>(s.value), s.length);
  // libyaml 0.2.5 reads a?b in a flow collection as one value; go-yaml v2
  // (libyaml 0.1's grammar) ends the value at '?', a key, and refuses.
  if (!flow_.empty() && flow_.back() && s.style == YAML_PLAIN_SCALAR_STYLE &&
      value.find('?') != std::string_view::npos) {
    return MakeError(Cat(At(e.start_mark), ": ", Quote(value),
                         ": a '?' inside a plain value in [...] or {...}, which the NRI sample "
                         "reads as a key and refuses (quote the value)"));
  }
  auto resolved = ResolveScalar(Str(s.tag), value, s.plain_implicit != 0);
  if (!resolved) return resolved.error().Wrap(At(e.start_mark));
  const size_t at = tree_.nodes.size();
  tree_.nodes.push_back(
      Node{.scalar = std::move(*resolved),
           .plain = s.style == YAML_PLAIN_SCALAR_STYLE,
           .merge_key = value == "<<" && (s.plain_implicit != 0 || Str(s.tag) == kMergeTag),
           .done = true,
           .line = e.start_mark.line + 1});
  tree_.nodes[at].unwritable = !JsonWritable(tree_.nodes[at].scalar);
  if (s.anchor != nullptr) anchors_[Str(s.anchor)] = at;
  return Add(Ref{at});
}

Status Builder::Alias(const yaml_event_t& e) {
  const std::string name = Str(e.data.alias.anchor);
  auto it = anchors_.find(name);
  if (it == anchors_.end())
    return MakeError(Cat(At(e.start_mark), ": unknown anchor ", Quote(name)));
  if (!tree_.nodes[it->second].done) {
    return MakeError(Cat(At(e.start_mark), ": anchor ", Quote(name), " contains itself"));
  }
  return Add(Ref{it->second, true});
}

// sigs.k8s.io/yaml writes a key as a JSON string: from a string, an int, a
// float or a bool, never from null or a uint64; go-yaml refuses a
// collection as a key.
Status Builder::CheckKey(const Node& key, size_t line) const {
  const std::string at = Cat("line ", std::to_string(line), ": ");
  if (key.kind != Kind::kScalar) return MakeError(at + "a key is a list or a mapping");
  if (key.scalar.type == Type::kNull) return MakeError(at + "a key is null");
  if (key.scalar.type == Type::kUint) {
    return MakeError(Cat(at, "key ", Quote(key.scalar.text), " is over 2^63-1"));
  }
  return Ok{};
}

// go-yaml merges a mapping, an alias of one, or a list of those; a list
// through an alias is not merged but refused.
Status Builder::CheckMerge(Ref value) const {
  const Node& n = tree_.nodes[value.node];
  bool ok = n.kind == Kind::kMapping;
  if (n.kind == Kind::kSequence && !value.alias) {
    ok = true;
    for (const Ref& item : n.items) ok = ok && tree_.nodes[item.node].kind == Kind::kMapping;
  }
  if (!ok) return MakeError(Cat("line ", std::to_string(n.line), ": << merges only mappings"));
  return Ok{};
}

Status Builder::Add(Ref ref) {
  const Node& child = tree_.nodes[ref.node];
  if (open_.empty()) {
    tree_.root = ref.node;
  } else if (Node& parent = tree_.nodes[open_.back()]; parent.kind == Kind::kSequence) {
    parent.items.push_back(ref);
  } else if (parent.items.size() % 2 == 0) {  // a key
    if (auto st = CheckKey(child, child.line); !st) return st;
    parent.merge.push_back(!ref.alias && child.kind == Kind::kScalar && child.merge_key);
    parent.items.push_back(ref);
    return Ok{};
  } else {
    if (parent.merge.back()) {
      if (auto st = CheckMerge(ref); !st) return st;
    }
    parent.items.push_back(ref);
  }
  return Ok{};
}

// A go-yaml map key's identity: 1 and 0x1 are one int key; NaN is never
// equal to itself.
std::string KeyId(const yaml::Scalar& s, size_t node) {
  switch (s.type) {
    case Type::kInt:
      return "i" + std::to_string(s.i);
    case Type::kBool:
      return "b" + std::to_string(s.i);
    case Type::kFloat: {
      std::array<char, 40> buf{};
      std::snprintf(buf.data(), buf.size(), "%a", s.f);
      return s.f == s.f ? Cat("f", buf.data()) : "n" + std::to_string(node);
    }
    default:
      return "s" + s.text;
  }
}

// Whether json.Marshal fails on what go-yaml keeps of node n: a NaN or an
// infinity among its values, where a map keeps the last value of each key
// (a merged mapping counts whole).
bool Builder::Unwritable(const Node& n) const {
  const auto bad = [&](const Ref& r) { return tree_.nodes[r.node].unwritable; };
  if (n.kind == Kind::kScalar) return !JsonWritable(n.scalar);
  if (n.kind == Kind::kSequence) return std::any_of(n.items.begin(), n.items.end(), bad);
  std::map<std::string, Ref> kept;
  for (size_t p = 0; p + 1 < n.items.size(); p += 2) {
    if (n.merge[p / 2] && bad(n.items[p + 1])) return true;
    if (!n.merge[p / 2]) {
      kept[KeyId(tree_.nodes[n.items[p].node].scalar, n.items[p].node)] = n.items[p + 1];
    }
  }
  return std::any_of(kept.begin(), kept.end(), [&](const auto& k) { return bad(k.second); });
}

Result<Tree> Builder::Read(std::string_view text) {
  Events events(text);
  int documents = 0;
  bool ended = false;  // the first document's end: go-yaml reads no further
  for (;;) {
    auto e = events.Next();
    if (!e && ended) {
      return e.error().Wrap("text after the document, which the NRI sample drops (remove it)");
    }
    if (!e) return e.error();
    const yaml_event_t& ev = **e;
    Status st = Ok{};
    switch (ev.type) {
      case YAML_STREAM_END_EVENT:
        if (tree_.root && tree_.nodes[*tree_.root].unwritable) {
          return MakeError(
              "a value is not a finite number (.inf, .nan), which the NRI sample cannot pass on");
        }
        return std::move(tree_);
      case YAML_DOCUMENT_START_EVENT:
        if (++documents > 1) {
          return MakeError(Cat(At(ev.start_mark),
                               ": a second document, which the NRI sample drops (remove it)"));
        }
        if (const auto* v = ev.data.document_start.version_directive;
            v != nullptr && (v->major != 1 || v->minor != 1)) {
          return MakeError(Cat(At(ev.start_mark), ": %YAML ", std::to_string(v->major), ".",
                               std::to_string(v->minor), " (the NRI sample reads only 1.1)"));
        }
        break;
      case YAML_SCALAR_EVENT:
        st = Scalar(ev);
        break;
      case YAML_ALIAS_EVENT:
        st = Alias(ev);
        break;
      case YAML_SEQUENCE_START_EVENT:
        st = Start(ev, Kind::kSequence, ev.data.sequence_start.anchor);
        break;
      case YAML_MAPPING_START_EVENT:
        st = Start(ev, Kind::kMapping, ev.data.mapping_start.anchor);
        break;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        st = End();
        break;
      case YAML_DOCUMENT_END_EVENT:
        ended = true;
        break;
      default:  // stream start, none
        break;
    }
    if (!st) return st.error();
  }
}

}  // namespace

Result<Tree> ReadTree(std::string_view text) { return Builder().Read(text); }

}  // namespace ocirlimit::yaml
