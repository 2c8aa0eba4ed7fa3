#include "formats/ulimit_yaml_scalar.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "formats/text.h"

namespace ocirlimit::yaml {
namespace {

using Type = Scalar::Type;
constexpr std::string_view kLongPrefix = "tag:yaml.org,2002:";

// go-yaml's shortTag: "tag:yaml.org,2002:int" -> "!!int".
std::string ShortTag(std::string_view tag) {
  if (tag.starts_with(kLongPrefix)) return Cat("!!", tag.substr(kLongPrefix.size()));
  return std::string(tag);
}

bool Resolvable(std::string_view t) {
  return t.empty() || t == "!!str" || t == "!!bool" || t == "!!int" || t == "!!float" ||
         t == "!!null" || t == "!!timestamp";
}

bool OneOf(std::string_view s, std::initializer_list<std::string_view> list) {
  for (auto l : list) {
    if (s == l) return true;
  }
  return false;
}

// go-yaml v2's resolveMap: the words YAML 1.1 reads as null, bools, NaN,
// infinities and the merge key.
std::optional<Scalar> FromMap(std::string_view in) {
  Scalar s{.text = std::string(in)};
  if (OneOf(in, {"", "~", "null", "Null", "NULL"})) {
    s.type = Type::kNull;
  } else if (OneOf(in, {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})) {
    s.type = Type::kBool;
    s.i = 1;
  } else if (OneOf(in,
                   {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})) {
    s.type = Type::kBool;
  } else if (OneOf(in, {".nan", ".NaN", ".NAN"})) {
    s = Scalar{.type = Type::kFloat, .f = std::nan(""), .text = s.text};
  } else if (OneOf(in, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})) {
    s = Scalar{.type = Type::kFloat, .f = HUGE_VAL, .text = s.text};
  } else if (OneOf(in, {"-.inf", "-.Inf", "-.INF"})) {
    s = Scalar{.type = Type::kFloat, .f = -HUGE_VAL, .text = s.text};
  } else if (in != "<<") {  // "<<" is a string here; the mapping reads it as a merge
    return std::nullopt;
  }
  return s;
}

char Lower1(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

int Digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  const char l = Lower1(c);
  return l >= 'a' && l <= 'z' ? l - 'a' + 10 : 99;
}

// Go's strconv.ParseUint(s, base, 64) on text without underscores; base 0
// reads the prefixes 0x, 0o, 0b and a bare leading 0 (octal).
std::optional<uint64_t> GoParseUint(std::string_view s, int base, bool* octal = nullptr) {
  if (s.empty()) return std::nullopt;
  if (base == 0) {
    base = 10;
    if (s[0] == '0') {
      const char p = s.size() >= 3 ? Lower1(s[1]) : '\0';
      base = p == 'b' ? 2 : p == 'o' ? 8 : p == 'x' ? 16 : 8;
      if (octal != nullptr) *octal = base == 8 && p != 'o' && s.size() > 1;
      s.remove_prefix(p == 'b' || p == 'o' || p == 'x' ? 2 : 1);
    }
  }
  uint64_t n = 0;
  for (char c : s) {
    const int d = Digit(c);
    if (d >= base) return std::nullopt;
    if (n > (UINT64_MAX - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) {
      return std::nullopt;
    }
    n = n * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  return n;
}

// Go's strconv.ParseInt(s, base, 64).
std::optional<int64_t> GoParseInt(std::string_view s, int base, bool* octal = nullptr) {
  if (s.empty()) return std::nullopt;
  const bool neg = s[0] == '-';
  if (s[0] == '+' || s[0] == '-') s.remove_prefix(1);
  auto u = GoParseUint(s, base, octal);
  constexpr uint64_t kCut = uint64_t{1} << 63;
  if (!u || (neg ? *u > kCut : *u >= kCut)) return std::nullopt;
  return neg ? static_cast<int64_t>(0 - *u) : static_cast<int64_t>(*u);
}

bool AllDigits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// go-yaml's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool YamlStyleFloat(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  const size_t e = s.find_first_of("eE");
  std::string_view mant = s.substr(0, e);
  if (e != std::string_view::npos) {
    std::string_view exp = s.substr(e + 1);
    if (!exp.empty() && (exp[0] == '-' || exp[0] == '+')) exp.remove_prefix(1);
    if (!AllDigits(exp)) return false;
  }
  const size_t dot = mant.find('.');
  if (dot == std::string_view::npos) return AllDigits(mant);
  const std::string_view frac = mant.substr(dot + 1);
  if (dot == 0) return AllDigits(frac);
  return AllDigits(mant.substr(0, dot)) && (frac.empty() || AllDigits(frac));
}

// Go's underscoreOK for a decimal number: each '_' between two digits.
bool UnderscoresBetweenDigits(std::string_view s) {
  auto digit = [&](size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '9'; };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_' && (i == 0 || !digit(i - 1) || !digit(i + 1))) return false;
  }
  return true;
}

std::string WithoutUnderscores(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '_') out += c;
  }
  return out;
}

