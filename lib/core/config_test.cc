#include "core/config.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <map>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

constexpr uint64_t kInf = kRlimInfinity;

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// Resembles the config.toml that nvidia-container-toolkit installs, with the
// rlimits line of the NVIDIA proposal added to its runtime section.
constexpr const char* kNvidiaConfig = R"(#accept-nvidia-visible-devices-as-volume-mounts = false
#accept-nvidia-visible-devices-envvar-when-unprivileged = true
disable-require = false
supported-driver-capabilities = "compat32,compute,display,graphics,ngx,utility,video"
#swarm-resource = "DOCKER_RESOURCE_GPU"

[nvidia-container-cli]
#debug = "/var/log/nvidia-container-toolkit.log"
environment = []
#ldcache = "/etc/ld.so.cache"
ldconfig = "@/sbin/ldconfig.real"
load-kmods = true
#no-cgroups = false
#path = "/usr/bin/nvidia-container-cli"
#root = "/run/nvidia/driver"
#user = "root:video"

[nvidia-container-runtime]
#debug = "/var/log/nvidia-container-runtime.log"
log-level = "info"
mode = "auto"
runtimes = ["docker-runc", "runc", "crun"]
rlimits = ["memlock=unlimited", "nofile=65536:65536"]

[nvidia-container-runtime.modes]

[nvidia-container-runtime.modes.cdi]
annotation-prefixes = ["cdi.k8s.io/"]
default-kind = "nvidia.com/gpu"
spec-dirs = ["/etc/cdi", "/var/run/cdi"]

[nvidia-container-runtime.modes.csv]
mount-spec-path = "/etc/nvidia-container-runtime/host-files-for-container.d"

[nvidia-container-runtime-hook]
path = "nvidia-container-runtime-hook"
skip-mode-detection = false

[nvidia-ctk]
path = "nvidia-ctk"
)";

TEST(ParseConfig, EmptyFileGivesDefaults) {
  auto c = ParseConfig("", "/etc/oci-rlimit/config.toml");
  ASSERT_TRUE(c.ok()) << c.error().Text();
  EXPECT_TRUE(c->rlimits.empty());
  EXPECT_EQ(c->on_error, OnError::kFail);
  EXPECT_EQ(c->log_file, "");
  EXPECT_EQ(c->runtimes, (std::vector<std::string>{"runc", "crun"}));
  EXPECT_EQ(c->chain, "");
  EXPECT_EQ(c->source, "/etc/oci-rlimit/config.toml");
}

TEST(ParseConfig, ReadsEveryKey) {
  auto c = ParseConfig(R"(rlimits = ["memlock=unlimited", "nofile=1024:4096"]
on-error = "warn"
log-file = "/var/log/oci-rlimit.log"

[runtime]
runtimes = ["crun", "/usr/local/bin/runc"]

[hook]
chain = "/usr/bin/nvidia-container-runtime-hook"
)",
                       "c.toml");
  ASSERT_TRUE(c.ok()) << c.error().Text();
  EXPECT_EQ(c->rlimits,
            (std::vector<Rlimit>{{RLIMIT_MEMLOCK, kInf, kInf}, {RLIMIT_NOFILE, 1024, 4096}}));
  EXPECT_EQ(c->on_error, OnError::kWarn);
  EXPECT_EQ(c->log_file, "/var/log/oci-rlimit.log");
  EXPECT_EQ(c->runtimes, (std::vector<std::string>{"crun", "/usr/local/bin/runc"}));
  EXPECT_EQ(c->chain, "/usr/bin/nvidia-container-runtime-hook");
}

TEST(ParseConfig, OnErrorFailIsExplicitlyAccepted) {
  auto c = ParseConfig("on-error = \"warn\"\n", "c.toml");
  ASSERT_TRUE(c.ok()) << c.error().Text();
  ASSERT_EQ(c->on_error, OnError::kWarn);
  c = ParseConfig("on-error = \"fail\"\n", "c.toml");
  ASSERT_TRUE(c.ok()) << c.error().Text();
  EXPECT_EQ(c->on_error, OnError::kFail);
}

