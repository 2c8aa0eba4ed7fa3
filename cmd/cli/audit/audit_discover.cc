#include "cli/audit/audit_discover.h"

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "adapters/engines/containerd_meta.h"
#include "adapters/oci/facts.h"
#include "adapters/oci/json_members.h"
#include "adapters/oci/runtime_state.h"
#include "adapters/oci/spec.h"
#include "formats/text.h"

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

// Whom a file the container's state names must belong to: the state's
// owner, when a user's; else whoever owns the directory it is in.
std::optional<uid_t> OwnerOf(const FoundContainer& c) {
  return c.owner != 0 ? std::optional<uid_t>(c.owner) : std::nullopt;
}

Result<ContainerFacts> ReadFacts(FsOps& fs, FoundContainer& c, const std::string& dir) {
  // A user's state names only that user's bundle: never one of root's (nor
  // another user's) files for root to read. Root's state may name anyone's:
  // read as its owner's, without node facts unless root's.
  auto read = fs.ReadTrusted(dir, {"config.json"}, OwnerOf(c), kMaxSpecBytes);
  if (!read) return read.error();
  const uid_t owner = read->owner;
  auto facts = FactsFromSpecText(read->text, dir + "/config.json");
  if (!facts) return facts.error();
  if (owner != 0 || c.owner != 0) {
    c.facts_trusted = false;
    DropNodeFacts(*facts);
  }
  return facts;
}

// The state file's text, and whose it is (the state root's one owner).
Result<std::string> ReadState(FsOps& fs, const FsOps::TrustedRoot& root, FoundContainer& c,
                              std::string_view name) {
  // The one owner of the state root owns all of it: root, or a rootless user.
  auto read = fs.ReadTrustedIn(root, {c.id, std::string(name)}, kMaxRuntimeStateBytes);
  if (!read) return read.error();
  c.owner = read->owner;
  c.facts_trusted = c.owner == 0;
  return std::move(read->text);
}

// `has_copy`: whether crun's state directory holds a copy of config.json.
template <class HasCopy>
void ReadContainerFacts(FsOps& fs, FoundContainer& c, bool crun, HasCopy has_copy) {
  std::optional<Error> first;
  if (!c.state->bundle.empty()) {
    auto facts = ReadFacts(fs, c, c.state->bundle);
    if (facts) {
      c.facts = std::move(*facts);
      return;
    }
    first = facts.error();
  }
  if (crun && has_copy()) {
    auto facts = ReadFacts(fs, c, c.root + "/" + c.id);
    if (facts) {
      c.facts = std::move(*facts);
      return;
    }
    if (!first) first = facts.error();
  }
  c.problem = first ? Cat("no bundle: ", first->Text()) : "no bundle: the runtime recorded none";
}

// The state `text` read from the container's `name` file, parsed.
void TakeState(FoundContainer& c, bool runc, const std::string& text) {
  const std::string file = Cat(c.root, "/", c.id, "/", runc ? kRuncStateFile : kCrunStateFile);
  auto state = runc ? ParseRuncState(text, file) : ParseCrunStatus(text, file);
  if (!state) {
    c.problem = Cat("unreadable: ", state.error().Text());
    return;
  }
  c.state = std::move(*state);
}

// `entries`: the container directory's, listed once by the caller.
void ReadContainer(FsOps& fs, const FsOps::TrustedRoot& root, FoundContainer& c,
                   const Result<std::vector<FsOps::Entry>>& entries, bool need_facts) {
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
  auto text = ReadState(fs, root, c, runc ? kRuncStateFile : kCrunStateFile);
  if (!text) {
    c.problem = Cat("unreadable: ", text.error().Text());
    return;
  }
  TakeState(c, runc, *text);
  if (c.state && need_facts) {
    ReadContainerFacts(fs, c, crun, [&] { return HasFile(*entries, "config.json"); });
  }
}

// A container's state file read at once, without listing its directory:
// runc's state.json, else (none there) crun's status. False, with `c`
// untouched, when neither reads: the caller lists the directory and
// decides as ReadContainer does (a namespace, no state, an unreadable one).
bool ReadContainerUnlisted(FsOps& fs, const FsOps::TrustedRoot& root, FoundContainer& c,
                           bool need_facts) {
  bool runc = true;
  auto text = ReadState(fs, root, c, kRuncStateFile);  // touches `c` only once read
  if (!text && text.error().err == ENOENT) {
    runc = false;
    text = ReadState(fs, root, c, kCrunStateFile);
  }
  if (!text) return false;
  TakeState(c, runc, *text);
  if (c.state && need_facts) {
    ReadContainerFacts(fs, c, !runc, [&] {
      auto listed = fs.ListDir(c.root + "/" + c.id);
      return listed && HasFile(*listed, "config.json");
    });
  }
  return true;
}

