#include "adapters/engines/systemd.h"

#include <map>
#include <sstream>
#include <string_view>

#include "adapters/engines/constants.h"
#include "formats/text.h"

namespace ocirlimit::engines {
namespace {

// Unit search order, highest priority first, as systemd reads them.
const std::vector<std::string>& UnitDirs() {
  static const std::vector<std::string> kDirs = {"/etc/systemd/system", "/run/systemd/system",
                                                 "/usr/lib/systemd/system", "/lib/systemd/system"};
  return kDirs;
}

// Calls `on_value` with the value of each `KEY=value` line in a [Service]
// section, in the order systemd reads them (unit, then drop-ins).
template <class OnValue>
void ForEachServiceAssignment(const std::vector<std::string>& unit_texts, std::string_view key,
                              const OnValue& on_value) {
  for (const auto& text : unit_texts) {
    std::istringstream lines(text);
    std::string line;
    bool in_service = false;
    while (std::getline(lines, line)) {
      std::string_view l = Trim(line);
      if (l.starts_with("[")) {
        in_service = l == "[Service]";
        continue;
      }
      if (!in_service || !l.starts_with(key)) continue;
      std::string_view rest = Trim(l.substr(key.size()));
      if (!rest.starts_with("=")) continue;
      on_value(Trim(rest.substr(1)));
    }
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> UnitFiles(NodeFiles& fs, const std::string& unit) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& dir : UnitDirs()) {
    if (auto t = fs.ReadFile(Cat(dir, "/", unit))) {
      files.emplace_back(Cat(dir, "/", unit), *t);
      break;
    }
  }
  std::map<std::string, std::string> dropins;
  for (auto dir = UnitDirs().rbegin(); dir != UnitDirs().rend(); ++dir) {
    const std::string d = *dir + "/" + unit + ".d";
    for (const auto& name : fs.ListDir(d)) {
      if (name.ends_with(".conf")) dropins[name] = Cat(d, "/", name);
    }
  }
  for (const auto& [name, path] : dropins) {
    if (auto t = fs.ReadFile(path)) files.emplace_back(path, *t);
  }
  return files;
}

std::optional<std::string> LimitMemlockFromUnits(const std::vector<std::string>& unit_texts) {
  std::optional<std::string> value;
  ForEachServiceAssignment(unit_texts, "LimitMEMLOCK", [&](std::string_view v) {
    if (v.empty()) {
      value.reset();
    } else {
      value = std::string(v);
    }
  });
  return value;
}

std::optional<std::string> EnvironmentPathFromUnits(const std::vector<std::string>& unit_texts) {
  return EnvironmentFromUnits(unit_texts, "PATH");
}

std::optional<std::string> EnvironmentFromUnits(const std::vector<std::string>& unit_texts,
                                                std::string_view name) {
  const std::string prefix = std::string(name) + "=";
  std::optional<std::string> value;
  ForEachServiceAssignment(unit_texts, "Environment", [&](std::string_view rest) {
    if (rest.empty()) {  // Environment= resets the list
      value.reset();
      return;
    }
    // Space-separated assignments, each optionally in double quotes.
    size_t i = 0;
    while (i < rest.size()) {
      while (i < rest.size() && rest[i] == ' ') ++i;
      std::string word;
      bool quoted = i < rest.size() && rest[i] == '"';
      if (quoted) ++i;
      while (i < rest.size() && (quoted ? rest[i] != '"' : rest[i] != ' ')) word += rest[i++];
      if (quoted && i < rest.size()) ++i;
      if (word.starts_with(prefix)) value = word.substr(prefix.size());
    }
  });
  return value;
}

std::string ServicePath(NodeFiles& fs, const std::string& unit) {
  std::vector<std::string> texts;
  for (const auto& [path, text] : UnitFiles(fs, unit)) texts.push_back(text);
  return EnvironmentPathFromUnits(texts).value_or(std::string(kSystemdDefaultPath));
}

}  // namespace ocirlimit::engines
