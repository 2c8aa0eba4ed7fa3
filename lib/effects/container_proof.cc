#include "effects/container_proof.h"

#include <charconv>
#include <vector>

#include "formats/text.h"

namespace ocirlimit {
namespace {

std::vector<std::string_view> Components(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    if (!part.empty()) out.push_back(part);
    path.remove_prefix(slash == std::string_view::npos ? path.size() : slash + 1);
  }
  return out;
}

// The path of the hierarchy this rule reads: v1's memory line when there is
// one, else v2's "0::" line. nullopt when neither is there.
std::optional<std::string_view> HierarchyPath(std::string_view text) {
  std::optional<std::string_view> v2;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    // "N:CONTROLLERS:PATH"; the path may hold ':'.
    const size_t c1 = line.find(':');
    const size_t c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    const std::string_view path = line.substr(c2 + 1);
    if (line.substr(0, c1) == "0" && controllers.empty()) v2 = path;
    std::string_view rest = controllers;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      if (rest.substr(0, comma) == "memory") return path;
      rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
    }
  }
  return v2;
}

// Whether `seen` begins with `want` from its `from`th component on, whole.
bool BeginsWith(const std::vector<std::string_view>& seen, size_t at,
                const std::vector<std::string_view>& want, size_t from) {
  if (seen.size() - at < want.size() - from) return false;
  for (size_t i = from; i < want.size(); ++i) {
    if (seen[at + i - from] != want[i]) return false;
  }
  return true;
}

// "a-b-c.slice" -> "/a.slice/a-b.slice/a-b-c.slice" (systemd's unit
// hierarchy, as runc's ExpandSlice); "-.slice" -> "".
std::optional<std::string> ExpandSlice(std::string_view slice) {
  constexpr std::string_view kSuffix = ".slice";
  if (slice == "-.slice") return std::string();
  if (!slice.ends_with(kSuffix) || slice.find('/') != std::string_view::npos) return std::nullopt;
  const std::string_view name = slice.substr(0, slice.size() - kSuffix.size());
  if (name.empty() || name.front() == '-' || name.back() == '-' ||
      name.find("--") != std::string_view::npos) {
    return std::nullopt;
  }
  std::string out;
  for (size_t dash = name.find('-'); dash != std::string_view::npos;
       dash = name.find('-', dash + 1)) {
    out += Cat("/", name.substr(0, dash), kSuffix);
  }
  return Cat(out, "/", slice);
}

}  // namespace

bool StatusUidsAre(std::string_view status, uid_t uid) {
  const size_t at = status.starts_with("Uid:") ? 0 : status.find("\nUid:");
  if (at == std::string_view::npos) return false;
  std::string_view rest = status.substr(status.find(':', at) + 1);
  rest = rest.substr(0, rest.find('\n'));
  int fields = 0;
  while (!rest.empty()) {
    while (!rest.empty() && (rest.front() == '\t' || rest.front() == ' ')) rest.remove_prefix(1);
    if (rest.empty()) break;
    size_t end = rest.find_first_of("\t ");
    std::string_view field = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
    uid_t v = 0;
    auto [p, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
    if (ec != std::errc() || p != field.data() + field.size() || v != uid) return false;
    ++fields;
  }
  return fields == 4;
}

std::optional<std::string> Distrust(const InitRecord& r, uid_t caller) {
  if (r.owner == 0 || r.owner == caller) return std::nullopt;
  return Cat("unproven: its state is uid ", std::to_string(r.owner),
             "'s, and nothing a user writes proves a container to another uid (that user's own "
             "`oci-rlimit audit` judges it)");
}

std::optional<std::string> NotTheInit(const InitRecord& r, std::string_view status,
                                      std::string_view cgroup) {
  if (r.owner != 0 && !StatusUidsAre(status, r.owner)) {
    return Cat("not a process of uid ", std::to_string(r.owner),
               ", who owns the container's state");
  }
  if (!r.cgroup.empty() && !CgroupIsWithin(cgroup, r.cgroup)) {
    return Cat("its cgroup is not ", Quote(r.cgroup), ", the one made for the container");
  }
  if (r.cgroup.empty() && !r.start_time) {
    return std::string("neither a start time nor a cgroup was recorded to prove it");
  }
  return std::nullopt;
}

std::optional<std::string> ResolveCgroupsPath(std::string_view p) {
  if (p.starts_with('/')) {
    if (Components(p).empty()) return std::nullopt;
    std::string out;
    for (auto c : Components(p)) out += Cat("/", c);
    return out;
  }
  const size_t c1 = p.find(':');
  const size_t c2 = c1 == std::string_view::npos ? c1 : p.find(':', c1 + 1);
  if (c2 == std::string_view::npos || p.find(':', c2 + 1) != std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view slice = p.substr(0, c1);
  const std::string_view prefix = p.substr(c1 + 1, c2 - c1 - 1);
  const std::string_view name = p.substr(c2 + 1);
  if (name.empty() || name.find('/') != std::string_view::npos) return std::nullopt;
  auto parent = ExpandSlice(slice.empty() ? "system.slice" : slice);
  if (!parent) return std::nullopt;
  if (name.ends_with(".slice")) return Cat(*parent, "/", name);
  return Cat(*parent, "/", prefix.empty() ? "" : Cat(prefix, "-"), name, ".scope");
}

bool CgroupIsWithin(std::string_view proc_cgroup, std::string_view path) {
  const std::vector<std::string_view> want = Components(path);
  auto seen_path = HierarchyPath(proc_cgroup);
  if (want.empty() || !seen_path || !seen_path->starts_with('/')) return false;
  const std::vector<std::string_view> seen = Components(*seen_path);
  size_t up = 0;
  while (up < seen.size() && seen[up] == "..") ++up;
  for (size_t i = up; i < seen.size(); ++i) {
    if (seen[i] == "." || seen[i] == "..") return false;
  }
  if (up == 0) return BeginsWith(seen, 0, want, 0);
  // In a cgroup namespace: the tail begins with some end of `want`.
  for (size_t from = 0; from < want.size(); ++from) {
    if (BeginsWith(seen, up, want, from)) return true;
  }
  return false;
}

}  // namespace ocirlimit
