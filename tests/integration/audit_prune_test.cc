// audit --heal prunes decision records (docs/audit.md, "Pruning decision
// records") under real runc: two containers under one state root, each with
// a record written 20 minutes ago, as oci-rlimit-nri writes them; one is
// deleted behind the plugin's back (its RemoveContainer missed). audit
// --heal prunes that record, keeps the live one's, and keeps a record of a
// gone container written a minute ago (a create may be in flight).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "harness.h"

namespace ocirlimit::itest {
namespace {

std::string Ago(std::time_t seconds) {
  const std::time_t t = std::time(nullptr) - seconds;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

class AuditPruneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("runc");
    WriteFile(dir_ / "config.toml", "rlimits = [\"memlock=8M\"]\n");
    ASSERT_EQ(mkdir(Records().c_str(), 0700), 0);
  }
  void TearDown() override {
    for (const auto& id : ids_) RunCmd({"runc", "--root", dir_ / "state", "delete", "-f", id});
  }
  std::string Records() const { return dir_ / "decisions"; }
  // A record as oci-rlimit-nri writes it (formats/decision.h), `age` seconds old.
  void Record(const std::string& id, std::time_t age) {
    WriteFile(Records() + "/" + id,
              "# oci-rlimit: the decision made for one container\nversion=1\nid=" + id +
                  "\nby=nri\npolicy=p\ntime=" + Ago(age) + "\nlimits=memlock=8388608:8388608\n",
              0600);
  }
  std::string Start(const std::string& name) {
    const std::string bundle = dir_ / name;
    WriteSpec(bundle, MakeBundle(bundle, {"sleep", "600"}));
    const std::string id = UniqueId(name);
    ids_.push_back(id);
    CmdResult r = Sh("runc --root " + (dir_ / "state") + " run -d --bundle " + bundle + " " + id +
                     " </dev/null >/dev/null 2>" + bundle + "/run.err");
    EXPECT_EQ(r.status, 0) << ReadFile(bundle + "/run.err");
    return id;
  }
  CmdResult Audit(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {OurBinary("oci-rlimit"), "audit",          "--config",
                                     dir_ / "config.toml",    "--runtime-root", dir_ / "state",
                                     "--no-default-roots",    "--json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCmd(argv, {.stdin_data = {},
                         .env = {"OCI_RLIMIT_DECISIONS_DIR=" + Records()},
                         .cwd = {},
                         .timeout_s = 60});
  }

  TempDir dir_;
  std::vector<std::string> ids_;
};

TEST_F(AuditPruneTest, ARemovedContainersRecordIsPrunedAndALiveOneKept) {
  const std::string live = Start("live");
  const std::string gone = Start("gone");
  Record(live, 1200);
  Record(gone, 1200);
  Record("young-" + gone, 60);
  CmdResult rm = RunCmd({"runc", "--root", dir_ / "state", "delete", "-f", gone});
  ASSERT_EQ(rm.status, 0) << rm.err;

  CmdResult look = Audit({});
  Json j = Json::parse(look.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << look.out << look.err;
  EXPECT_TRUE(j["pruned"].empty()) << "audit without --heal changes nothing";
  EXPECT_TRUE(std::filesystem::exists(Records() + "/" + gone));

  CmdResult heal = Audit({"--heal"});
  j = Json::parse(heal.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << heal.out << heal.err;
  EXPECT_EQ(j["pruned"], Json::array({gone})) << heal.out;
  EXPECT_FALSE(std::filesystem::exists(Records() + "/" + gone));
  EXPECT_TRUE(std::filesystem::exists(Records() + "/" + live));
  EXPECT_TRUE(std::filesystem::exists(Records() + "/young-" + gone)) << "within the grace period";
}

}  // namespace
}  // namespace ocirlimit::itest