constexpr size_t kMaxOptionsBytes = 1 << 16;
constexpr size_t kMaxMetaDbBytes = size_t{512} << 20;
constexpr std::string_view kContainerdSandboxId = "io.kubernetes.cri.sandbox-id";
constexpr std::string_view kCrioSandboxId = "io.kubernetes.cri-o.SandboxID";
constexpr std::string_view kCrioHandler = "io.kubernetes.cri-o.RuntimeHandler";

// containerd's runc shim writes its runtime options beside the bundle:
// {"binary_name":"/usr/local/bin/oci-rlimit-runtime","root":"..."}. Read
// only as the state's owner wrote it: never a FIFO, nor through a symlink.
void ReadOrigin(FsOps& fs, FoundContainer& c) {
  if (!c.state || c.state->bundle.empty()) return;
  const std::string path = c.state->bundle + "/options.json";
  auto read = fs.ReadTrusted(c.state->bundle, {"options.json"}, c.owner, kMaxOptionsBytes);
  if (!read) return;
  static const std::vector<JsonMember> kBinaryName = {{"binary_name"}};
  auto j = ParseJsonMembers(read->text, path, kBinaryName);
  if (!j) return;
  auto b = j->find("binary_name");
  if (b != j->end() && b->is_string()) c.binary_name = b->get<std::string>();
}

// Keys the runtimes write themselves: never taken from the sandbox.
bool RuntimeOwned(std::string_view key) {
  return key.starts_with("io.kubernetes.cri.") || key.starts_with("io.kubernetes.cri-o.") ||
         key.starts_with("io.kubernetes.pod.") || key.starts_with("io.kubernetes.container.");
}

std::string Lookup(const std::map<std::string, std::string>& m, std::string_view key) {
  auto it = m.find(std::string(key));
  return it == m.end() ? "" : it->second;
}

// Links each container of one root (containers [from, end)) to its sandbox.
void LinkSandboxes(std::vector<FoundContainer>& cs, size_t from) {
  std::map<std::string, size_t> by_id;
  for (size_t i = from; i < cs.size(); ++i) by_id[cs[i].id] = i;
  for (size_t i = from; i < cs.size(); ++i) {
    if (!cs[i].facts) continue;
    auto& mine = cs[i].facts->annotations;
    cs[i].runtime_handler = Lookup(mine, kCrioHandler);
    const std::string sandbox = SandboxIdOf(mine);
    auto it = by_id.find(sandbox);
    if (sandbox.empty() || sandbox == cs[i].id || it == by_id.end()) continue;
    const FoundContainer& sb = cs[it->second];
    if (!sb.facts) continue;
    for (const auto& [k, v] : sb.facts->annotations) {
      if (!RuntimeOwned(k)) mine.emplace(k, v);
    }
    if (cs[i].runtime_handler.empty()) {
      cs[i].runtime_handler = Lookup(sb.facts->annotations, kCrioHandler);
    }
  }
}

// A directory with no state of its own whose subdirectories hold a
// runtime's state: a namespace (containerd's runc root), not a container.
bool IsNamespaceDir(FsOps& fs, const std::string& dir,
                    const Result<std::vector<FsOps::Entry>>& entries) {
  if (!entries || HasFile(*entries, kRuncStateFile) || HasFile(*entries, kCrunStateFile)) {
    return false;
  }
  return std::any_of(entries->begin(), entries->end(), [&](const FsOps::Entry& e) {
    if (!e.dir) return false;
    auto inner = fs.ListDir(dir + "/" + e.name);
    return inner && (HasFile(*inner, kRuncStateFile) || HasFile(*inner, kCrunStateFile));
  });
}

}  // namespace

std::string SandboxIdOf(const std::map<std::string, std::string>& annotations) {
  std::string id = Lookup(annotations, kContainerdSandboxId);
  return id.empty() ? Lookup(annotations, kCrioSandboxId) : id;
}