// Go's ParseFloat of a decimal float (its syntax already checked):
// correctly rounded; out of range is an error (the text stays a string),
// underflow is 0.
std::optional<double> GoParseFloat(const std::string& s) {
  const double d = std::strtod(s.c_str(), nullptr);
  if (std::isinf(d)) return std::nullopt;
  return d;
}

Scalar OfInt(std::optional<int64_t> i, std::optional<uint64_t> u, bool octal, std::string_view in) {
  Scalar s{.type = i ? Type::kInt : Type::kUint, .text = std::string(in)};
  if (i) s.i = *i;
  if (u) s.u = *u;
  // 00 to 07 are the same number in octal and decimal.
  s.octal = octal && (i ? (*i >= 8 || *i <= -8) : true);
  return s;
}

// go-yaml's resolve() for a scalar that starts with a digit or a sign.
std::optional<Scalar> Number(std::string_view in) {
  const std::string plain = WithoutUnderscores(in);
  bool octal = false;
  if (auto i = GoParseInt(plain, 0, &octal)) return OfInt(i, std::nullopt, octal, in);
  if (auto u = GoParseUint(plain, 0, &octal)) return OfInt(std::nullopt, u, octal, in);
  if (YamlStyleFloat(plain)) {
    if (auto f = GoParseFloat(plain)) {
      return Scalar{.type = Type::kFloat, .f = *f, .text = std::string(in)};
    }
  }
  // go-yaml's own 0b fallback, which also takes a sign after the prefix.
  if (plain.starts_with("0b")) {
    if (auto i = GoParseInt(plain.substr(2), 2)) return OfInt(i, std::nullopt, false, in);
    if (auto u = GoParseUint(plain.substr(2), 2)) return OfInt(std::nullopt, u, false, in);
  } else if (plain.starts_with("-0b")) {
    if (auto i = GoParseInt(Cat("-", plain.substr(3)), 2)) {
      return OfInt(i, std::nullopt, false, in);
    }
  }
  return std::nullopt;
}

// go-yaml's implicit resolution of a plain scalar, by its first character.
Scalar Implicit(std::string_view in) {
  const char c = in.empty() ? 'N' : in[0];
  const bool number = c == '+' || c == '-' || (c >= '0' && c <= '9');
  const bool known = number || c == '.' || c == 'N' ||
                     std::string_view("yYnNtTfFoO~").find(c) != std::string_view::npos;
  if (known) {
    if (auto m = FromMap(in)) return *m;
    if (number) {
      if (auto n = Number(in)) return *n;
    } else if (c == '.' && UnderscoresBetweenDigits(in)) {
      const std::string plain = WithoutUnderscores(in);
      if (YamlStyleFloat(plain)) {
        if (auto f = GoParseFloat(plain)) {
          return Scalar{.type = Type::kFloat, .f = *f, .text = std::string(in)};
        }
      }
    }
  }
  return Scalar{.text = std::string(in)};
}

const char* TagOf(Type t) {
  switch (t) {
    case Type::kNull:
      return "!!null";
    case Type::kBool:
      return "!!bool";
    case Type::kInt:
    case Type::kUint:
      return "!!int";
    case Type::kFloat:
      return "!!float";
    case Type::kString:
      break;
  }
  return "!!str";
}

// Go's base64.StdEncoding.DecodeString, which go-yaml uses for !!binary.
std::optional<std::string> Base64(std::string_view in) {
  std::string s;
  for (char c : in) {
    if (c != '\r' && c != '\n') s += c;
  }
  if (s.size() % 4 != 0) return std::nullopt;
  size_t pad = s.ends_with("==") ? 2 : s.ends_with('=') ? 1 : 0;
  std::string out;
  uint32_t acc = 0;
  for (size_t i = 0; i + pad < s.size(); ++i) {
    const char c = s[i];
    const auto at =
        std::string_view("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
            .find(c);
    if (at == std::string_view::npos) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(at);
    if (i % 4 == 3) {
      out += {static_cast<char>(acc >> 16), static_cast<char>(acc >> 8), static_cast<char>(acc)};
      acc = 0;
    }
  }
  if (pad == 2) out += static_cast<char>(acc >> 4);
  if (pad == 1) out += {static_cast<char>(acc >> 10), static_cast<char>(acc >> 2)};
  return out;
}

bool LooksLikeTimestamp(std::string_view s) {
  return s.size() > 4 && AllDigits(s.substr(0, 4)) && s[4] == '-';
}

}  // namespace

