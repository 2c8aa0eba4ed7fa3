#include "cli/admission/admission_args.h"

#include <sys/stat.h>

#include <cerrno>

#include "effects/config_loader.h"
#include "formats/argv.h"
#include "formats/text.h"

namespace ocirlimit::cli {
namespace {

constexpr FlagSpec kHelp = {.name = "--help", .short_name = "-h"};
// What the reader knows: the flags and --help.
constexpr FlagSpec kReaderFlags[] = {kHelp,
                                     kAdmissionFlags[0],
                                     kAdmissionFlags[1],
                                     kAdmissionFlags[2],
                                     kAdmissionFlags[3],
                                     kAdmissionFlags[4],
                                     kAdmissionFlags[5],
                                     kAdmissionFlags[6],
                                     kAdmissionFlags[7]};

Status Set(AdmissionArgs& out, const ArgItem& a) {
  if (!a.flag) return MakeError("unexpected argument " + Quote(a.value));
  if (a.Is("--help")) out.help = true;
  if (a.Is("--config")) out.config = a.value;
  if (a.Is("--output")) out.output = a.value;
  if (a.Is("--check")) out.check = true;
  if (a.Is("--name")) out.policy.name = a.value;
  if (a.Is("--ulimits-field")) out.policy.ulimits_field = true;
  if (a.Is("--actions")) {
    auto v = k8s::ParseActions(a.value);
    if (!v) return v.error();
    out.policy.actions = std::move(*v);
  }
  if (a.Is("--namespace-selector") || a.Is("--object-selector")) {
    auto v = k8s::ParseSelector(a.flag->name, a.value);
    if (!v) return v.error();
    (a.Is("--namespace-selector") ? out.policy.namespace_selector : out.policy.object_selector) =
        std::move(*v);
  }
  return Ok{};
}

}  // namespace

Result<AdmissionArgs> ParseAdmissionArgs(const std::vector<std::string>& args) {
  AdmissionArgs out;
  ArgReader reader(args, kReaderFlags);
  while (true) {
    auto item = reader.Next();
    if (!item) return item.error();
    if (!*item) break;
    if (auto st = Set(out, **item); !st) return st.error();
  }
  return out;
}

Status ConfigFound(const ConfigPath& where) {
  struct stat st {};
  if (where.must_exist || stat(where.path.c_str(), &st) == 0 || errno != ENOENT) return Ok{};
  auto dropins = ListDropIns(DropInDir(where.path));
  if (dropins && !dropins->empty()) return Ok{};
  return MakeError(Cat(
      "no config found: ", Quote(where.path), " does not exist and ", Quote(DropInDir(where.path)),
      " holds no drop-in; give --config PATH (the config the nodes run) or set ", kConfigEnv));
}

}  // namespace ocirlimit::cli
