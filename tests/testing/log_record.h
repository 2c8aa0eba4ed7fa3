// A log line is a record: a value a container's author controls can neither
// end it nor forge an item in it. HostileRequest() is such a value (a request
// annotation, oci-rlimit.io/rlimits); ExpectOneEscapedRecord() checks the
// log-file a program wrote after deciding on it.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ocirlimit::testsupport {

// A quote and a backslash (to end a quoted value and forge
// ` level=error msg="..."`), U+2028 and U+0085 (line breaks to a viewer),
// U+202E (reorders what a terminal shows).
inline std::string HostileRequest() {
  return std::string("memlock=1M\" level=error msg=\"forged \\ ") + "\u2028" + "\u0085" + "\u202e" +
         "x";
}

// The NAME=VALUE items of a log line, split on spaces outside quoted values.
inline std::vector<std::string> LogItems(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '\\' && i + 1 < line.size()) {
      out.back() += line.substr(i++, 2);
      continue;
    }
    if (c == '"') quoted = !quoted;
    if (c == ' ' && !quoted) {
      out.emplace_back();
      continue;
    }
    out.back() += c;
  }
  return out;
}

// `path` is exactly one line (one trailing newline) with no raw U+2028,
// U+2029, U+0085 or U+202E, HostileRequest()'s characters escaped in it
// (\", \\, \u2028, \u0085, \u202e), and its forged items inside a value.
inline void ExpectOneEscapedRecord(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  std::string log = bytes.str();
  ASSERT_TRUE(log.ends_with("\n")) << path << ": [" << log << "]";
  log.pop_back();
  EXPECT_EQ(log.find('\n'), std::string::npos) << "more than one line: " << log;
  for (const char* raw : {"\u2028", "\u2029", "\u0085", "\u202e"}) {
    EXPECT_EQ(log.find(raw), std::string::npos) << "a raw code point in: " << log;
  }
  for (const char* escaped : {"\\\"", "\\\\", "\\u2028", "\\u0085", "\\u202e"}) {
    EXPECT_NE(log.find(escaped), std::string::npos) << "no " << escaped << " in: " << log;
  }
  for (const auto& item : LogItems(log)) {
    EXPECT_FALSE(item.starts_with("level=") || item.starts_with("msg=")) << item << " in: " << log;
  }
}

}  // namespace ocirlimit::testsupport
