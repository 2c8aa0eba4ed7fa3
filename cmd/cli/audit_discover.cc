#include "cli/audit_discover.h"

#include <algorithm>
#include <cerrno>
#include <initializer_list>
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

// What a user's files may not say: the node's facts and the pod.
void DropNodeFacts(ContainerFacts& f) {
  f.devices.clear();
  f.annotations.clear();
  f.pod_namespace.reset();
  f.pod_name.reset();
  f.disputes.clear();
}

// The first uid of `uids` that is not root's, else 0.
uid_t OtherThanRoot(std::initializer_list<uid_t> uids) {
  for (uid_t u : uids) {
    if (u != 0) return u;
  }
  return 0;
}

Result<ContainerFacts> ReadFacts(FsOps& fs, FoundContainer& c, const std::string& dir) {
  auto read = fs.ReadBeneath(dir, "config.json", kMaxSpecBytes);
  if (!read) return read.error();
  // A user's state names only that user's bundle: never one of root's
  // (nor another user's) files for root to read.
  if (c.owner != 0 && (read->dir_owner != c.owner || read->owner != c.owner)) {
    const uid_t other = read->dir_owner != c.owner ? read->dir_owner : read->owner;
    return MakeError(Cat(Quote(dir), " is owned by uid ", std::to_string(other), ", not by uid ",
                         std::to_string(c.owner), ", who owns the container's state: not read"));
  }
  const uid_t owner = OtherThanRoot({read->dir_owner, read->owner});
  const std::string path = dir + "/config.json";
  auto spec = ParseJsonObject(read->text, path);
  if (!spec) return spec.error();
  auto facts = FactsFromSpec(*spec);
  if (!facts) return facts.error().Wrap(Quote(path));
  if (owner != 0 || c.owner != 0) {
    c.facts_trusted = false;
    DropNodeFacts(*facts);
  }
  return facts;
}

// The state file's text and who owns the root and the file.
Result<std::string> ReadState(FsOps& fs, FoundContainer& c, std::string_view name) {
  auto read = fs.ReadBeneath(c.root, c.id + "/" + std::string(name), kMaxRuntimeStateBytes);
  if (!read) return read.error();
  c.owner = OtherThanRoot({read->dir_owner, read->owner});
  c.facts_trusted = c.owner == 0;
  return std::move(read->text);
}

void ReadContainerFacts(FsOps& fs, FoundContainer& c, bool crun, bool has_copy) {
  std::optional<Error> first;
  if (!c.state->bundle.empty()) {
    auto facts = ReadFacts(fs, c, c.state->bundle);
    if (facts) {
      c.facts = std::move(*facts);
      return;
    }
    first = facts.error();
  }
  if (crun && has_copy) {
    auto facts = ReadFacts(fs, c, c.root + "/" + c.id);
    if (facts) {
      c.facts = std::move(*facts);
      return;
    }
    if (!first) first = facts.error();
  }
  c.problem = first ? Cat("no bundle: ", first->Text()) : "no bundle: the runtime recorded none";
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
  auto text = ReadState(fs, c, runc ? kRuncStateFile : kCrunStateFile);
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
  if (need_facts) ReadContainerFacts(fs, c, crun, HasFile(*entries, "config.json"));
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