Result<Scalar> ResolveScalar(std::string_view tag, std::string_view value, bool plain_implicit) {
  if (tag.empty() && !plain_implicit) return Scalar{.text = std::string(value)};
  const std::string t = ShortTag(tag);
  if (t == "!!binary") {
    auto bytes = Base64(value);
    if (!bytes) return MakeError(Cat("!!binary ", Quote(value), " is not base64"));
    return Scalar{.text = std::move(*bytes)};
  }
  if (!Resolvable(t) || t == "!!str") return Scalar{.text = std::string(value)};
  if (t == "!!timestamp" && LooksLikeTimestamp(value)) return Scalar{.text = std::string(value)};
  Scalar s = Implicit(value);
  const std::string_view got = TagOf(s.type);
  if (t.empty() || t == got) return s;
  if (t == "!!float" && s.type == Type::kInt) {  // go-yaml turns an int into a float here
    s.type = Type::kFloat;
    s.f = static_cast<double>(s.i);
    s.from_int = true;
    return s;
  }
  return MakeError(
      Cat(Quote(value), " is not a ", Quote(t), " (YAML 1.1 reads it as a ", got, ")"));
}

namespace {

// Go's shortest decimal of f ('e' form): the fewest digits that read back as
// f, the closest such; printf rounds correctly, so the first precision that
// reads back is it.
std::string Shortest(double f) {
  std::array<char, 40> buf{};
  for (int digits = 1; digits < 17; ++digits) {
    std::snprintf(buf.data(), buf.size(), "%.*e", digits - 1, f);
    if (std::strtod(buf.data(), nullptr) == f) return buf.data();
  }
  std::snprintf(buf.data(), buf.size(), "%.16e", f);
  return buf.data();
}

}  // namespace

bool JsonWritable(const Scalar& s) { return s.type != Type::kFloat || std::isfinite(s.f); }

// Go's json.Marshal writes a float64 as its shortest decimal, in 'f' form
// from 1e-6 up to 1e21; encoding/json reads a uint64 only from digits.
Result<uint64_t> JsonUint64(const Scalar& s) {
  switch (s.type) {
    case Type::kInt:
      if (s.i < 0) return MakeError(Cat(Quote(s.text), " is negative"));
      return static_cast<uint64_t>(s.i);
    case Type::kUint:
      return s.u;
    case Type::kFloat:
      break;
    default:
      return MakeError(
          Cat(Quote(s.text), " is not a number (YAML 1.1 reads it as a ", TagOf(s.type), ")"));
  }
  const double a = std::fabs(s.f);
  if (!std::isfinite(s.f)) return MakeError(Cat(Quote(s.text), " is not a finite number"));
  if (std::signbit(s.f)) return MakeError(Cat(Quote(s.text), " is negative"));
  if (s.f == 0) return uint64_t{0};
  if (a < 1e-6 || a >= 1e21) return MakeError(Cat(Quote(s.text), " is not a whole number"));
  const std::string sci = Shortest(s.f);
  const size_t e = sci.find('e');
  std::string whole;  // the digits: "1.5e+03" -> "15"
  for (char c : sci.substr(0, e)) {
    if (c != '.') whole += c;
  }
  const int exp = std::atoi(std::string(sci.substr(e + 1)).c_str());
  if (exp + 1 < static_cast<int>(whole.size())) {
    return MakeError(Cat(Quote(s.text), " is not a whole number"));
  }
  whole.append(static_cast<size_t>(exp + 1) - whole.size(), '0');
  auto n = GoParseUint(whole, 10);
  if (!n) return MakeError(Cat(Quote(s.text), " is over 18446744073709551615 (unlimited)"));
  return *n;
}

bool ExactWhole(std::string_view text, uint64_t& out) {
  std::string s = WithoutUnderscores(text);
  if (!s.empty() && s[0] == '+') s.erase(0, 1);
  const size_t e = s.find_first_of("eE");
  long exp = 0;
  if (e != std::string::npos) {
    std::string_view x = std::string_view(s).substr(e + 1);
    const bool neg = x.starts_with('-');
    if (neg || x.starts_with('+')) x.remove_prefix(1);
    if (!AllDigits(x)) return false;
    for (char c : x) exp = std::min(exp * 10 + (c - '0'), 100000L);
    if (neg) exp = -exp;
    s.resize(e);
  }
  const size_t dot = s.find('.');
  std::string digits = s.substr(0, dot);
  const long point = static_cast<long>(digits.size()) + exp;
  if (dot != std::string::npos) digits += s.substr(dot + 1);
  if (!AllDigits(digits)) return false;
  // digits[0, point) is the whole part; everything after must be 0.
  std::string whole;
  for (long i = 0; i < static_cast<long>(digits.size()); ++i) {
    if (i >= point && digits[static_cast<size_t>(i)] != '0') return false;
    if (i < point) whole += digits[static_cast<size_t>(i)];
  }
  if (point > static_cast<long>(digits.size())) {
    if (point > 40) return digits.find_first_not_of('0') == std::string::npos && (out = 0, true);
    whole.append(static_cast<size_t>(point) - digits.size(), '0');
  }
  const size_t nz = whole.find_first_not_of('0');
  whole = nz == std::string::npos ? "0" : whole.substr(nz);
  auto n = GoParseUint(whole, 10);
  if (!n) return false;
  out = *n;
  return true;
}

}  // namespace ocirlimit::yaml
