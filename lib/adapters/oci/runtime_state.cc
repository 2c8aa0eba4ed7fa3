#include "adapters/oci/runtime_state.h"

#include <limits>

#include "adapters/oci/json_members.h"
#include "adapters/oci/spec.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

Result<pid_t> Pid(const Json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) return MakeError(Cat(where, ": no ", Quote(key)));
  if (!it->is_number_integer() || it->get<int64_t>() <= 0 ||
      it->get<int64_t>() > std::numeric_limits<pid_t>::max()) {
    return MakeError(Cat(where, ": ", key, ": ", ValueText(*it), " is not a PID"));
  }
  return static_cast<pid_t>(it->get<int64_t>());
}

Result<std::optional<uint64_t>> StartTime(const Json& j, const char* key,
                                          const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<uint64_t>{};
  if (!it->is_number_unsigned()) {
    return MakeError(Cat(where, ": ", key, ": ", ValueText(*it), " is not a start time"));
  }
  return std::optional<uint64_t>{it->get<uint64_t>()};
}

// runc: config.labels, ["bundle=/run/...", "KEY=VALUE", ...]; the last wins.
std::string RuncBundle(const Json& j) {
  std::string bundle;
  auto config = j.find("config");
  if (config == j.end() || !config->is_object()) return bundle;
  auto labels = config->find("labels");
  if (labels == config->end() || !labels->is_array()) return bundle;
  for (const auto& l : *labels) {
    if (l.is_string() && l.get_ref<const std::string&>().starts_with("bundle=")) {
      bundle = l.get<std::string>().substr(7);
    }
  }
  return bundle;
}

// crun: "bundle".
std::string CrunBundle(const Json& j) {
  auto bundle = j.find("bundle");
  return bundle != j.end() && bundle->is_string() ? bundle->get<std::string>() : std::string();
}

// The members the readers below use: a state.json is mostly runc's copy of
// the container's config (mounts, namespaces, cgroups), never built.
const std::vector<JsonMember>& RuncMembers() {
  static const std::vector<JsonMember> members = {
      {"init_process_pid"}, {"init_process_start"}, {"config", "labels"}};
  return members;
}

const std::vector<JsonMember>& CrunMembers() {
  static const std::vector<JsonMember> members = {{"pid"}, {"process-start-time"}, {"bundle"}};
  return members;
}

const std::vector<JsonMember>& BundleMembers() {
  static const std::vector<JsonMember> members = {{"bundle"}, {"config", "labels"}};
  return members;
}

}  // namespace

Result<RuntimeState> ParseRuncState(std::string_view text, const std::string& where) {
  auto j = ParseJsonMembers(text, where, RuncMembers());
  if (!j) return j.error();
  RuntimeState s;
  s.runtime = "runc";
  auto pid = Pid(*j, "init_process_pid", where);
  if (!pid) return pid.error();
  s.pid = *pid;
  auto start = StartTime(*j, "init_process_start", where);
  if (!start) return start.error();
  s.start_time = *start;
  s.bundle = RuncBundle(*j);
  return s;
}

Result<RuntimeState> ParseCrunStatus(std::string_view text, const std::string& where) {
  auto j = ParseJsonMembers(text, where, CrunMembers());
  if (!j) return j.error();
  RuntimeState s;
  s.runtime = "crun";
  auto pid = Pid(*j, "pid", where);
  if (!pid) return pid.error();
  s.pid = *pid;
  auto start = StartTime(*j, "process-start-time", where);
  if (!start) return start.error();
  s.start_time = *start;
  s.bundle = CrunBundle(*j);
  return s;
}

const std::vector<std::string>& DefaultStateRoots() {
  static const std::vector<std::string> roots = {
      "/run/containerd/runc/*",
      "/run/docker/runtime-runc/moby",
      "/run/runc",
      "/run/crun",
      "/run/user/*/runc",
      "/run/user/*/crun",
  };
  return roots;
}

std::optional<std::string> RecordedBundle(std::string_view text) {
  auto j = ParseJsonMembers(text, "state", BundleMembers());
  if (!j) return std::nullopt;
  std::string bundle = CrunBundle(*j);
  if (bundle.empty()) bundle = RuncBundle(*j);
  if (bundle.empty()) return std::nullopt;
  return bundle;
}

}  // namespace ocirlimit
