// The bad-input catalogue (bad_input.h), oci-rlimit-runtime create: the
// bundle's config.json (the file, its JSON, its rlimits) and its rewrite.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "bad_input.h"

namespace ocirlimit::itest::badinput {
namespace {

namespace fs = std::filesystem;

// A tmpfs of 64 KiB holding the bundle, filled to the last block.
void FullDisk(World& w) {
  const std::string mnt = w.dir / "full";
  fs::create_directories(mnt);
  ASSERT_EQ(mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k,mode=0755"), 0) << strerror(errno);
  w.bundle = mnt + "/bundle";
  w.vars["{bundle}"] = w.bundle;
  fs::create_directories(w.bundle);
  // A spec that, merged, needs more room than is left.
  Json spec = Json::parse(kMinimalSpec);
  spec["annotations"]["padding"] = Big(8000);
  WriteFile(w.bundle + "/config.json", spec.dump());
  Sh("dd if=/dev/zero of=" + mnt + "/filler bs=1k 2>/dev/null; sync");
  w.args = {"create", "--bundle", w.bundle, "bad-input"};
}

void ReadOnlyBundle(World& w) {
  ASSERT_EQ(mount(w.bundle.c_str(), w.bundle.c_str(), nullptr, MS_BIND, nullptr), 0)
      << strerror(errno);
  ASSERT_EQ(mount(nullptr, w.bundle.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr), 0)
      << strerror(errno);
}

// The spec file: missing, not a regular file, unreadable, a symlink; no room
// or no write access for the rewrite.
std::vector<Case> SpecFile() {
  return {
      {"RuntimeSpecMissing",
       Prog::kRuntime,
       1,
       {"{bundle}/config.json", "No such file"},
       [](World& w) { fs::remove(w.bundle + "/config.json"); }},
      {"RuntimeSpecDirectory",
       Prog::kRuntime,
       1,
       {"{bundle}/config.json", "not a regular file"},
       [](World& w) {
         fs::remove(w.bundle + "/config.json");
         fs::create_directory(w.bundle + "/config.json");
       }},
      {"RuntimeSpecFifo",
       Prog::kRuntime,
       1,
       {"{bundle}/config.json", "not a regular file"},
       [](World& w) {
         fs::remove(w.bundle + "/config.json");
         ASSERT_EQ(mkfifo((w.bundle + "/config.json").c_str(), 0644), 0);
       }},
      {"RuntimeSpecUnreadableAsNobody",
       Prog::kRuntime,
       1,
       {"{bundle}/config.json", "Permission denied"},
       [](World& w) {
         chmod(w.bundle.c_str(), 0755);
         chmod(w.config.c_str(), 0644);
         chmod(w.outside.path().c_str(), 0755);  // the stand-in runtime stays reachable
         ForNobody(w, w.bundle + "/config.json");
       }},
      {"RuntimeSpecSymlink",
       Prog::kRuntime,
       1,
       {"{bundle}/config.json", "is a symlink"},
       [](World& w) {
         fs::rename(w.bundle + "/config.json", w.dir / "real.json");
         fs::create_symlink(w.dir / "real.json", w.bundle + "/config.json");
       }},
      {"RuntimeReadOnlyBundle",
       Prog::kRuntime,
       1,
       {"replace \"{bundle}/config.json\"", "Read-only file system"},
       [](World& w) { ReadOnlyBundle(w); }},
      {"RuntimeFullDisk",
       Prog::kRuntime,
       1,
       {"replace \"{bundle}/config.json\"", "No space left on device"},
       [](World& w) { FullDisk(w); }},
  };
}

// Its JSON: malformed, not an object, too deep, a key runc reads another way.
std::vector<Case> SpecJson() {
  return {
      {"RuntimeSpecMalformed",
       Prog::kRuntime,
       1,
       {"{bundle}/config.json\": not valid JSON"},
       [](World& w) { WriteFile(w.bundle + "/config.json", "{\"process\": "); }},
      {"RuntimeSpecInvalidUtf8",
       Prog::kRuntime,
       1,
       {"{bundle}/config.json\": not valid JSON"},
       [](World& w) {
         WriteFile(w.bundle + "/config.json",
                   R"({"process":{"args":[")" + std::string("\xc0\xaf") + R"("]}})");
       }},
      {"RuntimeSpecNotObject",
       Prog::kRuntime,
       1,
       {"{bundle}/config.json\": must be a JSON object"},
       [](World& w) { WriteFile(w.bundle + "/config.json", "[]"); }},
      {"RuntimeSpecDeeplyNested",
       Prog::kRuntime,
       1,
       {"\"{bundle}/config.json\": nested deeper than 64 levels"},
       [](World& w) { WriteFile(w.bundle + "/config.json", DeepSpec()); }},
      {"RuntimeSpecProcessKeyCase",
       Prog::kRuntime,
       1,
       {"\"{bundle}/config.json\": key \"Process\" in the spec differs only by case from "
        "\"process\""},
       [](World& w) {
         WriteFile(w.bundle + "/config.json",
                   R"({"ociVersion":"1.0.2","Process":{"args":["sh"]}})");
       }},
      {"RuntimeSpecProcessTwice",
       Prog::kRuntime,
       1,
       {"\"{bundle}/config.json\": key \"process\" appears twice in the spec"},
       [](World& w) {
         WriteFile(w.bundle + "/config.json",
                   R"({"process":{"args":["sh"]},"process":{"args":["sh"]}})");
       }},
      {"RuntimeSpecRlimitsUpperCase",
       Prog::kRuntime,
       1,
       {"\"{bundle}/config.json\": key \"RLIMITS\" in process differs only by case from "
        "\"rlimits\""},
       [](World& w) {
         WriteFile(
             w.bundle + "/config.json",
             R"({"process":{"args":["sh"],"RLIMITS":[{"type":"RLIMIT_CORE","soft":0,"hard":0}]}})");
       }},
  };
}

// process.rlimits[] keys runc reads another way; a huge type is cut.
std::vector<Case> SpecRlimitKeys() {
  return {
      {"RuntimeSpecRlimitsTwice",
       Prog::kRuntime,
       1,
       {"\"{bundle}/config.json\": key \"rlimits\" appears twice in process"},
       [](World& w) {
         WriteFile(w.bundle + "/config.json",
                   R"({"process":{"args":["sh"],"rlimits":[],"rlimits":[]}})");
       }},
      {"RuntimeSpecEntryTypeCase",
       Prog::kRuntime,
       1,
       {"\"{bundle}/config.json\": key \"TYPE\" in process.rlimits[] differs only by case from "
        "\"type\""},
       [](World& w) {
         WriteFile(
             w.bundle + "/config.json",
             R"({"process":{"rlimits":[{"TYPE":"RLIMIT_CORE","type":"RLIMIT_CORE","soft":0,"hard":0}]}})");
       }},
      {"RuntimeSpecEntrySoftTwice",
       Prog::kRuntime,
       1,
       {"\"{bundle}/config.json\": key \"soft\" appears twice in process.rlimits[]"},
       [](World& w) {
         WriteFile(
             w.bundle + "/config.json",
             R"({"process":{"rlimits":[{"type":"RLIMIT_CORE","soft":0,"soft":1,"hard":1}]}})");
       }},
      {"RuntimeSpecEntryHardCase",
       Prog::kRuntime,
       1,
       {"\"{bundle}/config.json\": key \"Hard\" in process.rlimits[] differs only by case from "
        "\"hard\""},
       [](World& w) {
         WriteFile(
             w.bundle + "/config.json",
             R"({"process":{"rlimits":[{"type":"RLIMIT_CORE","soft":0,"Hard":1,"hard":1}]}})");
       }},
      {"RuntimeSpecHugeRlimitTypeIsCut",
       Prog::kRuntime,
       1,
       {"rlimits[0].type: unknown rlimit \"RLIMIT_XXXX", "\u2026\" (60007 bytes)"},
       [](World& w) {
         WriteFile(w.bundle + "/config.json", R"({"process":{"rlimits":[{"type":"RLIMIT_)" +
                                                  std::string(60000, 'X') +
                                                  R"(","soft":1,"hard":1}]}})");
       }},
  };
}

