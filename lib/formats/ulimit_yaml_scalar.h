// What the NRI sample's YAML library (go-yaml v2.4.0, YAML 1.1) makes of one
// scalar, and what Go's encoding/json then reads from it into the sample's
// uint64 fields (sigs.k8s.io/yaml writes the YAML value as JSON first).
// Pure; used by formats/ulimit_yaml.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "formats/error.h"

namespace ocirlimit::yaml {

// The value go-yaml v2's resolve() gives: Go's nil, bool, int, uint64,
// float64 or string (a timestamp stays a string when decoded into an
// interface, as the sample does).
struct Scalar {
  enum class Type { kNull, kBool, kInt, kUint, kFloat, kString };
  Type type = Type::kString;
  int64_t i = 0;          // kInt
  uint64_t u = 0;         // kUint
  double f = 0;           // kFloat
  std::string text = {};  // as written (kString: the value; !!binary: decoded)
  // An integer written with a leading zero and octal digits: YAML 1.1
  // reads 0777 as 511.
  bool octal = false;
  bool from_int = false;  // a float tagged !!float on an integer (i holds it)
};

// tag: libyaml's full tag ("tag:yaml.org,2002:int"), or "" for none.
// plain_implicit: libyaml's flag for a plain scalar without a tag or with
// "!". Fails where go-yaml fails: a value its tag cannot hold (!!int abc),
// bad !!binary data.
Result<Scalar> ResolveScalar(std::string_view tag, std::string_view value, bool plain_implicit);

// Go's encoding/json decoding the JSON that sigs.k8s.io/yaml writes for s
// into a uint64: an integer, or a float whose shortest decimal is an integer
// that fits. Fails for null (the caller decides), strings, bools, negative
// numbers, fractions, NaN and infinities, and numbers over 2^64-1.
Result<uint64_t> JsonUint64(const Scalar& s);

// Whether Go's json.Marshal can write s (NaN and infinities it cannot).
bool JsonWritable(const Scalar& s);

// The exact value of a decimal number as written ("1.5e3", "1_000"), when it
// is a whole number in 0..2^64-1; false otherwise. For refusing a float the
// sample rounds to another number.
bool ExactWhole(std::string_view text, uint64_t& out);

}  // namespace ocirlimit::yaml
