#include "node/node_install.h"

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "core/config.h"
#include "formats/text.h"
#include "node/node_config.h"
#include "node/node_ctd_plan.h"
#include "node/node_files.h"
#include "node/node_loop.h"
#include "node/node_preflight.h"
#include "node/node_record.h"
#include "node/node_restart.h"
#include "node/rooted_node_ops.h"

namespace ocirlimit::node {
namespace {

constexpr size_t kMaxProgramBytes = size_t{256} << 20;
constexpr size_t kMaxPolicyBytes = size_t{1} << 20;
constexpr const char* kPrograms[] = {"oci-rlimit-hook", "oci-rlimit-runtime", "oci-prlimit-helper",
                                     "oci-rlimit"};

bool Exists(HostFs& fs, const std::string& path) { return fs.Lstat(path).ok(); }

void AddUnique(std::vector<std::string>* v, const std::string& s) {
  if (std::find(v->begin(), v->end(), s) == v->end()) v->push_back(s);
}

struct Plan {
  NodeMode mode;
  std::vector<std::string> rlimits;
  std::vector<std::string> nvidia_runtimes;
  std::string dropin;
  std::optional<std::string> policy;  // --policy's text, for kNodeConfig
  std::optional<CtdPlan> ctd;
  std::optional<std::string> crio_hook;  // unset: a package's file is there, kept
  std::string crio_handler;
  std::vector<std::string> notes;
};

Result<std::vector<std::string>> Runtimes(HostFs& fs, const InstallArgs& a, const NodeMode& old,
                                          std::vector<std::string>* notes) {
  std::vector<std::string> out;
  if (a.runtime == "containerd" || a.runtime == "crio") {
    out.push_back(a.runtime);
  } else if (a.runtime == "auto") {
    if (Exists(fs, a.host + "/etc/containerd") ||
        Exists(fs, a.host + "/run/containerd/containerd.sock"))
      out.emplace_back("containerd");
    if (Exists(fs, a.host + "/etc/crio") || Exists(fs, a.host + "/run/crio/crio.sock"))
      out.emplace_back("crio");
  } else {
    return MakeError("--runtime: " + Quote(a.runtime) + " is not containerd, crio or auto");
  }
  for (const auto& r : old.runtimes) {
    if (std::find(out.begin(), out.end(), r) != out.end()) continue;
    out.push_back(r);
    notes->push_back("kept the " + r + " setup of the earlier install (--uninstall removes it)");
  }
  if (out.empty()) {
    return MakeError("--runtime auto: found neither containerd nor CRI-O under " + Quote(a.host) +
                     "; pass --runtime");
  }
  return out;
}

// The node's mode: the flags given, else what the earlier install remembered.
Result<NodeMode> DecideMode(HostFs& fs, const InstallArgs& a, const NodeMode& old, bool installed,
                            std::vector<std::string>* notes) {
  NodeMode m;
  m.prefix = a.prefix.value_or(old.prefix.empty() ? "/usr/local" : old.prefix);
  if (auto st = CheckNodePath("--prefix", m.prefix); !st) return st.error();
  while (m.prefix.size() > 1 && m.prefix.back() == '/') m.prefix.pop_back();
  if (installed && !old.prefix.empty() && m.prefix != old.prefix) {
    return MakeError("--prefix: " + Quote(m.prefix) + ": this node is installed under " +
                     Quote(old.prefix) + "; run --uninstall first");
  }
  auto rt = Runtimes(fs, a, old, notes);
  if (!rt) return rt.error();
  m.runtimes = std::move(*rt);
  m.nvidia = a.nvidia.value_or(old.nvidia);
  if (!a.nvidia && old.nvidia) {
    notes->push_back(
        "kept NVIDIA's runtime in the oci-rlimit handler's chain, as the earlier install "
        "(--nvidia) set it up; --no-nvidia removes it");
  }
  m.nvidia_runtime = a.nvidia_runtime.empty() ? old.nvidia_runtime : a.nvidia_runtime;
  if (!m.nvidia) m.nvidia_runtime.clear();
  if (!m.nvidia_runtime.empty()) {
    if (auto st = CheckNodePath("--nvidia-runtime", m.nvidia_runtime); !st) return st.error();
  }
  m.ctd_added_default = old.ctd_added_default;
  return m;
}

bool Has(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

Status PlanContainerd(const InstallArgs& a, Plan* p) {
  CtdRequest req;
  req.handler.binary = p->mode.prefix + "/bin/" + std::string(kRuntimeBinaryName);
  req.handler.base = p->mode.nvidia ? "nvidia" : "runc";
  req.major = NodeContainerdMajor(a.host);
  auto fs = RootedNodeOps(a.host.empty() ? "/" : a.host);
  auto plan = PlanContainerdHandler(*fs, req);
  if (!plan) return plan.error();
  for (const auto& n : plan->edit.notes) p->notes.push_back(n);
  if (!plan->edit.added_default.empty()) p->mode.ctd_added_default = plan->edit.added_default;
  p->ctd = std::move(*plan);
  return Ok{};
}

// What the drop-in's [runtime] runtimes lists on an NVIDIA node: the path
// asked for, else every absolute candidate (the operator's first) and the
// nvidia handler's own BinaryName.
std::vector<std::string> NvidiaRuntimes(const Plan& p) {
  if (!p.mode.nvidia_runtime.empty()) return {p.mode.nvidia_runtime};
  std::vector<std::string> out = NvidiaRuntimeCandidates();
  if (p.ctd && p.ctd->edit.base_binary.starts_with("/")) {
    AddUnique(&out, p.ctd->edit.base_binary);
  }
  return out;
}

// --policy's file, read as every program reads a config. The node's
// config.toml is replaced only when an earlier --policy run placed it: an
// admin's own file is never overwritten.
Result<std::string> ReadPolicy(const InstallArgs& a, const NodeRecord& rec) {
  auto text = rec.fs().Read(a.policy, kMaxPolicyBytes);
  if (!text) return text.error().Wrap("--policy");
  if (auto parsed = ParseConfig(*text, a.policy); !parsed) return parsed.error().Wrap("--policy");
  const std::string node(kNodeConfig);
  if (Exists(rec.fs(), a.host + node) && !rec.Recorded("created", node)) {
    return MakeError("--policy: " + Quote(node) +
                     " is the node's own config, not one this installer placed: move its "
                     "settings to a file in /etc/oci-rlimit/config.d/ (the fleet's file wins "
                     "over them key by key) and run again");
  }
  return text;
}

Result<Plan> Decide(const InstallArgs& a, const NodeRecord& rec) {
  Plan p;
  auto mode = DecideMode(rec.fs(), a, rec.mode(), rec.installed(), &p.notes);
  if (!mode) return mode.error();
  p.mode = std::move(*mode);
  if (a.policy.empty()) {
    auto rl = CheckRlimits(a.rlimits);
    if (!rl) return rl.error();
    p.rlimits = std::move(*rl);
  } else {
    auto policy = ReadPolicy(a, rec);
    if (!policy) return policy.error();
    p.policy = std::move(*policy);
  }
  if (Has(p.mode.runtimes, "containerd")) {
    if (auto st = PlanContainerd(a, &p); !st) return st.error();
  }
  if (p.mode.nvidia) {
    p.nvidia_runtimes = NvidiaRuntimes(p);
    LoopQuery q{a.host,
                p.mode.prefix + "/bin/" + std::string(kRuntimeBinaryName),
                a.source.empty() ? "" : a.source + "/" + std::string(kRuntimeBinaryName),
                p.nvidia_runtimes,
                !p.mode.nvidia_runtime.empty(),
                p.mode.runtimes};
    if (auto st = CheckNoLoop(q); !st) return st.error();
  }
  auto dropin = RenderDropin(p.rlimits, p.nvidia_runtimes);
  if (!dropin) return dropin.error();
  p.dropin = std::move(*dropin);
  if (Has(p.mode.runtimes, "crio")) {
    const std::string hook(kCrioHook);
    if (Exists(rec.fs(), a.host + hook) && !rec.Recorded("created", hook)) {
      p.notes.push_back("kept " + hook + ": not ours (a package's?)");
    } else {
      p.crio_hook = RenderCrioHook(p.mode.prefix);
    }
    auto fs = RootedNodeOps(a.host.empty() ? "/" : a.host);
    auto handler = PlanCrioHandler(*fs, std::string(kCrioHandler), p.mode.prefix,
                                   p.mode.prefix + "/bin/" + std::string(kRuntimeBinaryName));
    if (!handler) return handler.error();
    p.crio_handler = std::move(*handler);
  }
  return p;
}

// Every file the run may write (node paths), for the checks before it.
std::vector<std::string> Targets(const Plan& p) {
  std::vector<std::string> out;
  for (const char* prog : kPrograms) out.push_back(p.mode.prefix + "/bin/" + prog);
  out.emplace_back(kDropin);
  if (p.policy) out.emplace_back(kNodeConfig);
  if (p.crio_hook) out.emplace_back(kCrioHook);
  if (!p.crio_handler.empty()) out.emplace_back(kCrioHandler);
  if (p.ctd) out.push_back(p.ctd->path);
  out.push_back(std::string(kStateDir) + "/manifest");
  out.push_back(std::string(kStateDir) + "/mode.json");
  return out;
}

Status CheckTargets(HostFs& fs, const InstallArgs& a, const Plan& p) {
  std::vector<std::string> sources;
  if (!a.source.empty()) {
    for (const char* prog : kPrograms) sources.push_back(a.source + "/" + prog);
  }
  if (!a.policy.empty()) sources.push_back(a.policy);
  return CheckWritable(fs, a.host, Targets(p), sources);
}

void PrintPlan(const Plan& p, std::ostream& out) {
  std::string runtimes;
  for (const auto& r : p.mode.runtimes) runtimes += (runtimes.empty() ? "" : " ") + r;
  out << "plan prefix=" << p.mode.prefix << "\n"
      << "plan runtimes=" << runtimes << "\n"
      << "plan nvidia=" << (p.mode.nvidia ? "yes" : "no") << "\n";
}

// The restarts to ask for: this run's and every earlier one the engine has
// not done yet (node_restart.h), remembered; "plan restart=ENGINES". With
// `rec` null (--check) nothing is remembered.
Status PlanRestart(HostFs& fs, const std::string& host, const std::vector<std::string>& changed,
                   NodeRecord* rec, std::ostream& out) {
  const std::string file = std::string(kStateDir) + "/" + kRestartFile;
  auto old = fs.Read(host + file, 1 << 16);
  std::vector<PendingRestart> pending = StillPending(
      host, old ? ParsePending(*old) : std::vector<PendingRestart>{}, changed, time(nullptr));
  // Remembered: those of an engine seen running the old config.
  std::vector<PendingRestart> kept;
  for (const auto& p : pending) {
    if (!EngineStartTimes(host, p.engine).empty()) kept.push_back(p);
  }
  if (rec != nullptr && kept.empty() && old) {
    if (int e = fs.Unlink(host + file); e != 0) return MakeError("remove " + Quote(host + file), e);
  } else if (rec != nullptr && !kept.empty() && (!old || *old != RenderPending(kept))) {
    if (auto st = rec->Write(file, RenderPending(kept), 0644); !st) return st;
  }
  std::string services;
  for (const auto& p : pending) services += (services.empty() ? "" : " ") + p.engine;
  out << "plan restart=" << services << "\n";
  return Ok{};
}

// containerd's handler where containerd reads it; true when a file changed.
Result<bool> ApplyContainerd(const CtdPlan& c, NodeRecord* rec, std::ostream& out) {
  if (c.dropin) return rec->Place(c.path, c.edit.text, 0644, out);
  if (c.missing) {
    if (auto st = rec->EnsureDir("/etc/containerd"); !st) return st.error();
    if (auto st = rec->Record("ctdcreated", c.path); !st) return st.error();
  }
  if (!c.edit.changed && !c.missing) return false;
  if (auto st = rec->Write(c.path, c.edit.text, 0644); !st) return st.error();
  out << "wrote " << c.path << " (handler oci-rlimit)\n";
  return true;
}

Status Apply(const InstallArgs& a, const Plan& p, NodeRecord* rec, std::ostream& out) {
  std::vector<std::string> restart;
  for (const char* prog : kPrograms) {
    auto bytes = rec->fs().Read(a.source + "/" + prog, kMaxProgramBytes);
    if (!bytes) return bytes.error().Wrap("--source");
    auto st = rec->Place(p.mode.prefix + "/bin/" + prog, *bytes, 0755, out);
    if (!st) return st.error();
  }
  if (p.crio_hook) {
    if (auto st = rec->Place(std::string(kCrioHook), *p.crio_hook, 0644, out); !st)
      return st.error();
  }
  if (!p.crio_handler.empty()) {
    const std::string old(kOldCrioHandler);
    if (rec->Recorded("created", old) && rec->fs().Unlink(a.host + old) == 0) {
      out << "removed " << old << " (now " << kCrioHandler << ")\n";
    }
    auto st = rec->Place(std::string(kCrioHandler), p.crio_handler, 0644, out);
    if (!st) return st.error();
    if (*st) restart.emplace_back("crio");
  }
  if (auto st = rec->Place(std::string(kDropin), p.dropin, 0644, out); !st) return st.error();
  if (p.policy) {
    if (auto st = rec->Place(std::string(kNodeConfig), *p.policy, 0644, out); !st)
      return st.error();
  }
  if (p.ctd) {
    auto st = ApplyContainerd(*p.ctd, rec, out);
    if (!st) return st.error();
    if (*st) restart.emplace_back("containerd");
  }
  if (auto st = rec->SaveMode(p.mode); !st) return st.error();
  return PlanRestart(rec->fs(), a.host, restart, rec, out);
}

}  // namespace

int RunInstall(const InstallArgs& a, std::ostream& out, std::ostream& err) {
  return RunInstall(LinuxHostFs(), a, out, err);
}

int RunInstall(HostFs& fs, const InstallArgs& a, std::ostream& out, std::ostream& err) {
  if (!a.host.empty()) {
    auto st = fs.Stat(a.host);
    if (!st || st->kind != FileKind::kDirectory) {
      err << "oci-rlimit node: --host-root: " << Quote(a.host) << " is not a directory\n";
      return 1;
    }
  }
  auto rec = NodeRecord::Load(fs, a.host);
  if (!rec) {
    err << "oci-rlimit node: " << rec.error().Text() << "\n";
    return 1;
  }
  auto plan = Decide(a, *rec);
  Status checked = plan ? CheckTargets(fs, a, *plan) : Status(plan.error());
  if (!checked) {
    err << "oci-rlimit node: " << checked.error().Text() << ", nothing changed\n";
    return 1;
  }
  PrintPlan(*plan, out);
  if (a.check) {  // the run after it says the notes
    return PlanRestart(fs, a.host, {}, nullptr, out) ? 0 : 1;
  }
  RemoveLeftoverTemps(fs, a.host, Targets(*plan), out);
  for (const auto& n : plan->notes) err << "oci-rlimit node: " << n << "\n";
  if (auto st = Apply(a, *plan, &*rec, out); !st) {
    err << "oci-rlimit node: " << st.error().Text() << "\n";
    return 1;
  }
  out << "installed under " << (a.host.empty() ? "/" : a.host) << "\n";
  return 0;
}

}  // namespace ocirlimit::node
