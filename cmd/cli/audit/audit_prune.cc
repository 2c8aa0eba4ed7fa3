#include "cli/audit/audit_prune.h"

#include <cerrno>
#include <set>

#include "formats/text.h"

namespace ocirlimit {
namespace {

bool Absent(const Error& e) { return e.err == ENOENT || e.err == ENOTDIR; }

// Every root `pattern` names ("/*" is each directory there); a parent that
// cannot be listed (other than absent) is returned in `error`.
void Expand(FsOps& fs, const std::string& pattern, std::vector<std::string>& out,
            std::string& error) {
  const size_t star = pattern.find("/*");
  if (star == std::string::npos) {
    out.push_back(pattern);
    return;
  }
  const std::string parent = pattern.substr(0, star);
  auto entries = fs.ListDir(parent.empty() ? "/" : parent);
  if (!entries) {
    if (!Absent(entries.error())) error = entries.error().Text();
    return;
  }
  const std::string rest = pattern.substr(star + 2);
  for (const auto& e : *entries) {
    if (e.dir) Expand(fs, Cat(parent, "/", e.name, rest), out, error);
  }
}

// The container ids present under every root, or the first root that could
// not be listed.
Result<std::set<std::string>> PresentIds(FsOps& fs, const std::vector<std::string>& patterns) {
  std::vector<std::string> roots;
  std::string error;
  for (const auto& p : patterns) Expand(fs, p, roots, error);
  if (!error.empty()) return MakeError(error);
  std::set<std::string> present;
  for (const auto& root : roots) {
    auto entries = fs.ListDir(root);
    if (!entries) {
      if (Absent(entries.error())) continue;
      return entries.error();
    }
    for (const auto& e : *entries) present.insert(e.name);
  }
  return present;
}

}  // namespace

std::string PruneText(const std::vector<std::string>& pruned, const std::string& not_proven) {
  std::string out;
  for (const auto& id : pruned) {
    out += Cat("pruned the decision record of ", TableCell(id), ", gone from every state root\n");
  }
  if (!not_proven.empty()) out += Cat("no decision record pruned: ", OneLine(not_proven), "\n");
  return out;
}

PruneReport PruneDecisions(DecisionStore& store, FsOps& fs,
                           const std::vector<std::string>& patterns, std::time_t now) {
  PruneReport r;
  auto ids = store.Ids();
  if (!ids) {
    r.not_proven = ids.error().Wrap("decision records").Text();
    return r;
  }
  if (ids->empty()) return r;
  auto present = PresentIds(fs, patterns);
  if (!present) {
    r.not_proven = present.error().Wrap("a state root").Text();
    return r;
  }
  for (const auto& id : *ids) {
    if (present->contains(id)) continue;
    auto d = store.Read(id);
    if (!d) {
      r.kept.push_back(Cat(id, ": ", d.error().Text()));
      continue;
    }
    if (!*d) continue;  // removed meanwhile
    if (!OldEnoughToPrune(**d, now)) {
      r.kept.push_back(Cat(id, ": recorded at ", Quote((*d)->time), ", within ",
                           std::to_string(kPruneGrace), " s: a create may be in flight"));
      continue;
    }
    if (auto removed = store.Remove(id); !removed) {
      r.kept.push_back(Cat(id, ": ", removed.error().Text()));
      continue;
    }
    r.pruned.push_back(id);
  }
  return r;
}

}  // namespace ocirlimit
