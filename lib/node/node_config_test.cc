#include "node/node_config.h"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <sstream>

namespace ocirlimit::node {
namespace {

constexpr const char* kBin = "/usr/local/bin/oci-rlimit-runtime";

// The handler tables of stock configs, trimmed to what matters here.
constexpr const char* kV2 = R"(version = 2
# the admin's own comment
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "example/pause:9"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/opt/cni/bin"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes]
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        pod_annotations = []
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = true
          NoPivotRoot = false
  # a comment about what follows
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = ""
)";

constexpr const char* kV3 = R"(version = 3
[plugins]
  [plugins.'io.containerd.cri.v1.runtime']
    enable_selinux = false
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes]
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
          runtime_type = 'io.containerd.runc.v2'
          sandboxer = 'podsandbox'
          [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
            SystemdCgroup = true
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = [
        '/usr/lib/cni',
        '/opt/cni/bin',
      ]
  [plugins.'io.containerd.grpc.v1.cri']
    disable_tcp_service = true
)";

toml::table P(const std::string& text) { return toml::parse(text); }

const toml::table* HandlerIn(const toml::table& root, std::string_view plugin,
                             const std::string& name) {
  return root["plugins"][plugin]["containerd"]["runtimes"][name].as_table();
}

// What toml++ writes: the file as nvidia-ctk leaves it, no comments.
std::string Rewritten(const toml::table& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

// NVIDIA's `nvidia-ctk runtime configure --set-as-default`, simulated.
std::string NvidiaRewrite(const std::string& text, std::string_view plugin) {
  toml::table t = P(text);
  toml::table& rt = *t["plugins"][plugin]["containerd"]["runtimes"].as_table();
  toml::table nv = *rt["runc"].as_table();
  nv["options"].as_table()->insert_or_assign("BinaryName", "/usr/bin/nvidia-container-runtime");
  rt.insert_or_assign("nvidia", nv);
  t["plugins"][plugin]["containerd"].as_table()->insert_or_assign("default_runtime_name", "nvidia");
  return Rewritten(t);
}

struct InstallCase {
  const char* name;
  std::string text;
  HandlerRequest req;
  std::string_view want_plugin;  // empty: an error is wanted
  std::string want_error;
  bool want_systemd = true;
  std::string want_base_binary{};
};

void PrintTo(const InstallCase& c, std::ostream* os) { *os << c.name; }

class InstallHandlerTest : public ::testing::TestWithParam<InstallCase> {};

TEST_P(InstallHandlerTest, WritesTheHandlerWhereTheVersionReadsIt) {
  const InstallCase& c = GetParam();
  auto edit = InstallHandler(c.text, "/etc/containerd/config.toml", c.req);
  if (c.want_plugin.empty()) {
    ASSERT_FALSE(edit.ok());
    EXPECT_NE(edit.error().Text().find(c.want_error), std::string::npos) << edit.error().Text();
    EXPECT_EQ(edit.error().Text().find('\n'), std::string::npos);
    return;
  }
  ASSERT_TRUE(edit.ok()) << edit.error().Text();
  EXPECT_TRUE(edit->changed);
  EXPECT_EQ(edit->base_binary, c.want_base_binary);
  toml::table out = P(edit->text);
  const toml::table* h = HandlerIn(out, c.want_plugin, c.req.name);
  ASSERT_NE(h, nullptr) << edit->text;
  EXPECT_EQ((*h)["runtime_type"].value<std::string>(), "io.containerd.runc.v2");
  EXPECT_EQ((*h)["options"]["BinaryName"].value<std::string>(), c.req.binary);
  EXPECT_EQ((*h)["options"]["SystemdCgroup"].value_or(false), c.want_systemd);
  const toml::array* pa = (*h)["pod_annotations"].as_array();
  ASSERT_NE(pa, nullptr);
  EXPECT_EQ(pa->size(), 1U);
  EXPECT_EQ((*pa)[0].value<std::string>(), "oci-rlimit.io/*");
  // Nobody else's settings changed, and the default handler is still there.
  const std::string def =
      out["plugins"][c.want_plugin]["containerd"]["default_runtime_name"].value_or(
          std::string("runc"));
  EXPECT_NE(HandlerIn(out, c.want_plugin, def), nullptr) << edit->text;
  // A second run changes nothing.
  auto again = InstallHandler(edit->text, "/etc/containerd/config.toml", c.req);
  ASSERT_TRUE(again.ok()) << again.error().Text();
  EXPECT_FALSE(again->changed);
  EXPECT_EQ(again->text, edit->text);
  // And uninstall gives back what it meant before.
  auto un =
      UninstallHandler(edit->text, "/etc/containerd/config.toml", c.req.name, edit->added_default);
  ASSERT_TRUE(un.ok()) << un.error().Text();
  EXPECT_EQ(HandlerIn(P(un->text), c.want_plugin, c.req.name), nullptr);
}

INSTANTIATE_TEST_SUITE_P(
    Node, InstallHandlerTest,
    ::testing::Values(
        InstallCase{"Version2", kV2, {"oci-rlimit", kBin, "runc"}, kCriPluginV2, ""},
        InstallCase{"Version3", kV3, {"oci-rlimit", kBin, "runc"}, kCriPluginV3, ""},
        InstallCase{
            "EmptyFileBecomesVersion2", "", {"oci-rlimit", kBin, "runc"}, kCriPluginV2, "", false},
        InstallCase{
            "OnlyVersion3", "version = 3\n", {"oci-rlimit", kBin, "runc"}, kCriPluginV3, "", false},
        InstallCase{"AfterNvidiaRewroteVersion2",
                    NvidiaRewrite(kV2, kCriPluginV2),
                    {"oci-rlimit", kBin, "runc"},
                    kCriPluginV2,
                    ""},
        InstallCase{"NvidiaBaseCopiesNvidiasHandler",
                    NvidiaRewrite(kV3, kCriPluginV3),
                    {"oci-rlimit", kBin, "nvidia"},
                    kCriPluginV3,
                    "",
                    true,
                    "/usr/bin/nvidia-container-runtime"},
        InstallCase{"InlineRuntimesTableIsRewritten",
                    "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
                    "runtimes = { runc = { runtime_type = \"io.containerd.runc.v2\", options = "
                    "{ SystemdCgroup = true } } }\n",
                    {"oci-rlimit", kBin, "runc"},
                    kCriPluginV2,
                    ""},
        InstallCase{"Version1IsRefused",
                    "[plugins.cri]\nx = 1\n",
                    {"oci-rlimit", kBin, "runc"},
                    "",
                    "no \"version\" key"},
        InstallCase{"Version4IsRefused",
                    "version = 4\n",
                    {"oci-rlimit", kBin, "runc"},
                    "",
                    "version: 4 is not 2 or 3"},
        InstallCase{"SomeoneElsesHandlerOfThatNameIsRefused",
                    std::string(kV2) +
                        "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.oci-rlimit]\n"
                        "runtime_type = \"io.containerd.runc.v2\"\n"
                        "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.oci-rlimit."
                        "options]\nBinaryName = \"/usr/bin/kata\"\n",
                    {"oci-rlimit", kBin, "runc"},
                    "",
                    "runs \"/usr/bin/kata\", not oci-rlimit-runtime"},
        InstallCase{"BadTomlNamesTheLine",
                    "version = 2\n[plugins\n",
                    {"oci-rlimit", kBin, "runc"},
                    "",
                    "containerd config \"/etc/containerd/config.toml\": line 2"}),
    [](const ::testing::TestParamInfo<InstallCase>& info) { return std::string(info.param.name); });

TEST(InstallHandler, KeepsTheAdminsCommentsAndLayout) {
  auto edit = InstallHandler(kV2, "c.toml", {"oci-rlimit", kBin, "runc"});
  ASSERT_TRUE(edit.ok()) << edit.error().Text();
  EXPECT_TRUE(edit->text.starts_with(kV2)) << edit->text;
  EXPECT_FALSE(edit->rewritten);
}

TEST(InstallHandler, RerunAfterACommentlessRewriteKeepsOneHandler) {
  auto first = InstallHandler(kV2, "c.toml", {"oci-rlimit", kBin, "runc"});
  ASSERT_TRUE(first.ok());
  std::string rewritten = NvidiaRewrite(first->text, kCriPluginV2);
  ASSERT_EQ(rewritten.find("# oci-rlimit"), std::string::npos);
  auto again = InstallHandler(rewritten, "c.toml", {"oci-rlimit", kBin, "runc"});
  ASSERT_TRUE(again.ok()) << again.error().Text();
  EXPECT_FALSE(again->changed);
  auto un = UninstallHandler(rewritten, "c.toml", "oci-rlimit", "");
  ASSERT_TRUE(un.ok()) << un.error().Text();
  toml::table out = P(un->text);
  EXPECT_EQ(HandlerIn(out, kCriPluginV2, "oci-rlimit"), nullptr);
  ASSERT_NE(HandlerIn(out, kCriPluginV2, "nvidia"), nullptr);
  EXPECT_EQ(out["plugins"][kCriPluginV2]["containerd"]["default_runtime_name"].value<std::string>(),
            "nvidia");
}

TEST(InstallHandler, ChangedRuncSettingsAreCopiedAgain) {
  auto first = InstallHandler(kV2, "c.toml", {"oci-rlimit", kBin, "runc"});
  ASSERT_TRUE(first.ok());
  std::string text = first->text;
  text.replace(text.find("SystemdCgroup = true"), 20, "SystemdCgroup = false");
  auto again = InstallHandler(text, "c.toml", {"oci-rlimit", kBin, "runc"});
  ASSERT_TRUE(again.ok()) << again.error().Text();
  EXPECT_TRUE(again->changed);
  EXPECT_EQ(P(again->text)["plugins"][kCriPluginV2]["containerd"]["runtimes"]["oci-rlimit"]
                          ["options"]["SystemdCgroup"]
                              .value<bool>(),
            false);
  EXPECT_EQ(again->text.find("# oci-rlimit"), again->text.rfind("# oci-rlimit")) << again->text;
}

TEST(InstallHandler, MovesAVersion2TableOutOfAVersion3File) {
  std::string text =
      std::string(kV3) +
      "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.oci-rlimit]\n"
      "runtime_type = \"io.containerd.runc.v2\"\n"
      "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.oci-rlimit.options]\n"
      "BinaryName = \"/usr/bin/oci-rlimit-runtime\"\n";
  auto edit = InstallHandler(text, "c.toml", {"oci-rlimit", kBin, "runc"});
  ASSERT_TRUE(edit.ok()) << edit.error().Text();
  toml::table out = P(edit->text);
  EXPECT_EQ(HandlerIn(out, kCriPluginV2, "oci-rlimit"), nullptr);
  EXPECT_NE(HandlerIn(out, kCriPluginV3, "oci-rlimit"), nullptr);
  ASSERT_EQ(edit->notes.size(), 1U);
  EXPECT_NE(edit->notes[0].find("does not read"), std::string::npos);
}

// issue 30: an up-to-date version 3 handler does not keep a stale version 2
// table of ours beside it.
TEST(InstallHandler, RemovesAStaleVersion2TableBesideAnUpToDateVersion3Handler) {
  auto first = InstallHandler(kV3, "c.toml", {"oci-rlimit", kBin, "runc"});
  ASSERT_TRUE(first.ok()) << first.error().Text();
  const std::string text =
      first->text +
      "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.oci-rlimit.options]\n"
      "BinaryName = \"/usr/bin/oci-rlimit-runtime\"\n";
  auto edit = InstallHandler(text, "c.toml", {"oci-rlimit", kBin, "runc"});
  ASSERT_TRUE(edit.ok()) << edit.error().Text();
  EXPECT_TRUE(edit->changed);
  toml::table out = P(edit->text);
  EXPECT_EQ(HandlerIn(out, kCriPluginV2, "oci-rlimit"), nullptr) << edit->text;
  EXPECT_NE(HandlerIn(out, kCriPluginV3, "oci-rlimit"), nullptr);
}

// A drop-in (containerd 2.x) copies the base from the file that wins it and
// declares no default handler.
TEST(InstallHandler, DropinCopiesTheBaseFromAnotherFile) {
  HandlerRequest req{"oci-rlimit", kBin, "runc"};
  req.base_text = kV2;
  req.declare_default = false;
  auto edit = InstallHandler("version = 2\n", "99-oci-rlimit.toml", req);
  ASSERT_TRUE(edit.ok()) << edit.error().Text();
  toml::table out = P(edit->text);
  const toml::table* h = HandlerIn(out, kCriPluginV2, "oci-rlimit");
  ASSERT_NE(h, nullptr) << edit->text;
  EXPECT_EQ((*h)["options"]["SystemdCgroup"].value<bool>(), true) << edit->text;
  EXPECT_EQ(HandlerIn(out, kCriPluginV2, "runc"), nullptr) << edit->text;
}

TEST(UninstallHandler, LeavesAHandlerThatIsNotOurs) {
  std::string text = std::string(kV2) +
                     "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.oci-rlimit]\n"
                     "runtime_type = \"io.containerd.kata.v2\"\n";
  auto un = UninstallHandler(text, "c.toml", "oci-rlimit", "");
  ASSERT_TRUE(un.ok()) << un.error().Text();
  EXPECT_FALSE(un->changed);
  EXPECT_EQ(un->text, text);
  EXPECT_EQ(un->notes.size(), 1U);
}

// The three one-line bugs the TOML editing once survived, each killed here.

// A version 2 table named oci-rlimit in a version 3 file that runs something
// else is not ours: install leaves it (containerd ignores it anyway).
TEST(InstallHandler, KeepsAStaleTableThatIsNotOurs) {
  const std::string stale =
      "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.oci-rlimit]\n"
      "runtime_type = \"io.containerd.kata.v2\"\n";
  auto edit = InstallHandler(std::string(kV3) + stale, "c.toml", {"oci-rlimit", kBin, "runc"});
  ASSERT_TRUE(edit.ok()) << edit.error().Text();
  toml::table out = P(edit->text);
  const toml::table* kept = HandlerIn(out, kCriPluginV2, "oci-rlimit");
  ASSERT_NE(kept, nullptr) << edit->text;
  EXPECT_EQ((*kept)["runtime_type"].value<std::string>(), "io.containerd.kata.v2");
  EXPECT_NE(HandlerIn(out, kCriPluginV3, "oci-rlimit"), nullptr);
  EXPECT_TRUE(edit->notes.empty());
}

// The bare default handler install declared goes with ours only when no
// other handler is left; one the admin wrote always stays.
struct DefaultCase {
  const char* name;
  std::string text;
  bool add_later;  // a handler added after the install
  bool want_runc;  // runc still declared after uninstall
};

class BareDefaultTest : public ::testing::TestWithParam<DefaultCase> {};

TEST_P(BareDefaultTest, UninstallKeepsTheDefaultWhileItMatters) {
  const DefaultCase& c = GetParam();
  auto edit = InstallHandler(c.text, "c.toml", {"oci-rlimit", kBin, "runc"});
  ASSERT_TRUE(edit.ok()) << edit.error().Text();
  std::string text = edit->text;
  if (c.add_later) {
    text +=
        "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.kata]\n"
        "runtime_type = \"io.containerd.kata.v2\"\n";
  }
  auto un = UninstallHandler(text, "c.toml", "oci-rlimit", edit->added_default);
  ASSERT_TRUE(un.ok()) << un.error().Text();
  toml::table out = P(un->text);
  EXPECT_EQ(HandlerIn(out, kCriPluginV2, "runc") != nullptr, c.want_runc) << un->text;
  EXPECT_EQ(HandlerIn(out, kCriPluginV2, "oci-rlimit"), nullptr);
  if (!c.add_later) {
    EXPECT_EQ(un->text, c.text) << "the file as it was";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Node, BareDefaultTest,
    ::testing::Values(
        DefaultCase{"DeclaredByInstallGoes", "version = 2\n", false, false},
        DefaultCase{"DeclaredByInstallStaysBesideAnotherHandler", "version = 2\n", true, true},
        DefaultCase{"TheAdminsOwnStays",
                    "version = 2\n"
                    "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
                    "runtime_type = \"io.containerd.runc.v2\"\n",
                    false, true}),
    [](const ::testing::TestParamInfo<DefaultCase>& info) { return std::string(info.param.name); });

// A base handler that already passes oci-rlimit.io/* gives a handler that
// lists it once.
TEST(InstallHandler, PodAnnotationsListOursOnce) {
  std::string text = kV2;
  text.replace(text.find("pod_annotations = []"), 20,
               "pod_annotations = [\"oci-rlimit.io/*\", \"x\"]");
  auto edit = InstallHandler(text, "c.toml", {"oci-rlimit", kBin, "runc"});
  ASSERT_TRUE(edit.ok()) << edit.error().Text();
  const toml::table out = P(edit->text);
  const toml::array* pa =
      out["plugins"][kCriPluginV2]["containerd"]["runtimes"]["oci-rlimit"]["pod_annotations"]
          .as_array();
  ASSERT_NE(pa, nullptr) << edit->text;
  ASSERT_EQ(pa->size(), 2U) << edit->text;
  EXPECT_EQ((*pa)[0].value<std::string>(), "oci-rlimit.io/*");
  EXPECT_EQ((*pa)[1].value<std::string>(), "x");
}

struct ScanCase {
  const char* name;
  std::string text;
  std::vector<std::string> want;  // each header's path joined by '|'
};

void PrintTo(const ScanCase& c, std::ostream* os) { *os << c.name; }

class ScanTomlHeadersTest : public ::testing::TestWithParam<ScanCase> {};

TEST_P(ScanTomlHeadersTest, FindsOnlyRealHeaders) {
  auto h = ScanTomlHeaders(GetParam().text);
  ASSERT_TRUE(h.ok()) << h.error().Text();
  std::vector<std::string> got;
  for (const auto& x : *h) {
    std::string s;
    for (const auto& p : x.path) s += (s.empty() ? "" : "|") + p;
    got.push_back((x.array ? "[[" : "") + s);
  }
  EXPECT_EQ(got, GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Node, ScanTomlHeadersTest,
    ::testing::Values(
        ScanCase{"QuotedKeys", "[a.\"b.c\".'d.e' . f]\n", {"a|b.c|d.e|f"}},
        ScanCase{"ArrayOfTables", "[[rule]]\n x = 1\n[[rule]] # two\n", {"[[rule", "[[rule"}},
        ScanCase{"MultiLineArrayValue", "[a]\nx = [\n  [1, 2],\n  [3],\n]\n[b]\n", {"a", "b"}},
        ScanCase{"MultiLineString", "[a]\nx = \"\"\"\n[not.a.header]\n\"\"\"\n[b]\n", {"a", "b"}},
        ScanCase{"LiteralMultiLineString", "[a]\nx = '''\n[no]\n'''\n", {"a"}},
        ScanCase{"CommentedHeader", "# [no]\n[a] # [no]\n", {"a"}}),
    [](const ::testing::TestParamInfo<ScanCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ocirlimit::node
