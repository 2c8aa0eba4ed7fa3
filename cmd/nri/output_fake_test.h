// Test support for the NRI unit tests: an Output that records what the
// plugin says and logs, and a config that must parse.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/config.h"
#include "nri/plugin.h"

namespace ocirlimit::nri {

class RecordingOutput : public Output {
 public:
  void Say(const std::string& msg) override { said.push_back(msg); }
  void LogLine(const Config&, const std::string& line) override { lines.push_back(line); }
  std::vector<std::string> said;
  std::vector<std::string> lines;
};

inline Config MustParse(const std::string& toml) {
  auto c = ParseConfig(toml, "test.toml");
  EXPECT_TRUE(c.ok()) << c.error().Text();
  return c.ok() ? *c : Config{};
}

}  // namespace ocirlimit::nri
