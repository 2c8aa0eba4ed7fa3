#include "cli/audit_discover.h"

#include <algorithm>
#include <cerrno>
#include <set>
#include <utility>

#include "adapters/oci/facts.h"
#include "adapters/oci/spec.h"
#include "core/text.h"

namespace ocirlimit {
namespace {

constexpr size_t kMaxSpecBytes = 64 << 20;

// "/a/*/b" -> every "/a/X/b" with X a subdirectory of /a; "/a" -> "/a".
void Expand(FsOps& fs, const std::string& pattern, std::vector<std::string>& out) {
  const size_t star = pattern.find("/*");
  if (star == std::string::npos) {
    out.push_back(pattern);
    return;
  }
  const std::string parent = pattern.substr(0, star);
  const std::string rest = pattern.substr(star + 2);
  auto entries = fs.ListDir(parent.empty() ? "/" : parent);
  if (!entries) return;
  std::sort(entries->begin(), entries->end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  for (const auto& e : *entries) {
    if (e.dir) Expand(fs, Cat(parent, "/", e.name, rest), out);
  }
}

bool HasFile(const std::vector<FsOps::Entry>& entries, std::string_view name) {
  return std::any_of(entries.begin(), entries.end(),
                     [&](const auto& e) { return !e.dir && e.name == name; });
}

Result<ContainerFacts> ReadFacts(FsOps& fs, const std::string& path) {
  auto text = fs.ReadFile(path, kMaxSpecBytes);
  if (!text) return text.error();
  auto spec = ParseJsonObject(*text, path);
  if (!spec) return spec.error();
  auto facts = FactsFromSpec(*spec);
  if (!facts) return facts.error().Wrap(Quote(path));
  return facts;
}

void ReadContainer(FsOps& fs, FoundContainer& c, bool need_facts) {
  const std::string dir = c.root + "/" + c.id;
  auto entries = fs.ListDir(dir);
  if (!entries) {
    c.problem = Cat("unreadable: ", entries.error().Text());
    return;
  }
  const bool runc = HasFile(*entries, kRuncStateFile);
  const bool crun = !runc && HasFile(*entries, kCrunStateFile);
  if (!runc && !crun) {
    c.problem = "no runtime state (neither state.json nor status)";
    return;
  }
  const std::string file = dir + "/" + std::string(runc ? kRuncStateFile : kCrunStateFile);
  auto text = fs.ReadFile(file, kMaxRuntimeStateBytes);
  if (!text) {
    c.problem = Cat("unreadable: ", text.error().Text());
    return;
  }
  auto state = runc ? ParseRuncState(*text, file) : ParseCrunStatus(*text, file);
  if (!state) {
    c.problem = Cat("unreadable: ", state.error().Text());
    return;
  }
  c.state = std::move(*state);
  if (!need_facts) return;
  std::optional<Error> first;
  if (!c.state->bundle.empty()) {
    auto facts = ReadFacts(fs, c.state->bundle + "/config.json");
    if (facts) {
      c.facts = std::move(*facts);
      return;
    }
    first = facts.error();
  }
  if (crun && HasFile(*entries, "config.json")) {
    auto facts = ReadFacts(fs, dir + "/config.json");
    if (facts) {
      c.facts = std::move(*facts);
      return;
    }
    if (!first) first = facts.error();
  }
  c.problem = first ? Cat("no bundle: ", first->Text()) : "no bundle: the runtime recorded none";
}

}  // namespace

Discovery DiscoverContainers(FsOps& fs, const std::vector<std::string>& patterns, bool need_facts) {
  std::vector<std::string> expanded;
  for (const auto& p : patterns) Expand(fs, p, expanded);
  Discovery out;
  std::set<std::string> seen;
  for (auto root : expanded) {
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    if (!seen.insert(root).second) continue;
    auto entries = fs.ListDir(root);
    if (!entries) {
      // A runtime that is not installed or never ran; anything else is said.
      const int err = entries.error().err;
      if (err != ENOENT && err != ENOTDIR) out.unreadable.push_back(entries.error().Text());
      continue;
    }
    out.roots.push_back(root);
    std::sort(entries->begin(), entries->end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    for (const auto& e : *entries) {
      if (!e.dir || e.name.starts_with(".")) continue;  // lock files, crun's .crun
      FoundContainer c;
      c.root = root;
      c.id = e.name;
      ReadContainer(fs, c, need_facts);
      out.containers.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace ocirlimit