TEST(ParseConfig, ReadsTheNvidiaSectionAndIgnoresTheRestOfNvidiasFile) {
  auto c = ParseConfig(kNvidiaConfig, "/etc/nvidia-container-runtime/config.toml");
  ASSERT_TRUE(c.ok()) << c.error().Text();
  EXPECT_EQ(c->rlimits,
            (std::vector<Rlimit>{{RLIMIT_MEMLOCK, kInf, kInf}, {RLIMIT_NOFILE, 65536, 65536}}));
  // NVIDIA's own [nvidia-container-runtime] runtimes is not ours.
  EXPECT_EQ(c->runtimes, (std::vector<std::string>{"runc", "crun"}));
  EXPECT_EQ(c->on_error, OnError::kFail);
}

TEST(ParseConfig, NvidiaFileWithoutRlimitsConfiguresNothing) {
  std::string text = kNvidiaConfig;
  size_t at = text.find("rlimits = ");
  ASSERT_NE(at, std::string::npos);
  text.erase(at, text.find('\n', at) - at);
  auto c = ParseConfig(text, "nv.toml");
  ASSERT_TRUE(c.ok()) << c.error().Text();
  EXPECT_TRUE(c->rlimits.empty());
}

TEST(ParseConfig, OurKeysNextToNvidiasSections) {
  std::string text = "on-error = \"warn\"\n" + std::string(kNvidiaConfig);
  auto c = ParseConfig(text, "nv.toml");
  ASSERT_TRUE(c.ok()) << c.error().Text();
  EXPECT_EQ(c->on_error, OnError::kWarn);
  EXPECT_EQ(c->rlimits.size(), 2u);
}

struct BadConfig {
  const char* name;
  const char* toml;
  std::vector<const char*> message_parts;  // the error must contain each
};

class ParseConfigBad : public ::testing::TestWithParam<BadConfig> {};

TEST_P(ParseConfigBad, NamesTheFileAndTheProblem) {
  const BadConfig& c = GetParam();
  auto r = ParseConfig(c.toml, "/etc/oci-rlimit/config.toml");
  ASSERT_FALSE(r.ok()) << c.toml;
  const std::string text = r.error().Text();
  EXPECT_NE(text.find("\"/etc/oci-rlimit/config.toml\""), std::string::npos) << text;
  for (const char* part : c.message_parts) {
    EXPECT_NE(text.find(part), std::string::npos) << "want \"" << part << "\" in: " << text;
  }
  EXPECT_EQ(text.find('\n'), std::string::npos) << "one line: " << text;
}

