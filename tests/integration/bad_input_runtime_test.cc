// The bad-input catalogue (bad_input.h), oci-rlimit-runtime: exec --process,
// its config (values, TOML nested past the guard), its argv and its log.
#include <gtest/gtest.h>

#include <filesystem>

#include "bad_input.h"

namespace ocirlimit::itest::badinput {
namespace {

namespace fs = std::filesystem;

// The wrapper fails (a bad spec) and cannot write runc's JSON error log.
void RuntimeLogNotAFile(World& w, NotAFile kind) {
  MakeNotAFile(w.dir / "runtime.log", kind);
  WriteFile(w.bundle + "/config.json", "{\"process\": ");
  w.args = {
      "--log",    w.dir / "runtime.log", "--log-format", "json", "create", "--bundle", w.bundle,
      "bad-input"};
}

// exec --process: too deep, keys runc reads another way, a symlink, not JSON.
std::vector<Case> ExecProcess() {
  return {
      {"RuntimeExecProcessDeeplyNested",
       Prog::kRuntime,
       1,
       {"--process \"{dir}/process.json\": nested deeper than 64 levels"},
       [](World& w) {
         WriteFile(w.dir / "process.json", R"({"args":["sh"],"x":)" + Deep() + "}");
         w.args = {"exec", "--process", w.dir / "process.json", "bad-input"};
       }},
      {"RuntimeExecProcessRlimitsCase",
       Prog::kRuntime,
       1,
       {"--process \"{dir}/process.json\": key \"Rlimits\" in process differs only by case from "
        "\"rlimits\""},
       [](World& w) {
         WriteFile(w.dir / "process.json", R"({"args":["sh"],"Rlimits":[]})");
         w.args = {"exec", "--process", w.dir / "process.json", "bad-input"};
       }},
      {"RuntimeExecProcessHardTwice",
       Prog::kRuntime,
       1,
       {"--process \"{dir}/process.json\": key \"hard\" appears twice in process.rlimits[]"},
       [](World& w) {
         WriteFile(
             w.dir / "process.json",
             R"({"args":["sh"],"rlimits":[{"type":"RLIMIT_CORE","soft":0,"hard":0,"hard":1}]})");
         w.args = {"exec", "--process", w.dir / "process.json", "bad-input"};
       }},
      {"RuntimeExecProcessSymlink",
       Prog::kRuntime,
       1,
       {"{dir}/process.json", "is a symlink"},
       [](World& w) {
         WriteFile(w.dir / "real-process.json", R"({"args":["sh"],"cwd":"/"})");
         fs::create_symlink(w.dir / "real-process.json", w.dir / "process.json");
         w.args = {"exec", "--process", w.dir / "process.json", "--detach", "bad-input"};
       }},
      {"RuntimeExecProcessMalformed",
       Prog::kRuntime,
       1,
       {"{dir}/process.json\": not valid JSON"},
       [](World& w) {
         WriteFile(w.dir / "process.json", R"({"args":["sh"],)");
         w.args = {"exec", "--process", w.dir / "process.json", "bad-input"};
       }},
  };
}

// Its config, the runtime it names, its argv.
std::vector<Case> ConfigAndArgv() {
  return {
      {"RuntimeConfigUnknownKey",
       Prog::kRuntime,
       1,
       {"unknown key \"runtime.runtime\""},
       [](World& w) {
         WriteFile(w.config, "rlimits = [\"memlock=1M\"]\n[runtime]\nruntime = [\"runc\"]\n");
       }},
      {"RuntimeConfigRlimitTypo",
       Prog::kRuntime,
       1,
       {"unknown name \"memlok\""},
       [](World& w) { RuntimeConfig(w, "rlimits = [\"memlok=1M\"]\n"); }},
      {"RuntimeConfigSoftAboveHard",
       Prog::kRuntime,
       1,
       {"soft 2097152 is greater than hard 1048576"},
       [](World& w) { RuntimeConfig(w, "rlimits = [\"memlock=2M:1M\"]\n"); }},
      {"RuntimeConfigEmptyRuntimes",
       Prog::kRuntime,
       1,
       {"runtime.runtimes: must name at least one runtime"},
       [](World& w) {
         WriteFile(w.config, "rlimits = [\"memlock=1M\"]\n[runtime]\nruntimes = []\n");
       }},
      {"RuntimeConfigNulInRuntime",
       Prog::kRuntime,
       1,
       {"runtime.runtimes[0]", "NUL"},
       [](World& w) {
         WriteFile(w.config, "rlimits = [\"memlock=1M\"]\n[runtime]\nruntimes = [\"" +
                                 (w.outside / "runtime.sh") + "\\u0000x\"]\n");
       }},
      {"RuntimeConfigNamedButMissing",
       Prog::kRuntime,
       1,
       {"{dir}/nope.toml", "No such file"},
       [](World& w) { w.env = {"OCI_RLIMIT_CONFIG=" + (w.dir / "nope.toml")}; }},
      {"RuntimeNoRuntimeFound",
       Prog::kRuntime,
       1,
       {"/nonexistent/runc"},
       [](World& w) {
         WriteFile(w.config,
                   "rlimits = [\"memlock=1M\"]\n[runtime]\nruntimes = [\"/nonexistent/runc\"]\n");
       }},
      {"RuntimeBundleFlagWithoutValue",
       Prog::kRuntime,
       1,
       {"--bundle"},
       [](World& w) {
         w.args = {"create", "--bundle"};
       }},
  };
}

// TOML nested past the guard (toml++ recursed once per level and crashed),
// for create and exec.
std::vector<Case> ConfigDeepToml() {
  return {
      {"RuntimeCreateConfigDeepDottedKey",
       Prog::kRuntime,
       1,
       {"config \"{config}\": line 1, column 200: keys nested deeper than 100 levels"},
       [](World& w) { RuntimeConfig(w, DeepToml(60000) + " = 1\n"); }},
      {"RuntimeCreateConfigDeepHeaderInADropIn",
       Prog::kRuntime,
       1,
       {"config \"{dir}/config.d/50-deep.toml\"", "the limit is 100"},
       [](World& w) { DeepDropIn(w, "[" + DeepToml(80000) + "]\n"); }},
      {"RuntimeExecConfigDeepHeaderInADropIn",
       Prog::kRuntime,
       1,
       {"config \"{dir}/config.d/50-deep.toml\"", "the limit is 100"},
       [](World& w) {
         DeepDropIn(w, "[" + DeepToml(80000) + "]\n");
         WriteFile(w.dir / "process.json", R"({"args":["sh"],"cwd":"/"})");
         w.args = {"exec", "--process", w.dir / "process.json", "bad-input"};
       }},
      {"RuntimeExecConfigDeepDottedKey",
       Prog::kRuntime,
       1,
       {"config \"{config}\"", "keys nested deeper than 100 levels"},
       [](World& w) {
         RuntimeConfig(w, DeepToml(60000) + " = 1\n");
         WriteFile(w.dir / "process.json", R"({"args":["sh"],"cwd":"/"})");
         w.args = {"exec", "--process", w.dir / "process.json", "bad-input"};
       }},
  };
}

// runc's JSON error log cannot be written: the error line says so.
std::vector<Case> Log() {
  return {
      {"RuntimeLogFifoNamedOnTheErrorLine",
       Prog::kRuntime,
       1,
       {"not valid JSON", "(warning: not logged: open log \"{dir}/runtime.log\": No such device"},
       [](World& w) { RuntimeLogNotAFile(w, NotAFile::kFifo); }},
      {"RuntimeLogDirectoryNamedOnTheErrorLine",
       Prog::kRuntime,
       1,
       {"not valid JSON", "(warning: not logged: open log \"{dir}/runtime.log\": Is a directory"},
       [](World& w) { RuntimeLogNotAFile(w, NotAFile::kDirectory); }},
      {"RuntimeLogSocketNamedOnTheErrorLine",
       Prog::kRuntime,
       1,
       {"not valid JSON", "(warning: not logged: open log \"{dir}/runtime.log\": No such device"},
       [](World& w) { RuntimeLogNotAFile(w, NotAFile::kSocket); }},
  };
}

// A drop-in gone when opened: skipped with one warning, the rest applied.
// The warning goes where the wrapper's warnings go: stderr by hand, the
// --log file under an engine, the config's log-file line on an exec (whose
// stdio is the exec session's).
std::vector<Case> DropInGone() {
  const std::string warning = std::string("oci-rlimit-runtime: warning: ") + kGoneDropInWarning;
  return {
      {"RuntimeCreateConfigDropInGoneWarnsAndApplies",
       Prog::kRuntime,
       0,
       {warning},
       [](World& w) { GoneDropIn(w); },
       true,
       "",
       {"bundle/config.json"},
       false,
       [](World& w, const CmdResult&) {
         EXPECT_EQ(MemlockIn(ReadFile(w.bundle + "/config.json")), "1048576:4194304");
       }},
      {"RuntimeCreateWithLogConfigDropInGoneWarnsInTheLog",
       Prog::kRuntime,
       0,
       {"\"level\":\"warning\"", "config drop-in \\\"{dir}/config.d/20-gone.toml\\\" is gone"},
       [](World& w) {
         GoneDropIn(w);
         w.args = {"--log",        w.outside / "runtime.log",
                   "--log-format", "json",
                   "create",       "--bundle",
                   w.bundle,       "bad-input"};
       },
       true,
       "{outside}/runtime.log",
       {"bundle/config.json"},
       false,
       [](World& w, const CmdResult&) {
         EXPECT_EQ(MemlockIn(ReadFile(w.bundle + "/config.json")), "1048576:4194304");
       }},
      {"RuntimeExecConfigDropInGoneLogsAndApplies",
       Prog::kRuntime,
       0,
       {"via=\"exec\" set memlock=1048576:4194304",
        "warning=\"config drop-in \\\"{dir}/config.d/20-gone.toml\\\" is gone"},
       [](World& w) {
         GoneDropIn(w);
         RuntimeConfig(w, "rlimits = [\"memlock=1M:4M\"]\nlog-file = \"" +
                              (w.outside / "decisions.log") + "\"\n");
         WriteFile(w.dir / "process.json", R"({"args":["sh"],"cwd":"/"})");
         w.args = {"exec", "--process", w.dir / "process.json", "bad-input"};
       },
       true,
       "{outside}/decisions.log",
       {"process.json"},
       false,
       [](World& w, const CmdResult&) {
         EXPECT_EQ(MemlockIn(ReadFile(w.dir / "process.json")), "1048576:4194304");
       }},
  };
}

// The config's log-file on a full disk: the line is dropped whole (no torn
// line), one warning says so, and the container is created with its limits.
std::vector<Case> FullDisk() {
  return {
      {"RuntimeLogOnAFullDiskDropsTheLineWhole",
       Prog::kRuntime,
       0,
       {"oci-rlimit-runtime: warning: log \"{dir}/full/x.log\": a line of ",
        "bytes dropped, nothing written"},
       [](World& w) {
         const std::string log = FullDiskLog(w);
         RuntimeConfig(w, "rlimits = [\"memlock=1M:4M\"]\nlog-file = \"" + log + "\"\n");
       },
       true,
       "",
       {"bundle/config.json"},
       false,
       [](World& w, const CmdResult&) {
         EXPECT_EQ(MemlockIn(ReadFile(w.bundle + "/config.json")), "1048576:4194304");
         EXPECT_EQ(ReadFile(w.dir / "full/x.log"), std::string(4095, 'x') + "\n");
       }},
  };
}

}  // namespace

std::vector<Case> RuntimeCases() {
  return Join({ExecProcess(), ConfigAndArgv(), ConfigDeepToml(), Log(), DropInGone(), FullDisk()});
}

INSTANTIATE_TEST_SUITE_P(Runtime, BadInput, ::testing::ValuesIn(RuntimeCases()), CaseName);

}  // namespace ocirlimit::itest::badinput
