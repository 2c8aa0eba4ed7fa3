// The first YAML document of a text as libyaml (YAML 1.1, the grammar the NRI
// sample's go-yaml v2 was ported from) reads it: a tree of resolved scalars,
// sequences and mappings, an alias sharing its anchor's node. Read as
// go-yaml v2 and sigs.k8s.io/yaml read a whole value, so a value they refuse
// anywhere (a null or uint64 or collection key, NaN, a bad merge, an
// unknown anchor, a %YAML other than 1.1) is refused here too. Pure apart
// from libyaml's allocations; formats/ulimit_yaml decodes the tree.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "formats/error.h"
#include "formats/ulimit_yaml_scalar.h"

namespace ocirlimit::yaml {

// A child: its node, and whether it was written as an alias (go-yaml reads
// a merge key and a merged sequence differently through an alias).
struct Ref {
  size_t node = 0;
  bool alias = false;
};

struct Node {
  enum class Kind { kScalar, kSequence, kMapping };
  Kind kind = Kind::kScalar;
  Scalar scalar = {};            // kScalar
  bool plain = false;            // kScalar written plain (no quotes, no block)
  bool merge_key = false;        // kScalar: go-yaml's merge key, << plain or tagged !!merge
  bool done = false;             // complete: an alias inside its own anchor is refused
  bool unwritable = false;       // holds a NaN or an infinity that json.Marshal would meet
  size_t line = 0;               // 1-based
  std::vector<Ref> items = {};   // kSequence: items; kMapping: key, value, key, value
  std::vector<bool> merge = {};  // kMapping: per pair, whether it is a merge (<<)
};

struct Tree {
  std::vector<Node> nodes;
  std::optional<size_t> root;  // none for an empty text
};

Result<Tree> ReadTree(std::string_view text);

}  // namespace ocirlimit::yaml