INSTANTIATE_TEST_SUITE_P(
    Config, ParseConfigBad,
    ::testing::Values(
        BadConfig{"UnknownTopLevelKey", "rlimit = [\"memlock=1\"]\n", {"unknown key \"rlimit\""}},
        BadConfig{"UnknownTable", "[hooks]\nchain = \"/x\"\n", {"unknown key \"hooks\""}},
        BadConfig{"UnknownRuntimeKey",
                  "[runtime]\nruntime = [\"runc\"]\n",
                  {"unknown key \"runtime.runtime\""}},
        BadConfig{"UnknownHookKey", "[hook]\nchains = \"/x\"\n", {"unknown key \"hook.chains\""}},
        BadConfig{"RlimitsNotArray", "rlimits = \"memlock=1\"\n", {"rlimits: must be an array"}},
        BadConfig{"NulInLogFile",
                  "log-file = \"/var/log/a\\u0000b\"\n",
                  {"log-file: contains a NUL character"}},
        BadConfig{"NulInRuntime",
                  "[runtime]\nruntimes = [\"runc\", \"/usr/bin/crun\\u0000\"]\n",
                  {"runtime.runtimes[1]: contains a NUL character"}},
        BadConfig{"RlimitsItemNotString",
                  "rlimits = [\"memlock=1\", 5]\n",
                  {"rlimits[1]: must be a string"}},
        BadConfig{"RlimitsBadEntry",
                  "rlimits = [\"memlok=1\"]\n",
                  {"rlimits", "unknown name \"memlok\""}},
        BadConfig{"RlimitsTwice",
                  "rlimits = [\"memlock=1\", \"MEMLOCK=2\"]\n",
                  {"rlimits", "given twice"}},
        BadConfig{"OnErrorBadValue",
                  "on-error = \"ignore\"\n",
                  {"on-error: \"ignore\" is not \"fail\" or \"warn\""}},
        BadConfig{"OnErrorWrongType", "on-error = true\n", {"on-error: must be a string"}},
        BadConfig{"LogFileRelative",
                  "log-file = \"oci-rlimit.log\"\n",
                  {"log-file: \"oci-rlimit.log\" must be absolute"}},
        BadConfig{"LogFileWrongType", "log-file = 5\n", {"log-file: must be a string"}},
        BadConfig{"RuntimeNotTable", "runtime = \"runc\"\n", {"runtime: must be a table"}},
        BadConfig{"RuntimesEmpty",
                  "[runtime]\nruntimes = []\n",
                  {"runtime.runtimes: must name at least one runtime"}},
        BadConfig{"RuntimesEmptyName",
                  "[runtime]\nruntimes = [\"runc\", \"\"]\n",
                  {"runtime.runtimes: empty runtime name"}},
        BadConfig{"RuntimesNotStrings",
                  "[runtime]\nruntimes = [1]\n",
                  {"runtime.runtimes[0]: must be a string"}},
        BadConfig{"HookNotTable", "hook = 1\n", {"hook: must be a table"}},
        BadConfig{"ChainRelative",
                  "[hook]\nchain = \"nvidia-container-runtime-hook\"\n",
                  {"hook.chain: \"nvidia-container-runtime-hook\" must be an absolute path"}},
        BadConfig{"RlimitsInBothPlaces",
                  "rlimits = [\"memlock=1\"]\n[nvidia-container-runtime]\nrlimits = "
                  "[\"memlock=2\"]\n",
                  {"rlimits is set both at the top level and in [nvidia-container-runtime]"}},
        BadConfig{"NvidiaRlimitsBadEntry",
                  "[nvidia-container-runtime]\nrlimits = [\"memlock=2:1\"]\n",
                  {"nvidia-container-runtime.rlimits", "soft 2 is greater than hard 1"}},
        BadConfig{"NvidiaSectionNotTable",
                  "nvidia-container-runtime = 1\n",
                  {"nvidia-container-runtime: must be a table"}},
        BadConfig{"SyntaxErrorNamesTheLine",
                  "on-error = \"warn\"\n\nrlimits = [\"memlock=1\"\n",
                  {"line 3"}},
        BadConfig{"SyntaxErrorUnterminatedString", "log-file = \"/x\n", {"line 1"}},
        BadConfig{"DuplicateKey", "on-error = \"warn\"\non-error = \"fail\"\n", {"line 2"}}),
    [](const ::testing::TestParamInfo<BadConfig>& info) { return std::string(info.param.name); });

struct EnvCase {
  const char* name;
  const char* file;  // config text
  std::map<std::string, std::string> env;
  std::vector<Rlimit> want;
};

class EnvOverrides : public ::testing::TestWithParam<EnvCase> {};

