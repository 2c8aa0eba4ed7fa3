#include "ulimit_gen.h"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string_view>
#include <vector>

namespace ocirlimit::peers {
namespace {

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  std::string Value() {
    const int style = Int(3);
    std::string out =
        Pick({"", "", "", "---\n", "--- ", "%YAML 1.1\n---\n", "\xEF\xBB\xBF", "# pod\n", "\n"});
    const int n = Int(4);
    if (style == 0) {
      out += "[";
      for (int i = 0; i < n; ++i) out += (i ? Pick({", ", ",", " ,\n  "}) : "") + Flow();
      out += Pick({"]", "]", ",]", "]\n", "] # end\n"});
    } else {
      for (int i = 0; i < n; ++i) out += style == 1 ? Block() : "- " + Flow() + Eol();
    }
    if (Int(20) == 0) out += Pick({"...\n", "---\n[]\n", "--- ~\n", "x"});
    if (Int(30) == 0) out = Pick({"null", "~", "[]", "", "{type: nofile}", "nofile"});
    return out;
  }

 private:
  int Int(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  std::string Pick(std::initializer_list<std::string_view> l) {
    return std::string(*(l.begin() + Int(static_cast<int>(l.size()))));
  }
  std::string Eol() { return Pick({"\n", "\n", "\n", "\r\n", " # c\n", "  \n"}); }

  std::string Digits() {
    switch (Int(6)) {
      case 0:
        return std::to_string(rng_());
      case 1:
        return std::to_string(rng_() % 100000);
      case 2:
        return Pick({"18446744073709551615", "18446744073709551616", "9223372036854775807",
                     "9223372036854775808", "9007199254740993", "0", "1"});
      default:
        return std::to_string(rng_() % 5000);
    }
  }

  std::string Number() {
    const std::string d = Digits();
    char hex[40];
    std::snprintf(hex, sizeof hex, "%llx", std::strtoull(d.c_str(), nullptr, 10));
    switch (Int(22)) {
      case 0:
        return "0x" + std::string(hex);
      case 1:
        return Pick({"0o17", "0O777", "0b101", "0B11", "-0b1", "0b+1", "0x_1F", "0X"});
      case 2:
        return "0" + d;
      case 3:
        return d.size() > 1 ? d.substr(0, 1) + "_" + d.substr(1) : d + "_";
      case 4:
        return "+" + d;
      case 5:
        return "-" + d;
      case 6:
        return d + Pick({".0", ".", ".5", ".00", "e0", "e1", "E2", "e-1", "e+3"});
      case 7:
        return Pick({"1e3", "1.5e3", ".5e1", "1e19", "1e20", "1e21", "1e-7", "1e400", "1e-400",
                     "-0.0", "-0", ".inf", ".NaN", "2.5", "18446744073709551615.0",
                     "18446744073709550000.0", "9007199254740993.0"});
      case 8:
        return Pick({"\"", "'"}) + d + Pick({"\"", "'"});
      case 9:
        return Pick({"~", "null", "Null", "", "NULL", "yes", "off", "true", "unlimited", "1G",
                     "2001-01-01", "1:30"});
      case 10:
        return Pick({"!!int ", "!!str ", "!!float ", "! ", "!!int \"", "!!null "}) + d;
      case 11:
        return Pick({"&n ", "*n", "[1]", "{a: 1}", "|\n    5", ">-\n    5"}) + (Int(2) ? d : "");
      default:
        return d;
    }
  }

  std::string Type() {
    return Pick({"nofile",
                 "NOFILE",
                 "RLIMIT_NOFILE",
                 "rlimit_memlock",
                 "Memlock",
                 "core",
                 "nproc",
                 "stack",
                 "RLIMIT_AS",
                 "cpu",
                 "rttime",
                 "sigpending",
                 "msgqueue",
                 "\"nofile\"",
                 "'core'",
                 "RLIMIT_GPU",
                 "ULIMIT_CORE",
                 "~",
                 "7",
                 "",
                 "\xC5\xBFtack",
                 "[nofile]",
                 "!!str nofile",
                 "RLIMIT_RLIMIT_CORE",
                 "rlimit_",
                 "no?file",
                 "?nofile",
                 "\"no?file\""});
  }

  std::string Key(std::string_view field) {
    std::string k(field);
    switch (Int(12)) {
      case 0:
        for (auto& c : k) c = static_cast<char>(c - 'a' + 'A');
        return k;
      case 1:
        k[0] = static_cast<char>(k[0] - 'a' + 'A');
        return k;
      case 2:
        return "\"" + k + "\"";
      case 3:
        return field == "soft" ? "\xC5\xBFoft" : "'" + k + "'";
      default:
        return k;
    }
  }

  // The pairs of one entry: each field usually once, sometimes missing,
  // twice, glued to its value, or beside an unknown key.
  std::vector<std::pair<std::string, std::string>> Pairs() {
    std::vector<std::pair<std::string, std::string>> out;
    for (std::string_view f : {"type", "soft", "hard"}) {
      if (Int(14) == 0) continue;
      const std::string v = f == "type" ? Type() : Number();
      out.emplace_back(Key(f), v);
      if (Int(25) == 0) out.emplace_back(Key(f), f == "type" ? Type() : Number());
    }
    if (Int(8) == 0)
      out.emplace_back(
          Pick({"path", "x", "7", "true", "~", "<<", "nofile"}),
          Pick({"1", "y", "{soft: 3}", "[]", ".nan", "~", "a?b", "?c", "[d?]", "e:f", "'g?'"}));
    for (size_t i = out.size(); i > 1; --i) {
      if (Int(4) == 0) std::swap(out[i - 1], out[static_cast<size_t>(Int(static_cast<int>(i)))]);
    }
    return out;
  }

  std::string Colon() { return Pick({": ", ": ", ": ", ":", ":\t", " : ", ":  "}); }

  std::string Flow() {
    std::string out = "{";
    bool first = true;
    for (const auto& [k, v] : Pairs()) {
      out += (first ? "" : Pick({", ", ",", " , "})) + k + Colon() + v;
      first = false;
    }
    return out + Pick({"}", "}", ",}", " }"});
  }

  std::string Block() {
    const std::string indent = Pick({"", "", "  "});
    const std::string inner = indent + Pick({"  ", "  ", "   ", " ", "\t"});
    std::string out = indent + Pick({"- ", "- ", "-\n" + inner, "-  "});
    bool first = true;
    for (const auto& [k, v] : Pairs()) {
      out += (first ? "" : inner) + k + Colon() + v + Eol();
      first = false;
    }
    return first ? out + Eol() : out;
  }

  std::mt19937_64 rng_;
};

}  // namespace

std::string RandomUlimitYaml(uint64_t seed) { return Gen(seed).Value(); }

std::string CorpusLine(const std::string& value) {
  std::string out = "\"";
  for (unsigned char c : value) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '"' || c == '\\') {
      out += std::string("\\") + static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

bool FromCorpusLine(const std::string& line, std::string& value) {
  if (line.size() < 2 || line.front() != '"' || line.back() != '"') return false;
  value.clear();
  for (size_t i = 1; i + 1 < line.size(); ++i) {
    if (line[i] != '\\') {
      value += line[i];
      continue;
    }
    const char e = line[++i];
    if (e == 'x') {
      value += static_cast<char>(std::stoi(line.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      value += e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e;
    }
  }
  return true;
}

}  // namespace ocirlimit::peers
