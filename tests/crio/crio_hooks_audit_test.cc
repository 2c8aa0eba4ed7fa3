// hooks.d and audit on a real CRI-O 1.31.13, in the fixture's namespace:
// the package's hook file in CRI-O's stock hooks dir
// (/usr/share/containers/oci/hooks.d, which crio watches: no restart), and
// `oci-rlimit audit` over CRI-O's runtime root (runc runs with
// --root=/run/crun for every handler without runtime_root).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "crio_node.h"
#include "crio_probe.h"
#include "daemons.h"

namespace ocirlimit::itest::crio {
namespace {

namespace fs = std::filesystem;

constexpr Limit kConfigured{8 << 20, 8 << 20};  // memlock=8M
constexpr Limit kAudited{2 << 20, 4 << 20};     // memlock=2M:4M

class CrioHooksAuditTest : public CrioNodeTest {};

TEST_F(CrioHooksAuditTest, ThePackagesHookInCriosHooksDirSetsTheLimit) {
  WriteInNs("/etc/oci-rlimit/config.toml", "rlimits = [\"memlock=8M\"]\n");
  WriteInNs("/usr/local/bin/oci-rlimit-hook", ReadFile(OurBinary("oci-rlimit-hook")), 0755);
  Json hook = Json::parse(
      ReadFile(std::string(OCI_RLIMIT_SOURCE_DIR) + "/packaging/hooks.d/oci-rlimit.json"));
  hook["hook"]["path"] = "/usr/local/bin/oci-rlimit-hook";
  WriteInNs("/usr/share/containers/oci/hooks.d/oci-rlimit.json", hook.dump(2));
  // crio reads the file as it appears.
  Probe p;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    p = RunProbe(*crio_, crio_->NewPod("hooked"));
    ASSERT_TRUE(p.error.empty()) << p.error;
  } while (p.init != kConfigured && std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(p.init, kConfigured) << "init, with the hook in hooks.d\n" << Tail(crio_->Log());
  // The hook sets the init's limits; an exec session is runc's own child.
  EXPECT_EQ(InitMemlock(*crio_, p.id), kConfigured);
}

TEST_F(CrioHooksAuditTest, AuditReportsACrioContainerThatLacksItsLimit) {
  Probe p = RunProbe(*crio_, crio_->NewPod("audited"));
  ASSERT_TRUE(p.error.empty()) << p.error;
  ASSERT_EQ(p.init, kCrioMemlock);
  WriteInNs("/etc/oci-rlimit/config.toml", "rlimits = [\"memlock=2M:4M\"]\n");
  // No installer record: audit judges every container, under every default
  // root, /run/crun included.
  CmdResult r = Cli({"audit", "--json"});
  Json j = Json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  std::string status, root;
  for (const auto& c : j["containers"]) {
    if (c["id"] != p.id) continue;
    status = c["status"];
    root = c["root"];
  }
  EXPECT_EQ(status, "missing") << j.dump(2);
  EXPECT_EQ(root, "/run/crun") << "CRI-O's default runtime root";

  // --heal gives the init its limit, as the container itself reads it.
  CmdResult healed = Cli({"audit", "--heal"});
  EXPECT_EQ(healed.status, 0) << healed.out << healed.err;
  EXPECT_EQ(InitMemlock(*crio_, p.id), kAudited) << healed.out;
}

}  // namespace
}  // namespace ocirlimit::itest::crio