TEST_P(EnvOverrides, OverrideSameTypeEntries) {
  const EnvCase& c = GetParam();
  auto cfg = ParseConfig(c.file, "c.toml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().Text();
  auto out = ApplyEnvOverrides(*cfg, FakeEnv(c.env));
  ASSERT_TRUE(out.ok()) << out.error().Text();
  EXPECT_EQ(out->rlimits, c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Config, EnvOverrides,
    ::testing::Values(
        EnvCase{"NoEnv", "rlimits = [\"memlock=1\"]", {}, {{RLIMIT_MEMLOCK, 1, 1}}},
        EnvCase{"OursReplacesSameType",
                "rlimits = [\"nofile=5\", \"memlock=1\"]",
                {{"OCI_RLIMIT_RLIMITS", "memlock=unlimited"}},
                {{RLIMIT_NOFILE, 5, 5}, {RLIMIT_MEMLOCK, kInf, kInf}}},
        EnvCase{"NvidiaReplacesSameType",
                "rlimits = [\"memlock=1\"]",
                {{"NVIDIA_CONTAINER_RUNTIME_RLIMITS", "memlock=2"}},
                {{RLIMIT_MEMLOCK, 2, 2}}},
        EnvCase{"NewTypesAppend",
                "rlimits = [\"memlock=1\"]",
                {{"OCI_RLIMIT_RLIMITS", "core=0, nofile=10:20"}},
                {{RLIMIT_MEMLOCK, 1, 1}, {RLIMIT_CORE, 0, 0}, {RLIMIT_NOFILE, 10, 20}}},
        EnvCase{"OursBeatsNvidias",
                "",
                {{"OCI_RLIMIT_RLIMITS", "memlock=3"},
                 {"NVIDIA_CONTAINER_RUNTIME_RLIMITS", "memlock=4,nofile=7"}},
                {{RLIMIT_MEMLOCK, 3, 3}, {RLIMIT_NOFILE, 7, 7}}},
        EnvCase{"EnvOverridesTheNvidiaSection",
                "[nvidia-container-runtime]\nrlimits = [\"memlock=1\", \"stack=8M\"]",
                {{"NVIDIA_CONTAINER_RUNTIME_RLIMITS", "memlock=unlimited"}},
                {{RLIMIT_MEMLOCK, kInf, kInf}, {RLIMIT_STACK, 8 << 20, 8 << 20}}},
        EnvCase{"EmptyEnvChangesNothing",
                "rlimits = [\"memlock=1\"]",
                {{"OCI_RLIMIT_RLIMITS", ""}, {"NVIDIA_CONTAINER_RUNTIME_RLIMITS", " , "}},
                {{RLIMIT_MEMLOCK, 1, 1}}}),
    [](const ::testing::TestParamInfo<EnvCase>& info) { return std::string(info.param.name); });

struct BadEnvCase {
  const char* variable;
  const char* value;
  const char* message_part;
};
void PrintTo(const BadEnvCase& c, std::ostream* os) { *os << c.variable << "=" << c.value; }

class EnvOverridesBad : public ::testing::TestWithParam<BadEnvCase> {};

TEST_P(EnvOverridesBad, NameTheVariable) {
  const BadEnvCase& c = GetParam();
  auto out = ApplyEnvOverrides(Config{}, FakeEnv({{c.variable, c.value}}));
  ASSERT_FALSE(out.ok()) << c.variable << "=" << c.value;
  const std::string text = out.error().Text();
  EXPECT_NE(text.find(std::string("environment ") + c.variable + ": "), std::string::npos) << text;
  EXPECT_NE(text.find(c.message_part), std::string::npos) << text;
}

INSTANTIATE_TEST_SUITE_P(
    Config, EnvOverridesBad,
    ::testing::Values(BadEnvCase{"OCI_RLIMIT_RLIMITS", "memlok=1", "unknown name \"memlok\""},
                      BadEnvCase{"OCI_RLIMIT_RLIMITS", "memlock=1,memlock=2", "given twice"},
                      BadEnvCase{"NVIDIA_CONTAINER_RUNTIME_RLIMITS", "memlock", "NAME=SOFT"},
                      BadEnvCase{"NVIDIA_CONTAINER_RUNTIME_RLIMITS", "nofile=1K",
                                 "not measured in bytes"}));

struct PathCase {
  const char* name;
  std::optional<std::string> flag;
  std::map<std::string, std::string> env;
  std::string want_path;
  bool want_must_exist;
};

class ResolveConfigPathTest : public ::testing::TestWithParam<PathCase> {};

TEST_P(ResolveConfigPathTest, FlagBeatsEnvBeatsDefault) {
  const PathCase& c = GetParam();
  ConfigPath p = ResolveConfigPath(c.flag, FakeEnv(c.env));
  EXPECT_EQ(p.path, c.want_path);
  EXPECT_EQ(p.must_exist, c.want_must_exist);
}

INSTANTIATE_TEST_SUITE_P(
    Config, ResolveConfigPathTest,
    ::testing::Values(
        PathCase{"Default", std::nullopt, {}, "/etc/oci-rlimit/config.toml", false},
        PathCase{"Env", std::nullopt, {{"OCI_RLIMIT_CONFIG", "/e.toml"}}, "/e.toml", true},
        PathCase{"EmptyEnvMeansDefault",
                 std::nullopt,
                 {{"OCI_RLIMIT_CONFIG", ""}},
                 "/etc/oci-rlimit/config.toml",
                 false},
        PathCase{"Flag", "/f.toml", {}, "/f.toml", true},
        PathCase{"FlagBeatsEnv", "/f.toml", {{"OCI_RLIMIT_CONFIG", "/e.toml"}}, "/f.toml", true},
        PathCase{"FlagNamingTheDefaultMustExist",
                 "/etc/oci-rlimit/config.toml",
                 {},
                 "/etc/oci-rlimit/config.toml",
                 true}),
    [](const ::testing::TestParamInfo<PathCase>& info) { return std::string(info.param.name); });

// Drop-ins: files merged in order, the later winning key by key.
struct MergeCase {
  const char* name;
  std::vector<std::string> texts;  // file i is "/etc/f<i>.toml"
  std::string want_rlimits;        // RlimitListText of the merged top-level rlimits
  size_t want_rules = 0;
  std::vector<std::string> want_runtimes = {"runc", "crun"};
  bool want_requests = false;
  std::string want_error;  // substring, or empty
};

std::string RlimitsText(const std::vector<Rlimit>& rl) {
  std::string out;
  for (const auto& r : rl) out += (out.empty() ? "" : ",") + FormatRlimit(r);
  return out;
}

class ParseConfigFilesTest : public ::testing::TestWithParam<MergeCase> {};

TEST_P(ParseConfigFilesTest, MergesInOrder) {
  const MergeCase& c = GetParam();
  std::vector<ConfigFile> files;
  for (size_t i = 0; i < c.texts.size(); ++i) {
    files.push_back({"/etc/f" + std::to_string(i) + ".toml", c.texts[i]});
  }
  auto cfg = ParseConfigFiles(files);
  if (!c.want_error.empty()) {
    ASSERT_FALSE(cfg.ok());
    EXPECT_NE(cfg.error().Text().find(c.want_error), std::string::npos) << cfg.error().Text();
    return;
  }
  ASSERT_TRUE(cfg.ok()) << cfg.error().Text();
  EXPECT_EQ(RlimitsText(cfg->rlimits), c.want_rlimits);
  EXPECT_EQ(cfg->rules.size(), c.want_rules);
  EXPECT_EQ(cfg->runtimes, c.want_runtimes);
  EXPECT_EQ(cfg->requests.enabled, c.want_requests);
}

INSTANTIATE_TEST_SUITE_P(
    Config, ParseConfigFilesTest,
    ::testing::Values(
        MergeCase{"LaterFileReplacesRlimits",
                  {"rlimits = [\"memlock=unlimited\"]\n", "rlimits = [\"nofile=1024\"]\n"},
                  "nofile=1024:1024",
                  0,
                  {"runc", "crun"},
                  false,
                  ""},
        MergeCase{"InstallerDropInKeepsAdminRules",
                  {"rlimits = [\"memlock=unlimited\"]\n[runtime]\nruntimes = [\"/nv\"]\n",
                   "[[rule]]\nrlimits = [\"memlock=1024\"]\nmatch = { always = true }\n"},
                  "memlock=unlimited:unlimited",
                  1,
                  {"/nv"},
                  false,
                  ""},
        MergeCase{
            "RulesFromBothFilesAppend",
            {"[[rule]]\nname = \"a\"\nrlimits = [\"memlock=1\"]\nmatch = { always = true }\n",
             "[[rule]]\nname = \"b\"\nrlimits = [\"memlock=2\"]\nmatch = { always = true }\n"},
            "",
            2,
            {"runc", "crun"},
            false,
            ""},
        MergeCase{"RequestsTableMergesKeyByKey",
                  {"[requests]\nceilings = [\"memlock=4096\"]\n", "[requests]\nenabled = true\n"},
                  "",
                  0,
                  {"runc", "crun"},
                  true,
                  ""},
        MergeCase{"SyntaxErrorNamesItsFile",
                  {"rlimits = [\"memlock=1\"]\n", "rlimits = [\n"},
                  "",
                  0,
                  {"runc", "crun"},
                  false,
                  "config \"/etc/f1.toml\": line"},
        MergeCase{"MergedErrorNamesEveryFile",
                  {"rlimits = [\"memlock=1\"]\n", "bogus = 1\n"},
                  "",
                  0,
                  {"runc", "crun"},
                  false,
                  "config \"/etc/f0.toml\" + \"/etc/f1.toml\": unknown key \"bogus\""},
        // The installer's drop-in (top level) before an admin's NVIDIA-form
        // file, and the other way round: across files the later one wins,
        // whatever its form.
        MergeCase{"NvidiaFormFileAfterTopLevelDropInWins",
                  {"rlimits = [\"memlock=unlimited\"]\n",
                   "[nvidia-container-runtime]\nrlimits = [\"memlock=8M\"]\n"},
                  "memlock=8388608:8388608",
                  0,
                  {"runc", "crun"},
                  false,
                  ""},
        MergeCase{"TopLevelFileAfterNvidiaFormDropInWins",
                  {"[nvidia-container-runtime]\nrlimits = [\"memlock=8M\"]\n",
                   "rlimits = [\"nofile=1024\"]\n"},
                  "nofile=1024:1024",
                  0,
                  {"runc", "crun"},
                  false,
                  ""},
        MergeCase{"NvidiaFormDropInUnderAFileWithoutRlimitsStays",
                  {"[nvidia-container-runtime]\nrlimits = [\"memlock=8M\"]\n",
                   "log-file = \"/var/log/x.log\"\n[nvidia-container-runtime]\ndebug = 1\n"},
                  "memlock=8388608:8388608",
                  0,
                  {"runc", "crun"},
                  false,
                  ""},
        MergeCase{"ThreeFilesAlternatingFormsLastWins",
                  {"rlimits = [\"memlock=1\"]\n",
                   "[nvidia-container-runtime]\nrlimits = [\"memlock=2\"]\n",
                   "rlimits = [\"memlock=3\"]\n"},
                  "memlock=3:3",
                  0,
                  {"runc", "crun"},
                  false,
                  ""},
        MergeCase{"BothFormsInOneFileStayAnErrorNamingIt",
                  {"rlimits = [\"memlock=1\"]\n",
                   "rlimits = [\"memlock=2\"]\n[nvidia-container-runtime]\nrlimits = "
                   "[\"memlock=3\"]\n"},
                  "",
                  0,
                  {"runc", "crun"},
                  false,
                  "config \"/etc/f1.toml\": rlimits is set both at the top level and in "
                  "[nvidia-container-runtime]; keep one"}),
    [](const ::testing::TestParamInfo<MergeCase>& info) { return std::string(info.param.name); });

TEST(DropInDir, ReplacesTheTomlSuffix) {
  EXPECT_EQ(DropInDir("/etc/oci-rlimit/config.toml"), "/etc/oci-rlimit/config.d");
  EXPECT_EQ(DropInDir("/x/rl"), "/x/rl.d");
}

}  // namespace
}  // namespace ocirlimit
