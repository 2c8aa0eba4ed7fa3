#include "policy_paths.h"

namespace ocirlimit::itest {

void PrintTo(Path p, std::ostream* os) {
  switch (p) {
    case Path::kHook:
      *os << "hook";
      return;
    case Path::kPrecreate:
      *os << "precreate hook";
      return;
    case Path::kWrapper:
      *os << "runtime wrapper";
      return;
    case Path::kWrapperExec:
      *os << "runtime wrapper exec";
      return;
  }
}

std::string PathTestName(Path p) {
  switch (p) {
    case Path::kHook:
      return "Hook";
    case Path::kPrecreate:
      return "Precreate";
    case Path::kWrapper:
      return "RuntimeWrapper";
    case Path::kWrapperExec:
      return "RuntimeWrapperExec";
  }
  return "Unknown";
}

void PolicyTest::SetUp() { OCI_RLIMIT_REQUIRE("runc", "prlimit"); }

void PolicyTest::TearDown() {
  for (const auto& id : sleepers_)
    Run({*Which("runc"), "--root", dir_ / "state", "delete", "--force", id});
}

void PolicyTest::UseConfig(std::string toml) {
  for (size_t at; (at = toml.find("LOG")) != std::string::npos;) toml.replace(at, 3, log_path());
  WriteFile(config_path(), toml + "[runtime]\nruntimes = [\"" + *Which("runc") + "\"]\n");
}

std::vector<std::string> PolicyTest::Runtime(const std::string& program,
                                             const std::vector<std::string>& prefix) const {
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), {program, "--root", dir_ / "state"});
  return argv;
}

CmdResult PolicyTest::Run(const std::vector<std::string>& argv,
                          const std::string& stdin_data) const {
  RunOptions opts;
  opts.env = {"OCI_RLIMIT_CONFIG=" + config_path()};
  opts.stdin_data = stdin_data;
  return RunCmd(argv, opts);
}

CmdResult PolicyTest::RunContainer(const std::string& name, const std::function<void(Json&)>& edit,
                                   const std::vector<std::string>& prefix) {
  const std::string bundle = dir_ / name;
  Json spec = MakeBundle(bundle, kCatLimits);
  edit(spec);
  switch (GetParam()) {
    case Path::kPrecreate:
      return Precreate(bundle, spec, prefix);
    case Path::kWrapperExec:
      return Exec(name, bundle, spec, prefix);
    case Path::kHook:
      spec["hooks"]["createRuntime"] =
          Json::array({HookEntry(OurBinary("oci-rlimit-hook"),
                                 {"oci-rlimit-hook", "--config", config_path(), "createRuntime"})});
      break;
    case Path::kWrapper:
      break;
  }
  WriteSpec(bundle, spec);
  std::vector<std::string> argv =
      Runtime(GetParam() == Path::kHook ? *Which("runc") : OurBinary("oci-rlimit-runtime"), prefix);
  argv.insert(argv.end(), {"run", "--bundle", bundle, UniqueId("policy")});
  return Run(argv);
}

// podman's way: the proposed spec on the hook's stdin, its stdout the spec
// the runtime gets.
CmdResult PolicyTest::Precreate(const std::string& bundle, const Json& spec,
                                const std::vector<std::string>& prefix) {
  CmdResult hook =
      Run({OurBinary("oci-rlimit-hook"), "--config", config_path(), "precreate"}, spec.dump());
  if (hook.status != 0) return hook;
  Json merged = Json::parse(hook.out, nullptr, false);
  if (merged.is_discarded()) {
    ADD_FAILURE() << "precreate wrote no JSON: " << hook.out;
    return hook;
  }
  WriteSpec(bundle, merged);
  std::vector<std::string> argv = Runtime(*Which("runc"), prefix);
  argv.insert(argv.end(), {"run", "--bundle", bundle, UniqueId("policy")});
  CmdResult r = Run(argv);
  r.err = hook.err + r.err;
  return r;
}

// The container sleeps (started by the wrapper, its stdio away from our
// pipes); the exec'd process is the spec's process, with its rlimits as a
// --process file carries them.
CmdResult PolicyTest::Exec(const std::string& name, const std::string& bundle, const Json& spec,
                           const std::vector<std::string>& prefix) {
  Json sleeper = spec;
  sleeper["process"]["args"] = {"sleep", "60"};
  WriteSpec(bundle, sleeper);
  const std::string id = UniqueId("policy");
  const std::string err = dir_ / (name + ".run.err");
  std::vector<std::string> run = {"sh", "-c", "\"$@\" </dev/null >/dev/null 2>\"$0\"", err};
  for (const auto& a : Runtime(OurBinary("oci-rlimit-runtime"), prefix)) run.push_back(a);
  run.insert(run.end(), {"run", "-d", "--bundle", bundle, id});
  CmdResult started = Run(run);
  started.err += ReadFile(err);
  if (started.status != 0) return started;
  sleepers_.push_back(id);
  const std::string process = dir_ / (name + ".process.json");
  WriteFile(process, spec["process"].dump(2));
  std::vector<std::string> exec = Runtime(OurBinary("oci-rlimit-runtime"), prefix);
  exec.insert(exec.end(), {"exec", "--process", process, id});
  CmdResult r = Run(exec);
  r.err = started.err + r.err;
  return r;
}

std::optional<Limit> PolicyTest::Memlock(const std::string& name,
                                         const std::function<void(Json&)>& edit,
                                         const std::vector<std::string>& prefix) {
  CmdResult r = RunContainer(name, edit, prefix);
  EXPECT_EQ(r.status, 0) << r.err;
  return LimitRow(r.out, kMemlock);
}

}  // namespace ocirlimit::itest
