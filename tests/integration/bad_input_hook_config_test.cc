// The bad-input catalogue (bad_input.h), oci-rlimit-hook: its config (values,
// the file itself, TOML nested past the guard) and its decision log.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>

#include "bad_input.h"

namespace ocirlimit::itest::badinput {
namespace {

namespace fs = std::filesystem;

// The hook's log-file on a full tmpfs (FullDiskLog).
void HookLogOnFullDisk(World& w) {
  const std::string log = FullDiskLog(w);
  if (::testing::Test::HasFatalFailure()) return;
  WriteFile(w.config, "rlimits = [\"memlock=1M:4M\"]\nlog-file = \"" + log + "\"\n");
}

// The hook applies to a live target, then cannot log: one warning, exit 0.
void HookLogNotAFile(World& w, NotAFile kind) {
  MakeNotAFile(w.dir / "hook.log", kind);
  WriteFile(w.config,
            "rlimits = [\"memlock=1M:4M\"]\nlog-file = \"" + (w.dir / "hook.log") + "\"\n");
  w.stdin_data = w.State(std::to_string(w.Live()));
}

// What the config says: unknown keys, bad rlimits, wrong types, bad TOML.
std::vector<Case> ConfigValues() {
  return {
      {"HookConfigUnknownKey",
       Prog::kHook,
       1,
       {"{config}", "unknown key \"rlimit\""},
       [](World& w) { WriteFile(w.config, "rlimit = [\"memlock=1M\"]\n"); }},
      {"HookConfigRlimitNameTypo",
       Prog::kHook,
       1,
       {"unknown name \"memlok\""},
       [](World& w) { WriteFile(w.config, "rlimits = [\"memlok=1M\"]\n"); }},
      {"HookConfigSoftAboveHard",
       Prog::kHook,
       1,
       {"rlimit \"memlock=4M:1M\"", "soft 4194304 is greater than hard 1048576"},
       [](World& w) { WriteFile(w.config, "rlimits = [\"memlock=4M:1M\"]\n"); }},
      {"HookConfigOverflow",
       Prog::kHook,
       1,
       {"\"18446744073709551616\" overflows 64 bits"},
       [](World& w) { WriteFile(w.config, "rlimits = [\"nofile=18446744073709551616\"]\n"); }},
      {"HookConfigSuffixOverflow",
       Prog::kHook,
       1,
       {"\"16777216T\" overflows 64 bits"},
       [](World& w) { WriteFile(w.config, "rlimits = [\"memlock=16777216T\"]\n"); }},
      {"HookConfigDuplicate",
       Prog::kHook,
       1,
       {"rlimit \"MEMLOCK=2M\"", "memlock is given twice"},
       [](World& w) { WriteFile(w.config, "rlimits = [\"memlock=1M\", \"MEMLOCK=2M\"]\n"); }},
      {"HookConfigWrongType",
       Prog::kHook,
       1,
       {"rlimits: must be an array of strings"},
       [](World& w) { WriteFile(w.config, "rlimits = \"memlock=1M\"\n"); }},
      {"HookConfigOnErrorWrongType",
       Prog::kHook,
       1,
       {"on-error: must be a string"},
       [](World& w) { WriteFile(w.config, "rlimits = [\"memlock=1M\"]\non-error = true\n"); }},
      {"HookConfigMalformedToml",
       Prog::kHook,
       1,
       {"{config}", "line 1"},
       [](World& w) { WriteFile(w.config, "rlimits = [\"memlock=1M\"\n"); }},
      {"HookConfigInvalidUtf8",
       Prog::kHook,
       1,
       {"{config}", "UTF-8"},
       [](World& w) { WriteFile(w.config, "rlimits = [\"memlock=1M\xc3\x28\"]\n"); }},
  };
}

// The config file itself, the environment override, the chained hook.
std::vector<Case> ConfigFile() {
  return {
      {"HookConfigNulInLogFile",
       Prog::kHook,
       1,
       {"log-file", "NUL"},
       [](World& w) {
         WriteFile(w.config, "rlimits = [\"memlock=1M\"]\nlog-file = \"" + w.dir.path() +
                                 "/log\\u0000.txt\"\n");
       }},
      {"HookConfigMissing",
       Prog::kHook,
       1,
       {"{dir}/missing.toml", "No such file or directory"},
       [](World& w) {
         w.args = {"--config", w.dir / "missing.toml", "createRuntime"};
       }},
      {"HookConfigDirectory",
       Prog::kHook,
       1,
       {"{config}", "is not a regular file"},
       [](World& w) {
         fs::remove(w.config);
         fs::create_directory(w.config);
       }},
      {"HookConfigFifo",
       Prog::kHook,
       1,
       {"{config}", "is not a regular file"},
       [](World& w) {
         fs::remove(w.config);
         ASSERT_EQ(mkfifo(w.config.c_str(), 0644), 0);
       }},
      {"HookConfigUnreadableAsNobody",
       Prog::kHook,
       1,
       {"{config}", "Permission denied"},
       [](World& w) { ForNobody(w, w.config); }},
      {"HookEnvOverrideBad",
       Prog::kHook,
       1,
       {"environment OCI_RLIMIT_RLIMITS", "\"memlock=lots\""},
       [](World& w) { w.env = {"OCI_RLIMIT_RLIMITS=memlock=lots"}; }},
      {"HookChainRelative",
       Prog::kHook,
       1,
       {"hook.chain", "\"next-hook\" must be an absolute path"},
       [](World& w) {
         WriteFile(w.config, "rlimits = [\"memlock=1M\"]\n[hook]\nchain = \"next-hook\"\n");
       }},
  };
}

// TOML nested past the guard: toml++ recursed once per level of these and
// crashed (SIGSEGV, rc 139).
std::vector<Case> ConfigDeepToml() {
  return {
      {"HookConfigDeepDottedKey",
       Prog::kHook,
       1,
       {"config \"{config}\": line 1, column 200: keys nested deeper than 100 levels",
        "the limit is 100"},
       [](World& w) { WriteFile(w.config, DeepToml(60000) + " = 1\n"); }},
      {"HookConfigDeepHeaderInADropIn",
       Prog::kHook,
       1,
       {"config \"{dir}/config.d/50-deep.toml\": line 1", "the limit is 100"},
       [](World& w) { DeepDropIn(w, "[" + DeepToml(80000) + "]\n"); }},
      {"HookPrecreateConfigDeepDottedKey",
       Prog::kHook,
       1,
       {"config \"{config}\"", "keys nested deeper than 100 levels"},
       [](World& w) {
         WriteFile(w.config, DeepToml(60000) + " = 1\n");
         w.args = {"--config", w.config, "precreate"};
         HookState(w, kMinimalSpec);
       }},
      {"HookPrecreateConfigDeepHeaderInADropIn",
       Prog::kHook,
       1,
       {"config \"{dir}/config.d/50-deep.toml\"", "the limit is 100"},
       [](World& w) {
         DeepDropIn(w, "[" + DeepToml(80000) + "]\n");
         w.args = {"--config", w.config, "precreate"};
         HookState(w, kMinimalSpec);
       }},
  };
}

// The decision log: whole lines or none; a log that cannot be written warns.
std::vector<Case> DecisionLog() {
  return {
      {"HookLogFifoWarnsAndApplies",
       Prog::kHook,
       0,
       {"warning: open log \"{dir}/hook.log\": No such device or address"},
       [](World& w) { HookLogNotAFile(w, NotAFile::kFifo); },
       true},
      {"HookLogDirectoryWarnsAndApplies",
       Prog::kHook,
       0,
       {"warning: open log \"{dir}/hook.log\": Is a directory"},
       [](World& w) { HookLogNotAFile(w, NotAFile::kDirectory); },
       true},
      {"HookLogSocketWarnsAndApplies",
       Prog::kHook,
       0,
       {"warning: open log \"{dir}/hook.log\": No such device or address"},
       [](World& w) { HookLogNotAFile(w, NotAFile::kSocket); },
       true},
      {"HookConfigDropInGoneWarnsAndApplies",
       Prog::kHook,
       0,
       {std::string("warning: ") + kGoneDropInWarning},
       [](World& w) {
         GoneDropIn(w);
         w.stdin_data = w.State(std::to_string(w.Live()));
       },
       true},
      {"HookPrecreateConfigDropInGoneWarnsAndApplies",
       Prog::kHook,
       0,
       {std::string("warning: ") + kGoneDropInWarning},
       [](World& w) {
         GoneDropIn(w);
         w.args = {"--config", w.config, "precreate"};
         HookState(w, kMinimalSpec);
       },
       true,
       "",
       {},
       true,
       [](World&, const CmdResult& r) { EXPECT_EQ(MemlockIn(r.out), "1048576:4194304") << r.out; }},
      {"HookLogOnAFullDiskDropsTheLineWhole",
       Prog::kHook,
       0,
       {"warning: log \"{dir}/full/x.log\": a line of ", "bytes dropped, nothing written"},
       [](World& w) {
         HookLogOnFullDisk(w);
         w.stdin_data = w.State(std::to_string(w.Live()));
       },
       true},
  };
}

// Requests on, a bad request excused (on-error = "warn"), decisions logged
// outside the snapshot; the spec's request annotation is HostileRequest().
void HostileRequestWorld(World& w) {
  WriteFile(w.config, "rlimits = [\"memlock=1M:4M\"]\non-error = \"warn\"\nlog-file = \"" +
                          (w.outside / "decisions.log") +
                          "\"\n[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\n");
  Json spec = Json::parse(kMinimalSpec);
  spec["annotations"]["oci-rlimit.io/rlimits"] = testsupport::HostileRequest();
  WriteFile(w.bundle + "/config.json", spec.dump());
}

// A request value forging log records: the log-file line is one record with
// the value escaped, and the container gets the node's limits.
std::vector<Case> HostileRequestLog() {
  return {
      {"HookRequestForgingALogRecordIsOneEscapedLine",
       Prog::kHook,
       0,
       {"warning: ", "oci-rlimit.io/rlimits"},
       [](World& w) {
         HostileRequestWorld(w);
         w.stdin_data = w.State(std::to_string(w.Live()));
       },
       true,
       "",
       {},
       false,
       [](World& w, const CmdResult&) {
         testsupport::ExpectOneEscapedRecord(w.outside / "decisions.log");
       }},
      {"HookPrecreateRequestForgingALogRecordIsOneEscapedLine",
       Prog::kHook,
       0,
       {"warning: ", "oci-rlimit.io/rlimits"},
       [](World& w) {
         HostileRequestWorld(w);
         w.args = {"--config", w.config, "precreate"};
         HookState(w, ReadFile(w.bundle + "/config.json"));
       },
       true,
       "",
       {},
       true,
       [](World& w, const CmdResult& r) {
         EXPECT_EQ(MemlockIn(r.out), "1048576:4194304") << r.out;
         testsupport::ExpectOneEscapedRecord(w.outside / "decisions.log");
       }},
  };
}

}  // namespace

std::vector<Case> HookConfigCases() {
  return Join({ConfigValues(), ConfigFile(), ConfigDeepToml(), DecisionLog(), HostileRequestLog()});
}

INSTANTIATE_TEST_SUITE_P(HookConfig, BadInput, ::testing::ValuesIn(HookConfigCases()), CaseName);

}  // namespace ocirlimit::itest::badinput