void AddContainerdPodAnnotations(FsOps& fs, const std::string& containerd_root, Discovery& d) {
  constexpr std::string_view kTask = "/io.containerd.runtime.v2.task/";
  const std::string db_path = containerd_root + std::string(kContainerdMetaDb);
  std::optional<std::string> db;
  std::map<std::string, PodAnnotations> by_ns;
  for (auto& c : d.containers) {
    if (!c.facts || !c.state) continue;
    const std::string sandbox = Lookup(c.facts->annotations, kContainerdSandboxId);
    const size_t at = c.state->bundle.find(kTask);
    if (sandbox.empty() || sandbox == c.id || at == std::string::npos) continue;
    const std::string rest = c.state->bundle.substr(at + kTask.size());
    const std::string ns = rest.substr(0, rest.find('/'));
    if (!db) {
      auto text = fs.ReadFile(db_path, kMaxMetaDbBytes);
      if (!text) {
        d.notes.push_back("pods' annotations not read (containerd keeps them only there): " +
                          text.error().Text());
        return;
      }
      db = std::move(*text);
    }
    auto it = by_ns.find(ns);
    if (it == by_ns.end()) {
      auto read = ReadPodAnnotations(*db, ns);
      if (!read) {
        d.notes.push_back(
            Cat("pods' annotations not read: ", Quote(db_path), ": ", read.error().Text()));
        return;
      }
      it = by_ns.emplace(ns, std::move(*read)).first;
    }
    auto pod = it->second.find(sandbox);
    if (pod == it->second.end()) continue;
    for (const auto& [k, v] : pod->second) {
      if (!RuntimeOwned(k)) c.facts->annotations.emplace(k, v);
    }
  }
}

namespace {

// The handler a CRI-O sandbox's config.json in its storage names, or "".
std::string CrioSandboxHandler(FsOps& fs, const std::string& storage_root,
                               const std::vector<FsOps::Entry>& drivers,
                               const std::string& sandbox) {
  static const std::vector<JsonMember> kAnnotations = {{"annotations"}};
  for (const auto& drv : drivers) {
    if (!drv.dir || !drv.name.ends_with("-containers")) continue;
    auto read = fs.ReadTrusted(storage_root, {drv.name, sandbox, "userdata", "config.json"}, 0,
                               kMaxRuntimeStateBytes);
    if (!read) continue;
    auto spec = ParseJsonMembers(read->text, "config.json", kAnnotations);
    if (!spec || !spec->contains("annotations") || !(*spec)["annotations"].is_object()) continue;
    const Json& a = (*spec)["annotations"];
    auto h = a.find(std::string(kCrioHandler));
    return h != a.end() && h->is_string() ? h->get<std::string>() : "";
  }
  return "";
}

}  // namespace

void AddCrioPodHandlers(FsOps& fs, const std::string& storage_root, Discovery& d) {
  std::optional<std::vector<FsOps::Entry>> drivers;
  // A pod's containers share its sandbox: each sandbox is read once per run.
  std::map<std::string, std::string> handlers;
  for (auto& c : d.containers) {
    if (!c.facts || c.owner != 0 || !c.runtime_handler.empty()) continue;
    const std::string sandbox = Lookup(c.facts->annotations, kCrioSandboxId);
    if (sandbox.empty() || !IsPlainName(sandbox)) continue;
    if (!drivers) {
      auto listed = fs.ListDir(storage_root);
      if (!listed) return;
      drivers = std::move(*listed);
    }
    auto it = handlers.find(sandbox);
    if (it == handlers.end()) {
      it = handlers.emplace(sandbox, CrioSandboxHandler(fs, storage_root, *drivers, sandbox)).first;
    }
    c.runtime_handler = it->second;
  }
}

Discovery DiscoverContainers(FsOps& fs, const std::vector<std::string>& patterns, bool need_facts,
                             bool need_origin) {
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
    const size_t first = out.containers.size();
    // Checked once for all its containers' state files.
    const FsOps::TrustedRoot trusted = fs.OpenTrustedRoot(root, std::nullopt);
    for (const auto& e : *entries) {
      if (!e.dir || e.name.starts_with(".")) continue;  // lock files, crun's .crun
      FoundContainer c;
      c.root = root;
      c.id = e.name;
      if (!ReadContainerUnlisted(fs, trusted, c, need_facts)) {
        const std::string dir = root + "/" + e.name;
        const auto listed = fs.ListDir(dir);
        if (IsNamespaceDir(fs, dir, listed)) {
          out.namespace_dirs.push_back(dir);
          continue;
        }
        ReadContainer(fs, trusted, c, listed, need_facts);
      }
      if (need_origin) ReadOrigin(fs, c);
      out.containers.push_back(std::move(c));
    }
    LinkSandboxes(out.containers, first);
  }
  return out;
}

}  // namespace ocirlimit