// process.rlimits of the wrong type or value; a setuid spec left as it was.
std::vector<Case> SpecRlimitValues() {
  return {
      {"RuntimeSpecRlimitsWrongType",
       Prog::kRuntime,
       1,
       {"rlimits: must be an array"},
       [](World& w) {
         WriteFile(w.bundle + "/config.json", R"({"process":{"args":["sh"],"rlimits":"many"}})");
       }},
      {"RuntimeSpecRlimitTypeTypo",
       Prog::kRuntime,
       1,
       {"rlimits[0].type: unknown rlimit \"RLIMIT_MEMLOK\""},
       [](World& w) {
         WriteFile(
             w.bundle + "/config.json",
             R"({"process":{"args":["sh"],"rlimits":[{"type":"RLIMIT_MEMLOK","soft":1,"hard":1}]}})");
       }},
      {"RuntimeSpecRlimitNegative",
       Prog::kRuntime,
       1,
       {"rlimits[0].soft: -1 is not an unsigned integer"},
       [](World& w) {
         WriteFile(
             w.bundle + "/config.json",
             R"({"process":{"args":["sh"],"rlimits":[{"type":"RLIMIT_CORE","soft":-1,"hard":1}]}})");
       }},
      {"RuntimeRejectedCreateKeeps6644SpecInode",
       Prog::kRuntime,
       1,
       {"rlimits[0].soft: -1 is not an unsigned integer"},
       [](World& w) {
         WriteFile(
             w.bundle + "/config.json",
             R"({"process":{"args":["sh"],"rlimits":[{"type":"RLIMIT_CORE","soft":-1,"hard":1}]}})");
         ASSERT_EQ(chown((w.bundle + "/config.json").c_str(), 65534, 65534), 0);
         ASSERT_EQ(chmod((w.bundle + "/config.json").c_str(), 06644), 0);
       }},
  };
}

}  // namespace

std::vector<Case> RuntimeSpecCases() {
  return Join({SpecFile(), SpecJson(), SpecRlimitKeys(), SpecRlimitValues()});
}

INSTANTIATE_TEST_SUITE_P(RuntimeSpec, BadInput, ::testing::ValuesIn(RuntimeSpecCases()), CaseName);

}  // namespace ocirlimit::itest::badinput
