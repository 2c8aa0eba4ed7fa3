// The record (node_record.cc) and preflight (node_preflight.cc) over a fake
// filesystem (tests/testing/fake_host_fs.h): a write that fails leaves
// nothing half done, and a refusal writes nothing.
#include "node/node_record.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <sstream>

#include "node/node_preflight.h"
#include "tests/testing/fake_host_fs.h"

namespace ocirlimit::node {
namespace {

using ocirlimit::testing::FakeHostFs;

constexpr const char* kHost = "/h";

NodeRecord Load(FakeHostFs& fs) {
  auto rec = NodeRecord::Load(fs, kHost);
  EXPECT_TRUE(rec) << rec.error().Text();
  return std::move(*rec);
}

// node_record.cc: a new file whose content cannot be written is not left
// behind empty; the error says why.
TEST(NodeRecordFs, ANewFileWhoseWriteFailsIsRemovedAgain) {
  FakeHostFs fs;
  fs.AddDir("/h/etc");
  fs.fail["replace /h/etc/x.toml"] = EIO;
  NodeRecord rec = Load(fs);
  std::ostringstream out;
  auto placed = rec.Place("/etc/x.toml", "a = 1\n", 0644, out);
  ASSERT_FALSE(placed);
  EXPECT_EQ(placed.error().err, EIO);
  EXPECT_FALSE(fs.Has("/h/etc/x.toml"));
  EXPECT_EQ(out.str(), "");
}

// node_record.cc: an existing file that cannot be replaced keeps its content.
TEST(NodeRecordFs, AnExistingFileWhoseWriteFailsKeepsItsContent) {
  FakeHostFs fs;
  fs.AddFile("/h/etc/x.toml", "old\n");
  fs.fail["replace /h/etc/x.toml"] = ENOSPC;
  NodeRecord rec = Load(fs);
  std::ostringstream out;
  ASSERT_FALSE(rec.Place("/etc/x.toml", "new\n", 0644, out));
  ASSERT_TRUE(fs.Has("/h/etc/x.toml"));
  EXPECT_EQ(fs.files["/h/etc/x.toml"].content, "old\n");
}

// node_record.cc: a new file in a new directory: the directory and the file
// are recorded before they exist, and the file gets its mode.
TEST(NodeRecordFs, ANewFileIsRecordedBeforeItIsWritten) {
  FakeHostFs fs;
  fs.AddDir("/h/etc");
  NodeRecord rec = Load(fs);
  std::ostringstream out;
  auto placed = rec.Place("/etc/new/x", "x\n", 0755, out);
  ASSERT_TRUE(placed) << placed.error().Text();
  EXPECT_TRUE(*placed);
  EXPECT_EQ(out.str(), "wrote /etc/new/x\n");
  EXPECT_EQ(fs.files["/h/etc/new/x"].mode, 0755U);
  EXPECT_TRUE(rec.Recorded("dir", "/etc/new"));
  EXPECT_TRUE(rec.Recorded("created", "/etc/new/x"));
  const std::string manifest = fs.files["/h/var/lib/oci-rlimit/node-install/manifest"].content;
  EXPECT_NE(manifest.find("dir /etc/new\ncreated /etc/new/x\n"), std::string::npos) << manifest;
  // The manifest named the file before the file was made.
  const auto& c = fs.changes;
  auto at = [&](const std::string& s) { return std::find(c.begin(), c.end(), s) - c.begin(); };
  EXPECT_LT(at("replace /h/var/lib/oci-rlimit/node-install/manifest"), at("create /h/etc/new/x"));
}

// node_record.cc: the same content with another mode is a chmod, not a write;
// the same content and mode is nothing at all.
TEST(NodeRecordFs, OnlyTheModeChangedIsAChmod) {
  FakeHostFs fs;
  fs.AddFile("/h/bin/p", "x\n", 0700);
  NodeRecord rec = Load(fs);
  std::ostringstream out;
  ASSERT_TRUE(rec.Place("/bin/p", "x\n", 0755, out));
  EXPECT_EQ(fs.files["/h/bin/p"].mode, 0755U);
  fs.changes.clear();
  auto again = rec.Place("/bin/p", "x\n", 0755, out);
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
  EXPECT_TRUE(fs.changes.empty());
}

// node_record.cc: uninstall's last step, when the manifest cannot go: one
// error naming it, and the record still says installed.
TEST(NodeRecordFs, ARewriteThatCannotRemoveTheManifestSaysSo) {
  FakeHostFs fs;
  fs.AddDir("/h/var/lib");
  NodeRecord rec = Load(fs);
  ASSERT_TRUE(rec.Record("created", "/etc/x"));
  fs.fail["unlink /h/var/lib/oci-rlimit/node-install/manifest"] = EACCES;
  auto st = rec.Rewrite({});
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().Text(),
            "remove \"/h/var/lib/oci-rlimit/node-install/manifest\": Permission denied");
  EXPECT_TRUE(rec.installed());
  fs.fail.clear();
  ASSERT_TRUE(rec.Rewrite({}));
  EXPECT_FALSE(fs.Has("/h/var/lib/oci-rlimit"));
  EXPECT_TRUE(fs.Has("/h/var/lib"));  // there before: not ours
}

// node_preflight.cc: each refusal names the path and writes nothing.
TEST(NodePreflightFs, RefusalsWriteNothing) {
  FakeHostFs fs;
  fs.AddDir("/h/etc/crio");
  fs.AddFile("/src/p", "x");
  fs.links["/h/etc/crio/link.conf"] = "/elsewhere";
  fs.AddDir("/h/etc/ro");
  fs.unwritable.insert("/h/etc/ro");
  fs.AddFile("/h/etc/fifo/x", "");  // a directory where a file is to go
  struct Case {
    std::vector<std::string> targets, sources;
    std::string says;
  };
  const Case cases[] = {
      {{"/etc/crio/link.conf"}, {}, "\"/h/etc/crio/link.conf\": a symlink"},
      {{"/etc/ro/new/x.toml"}, {}, "\"/h/etc/ro\": cannot write /etc/ro/new/x.toml there"},
      {{"/etc/fifo"}, {}, "\"/h/etc/fifo\": not a regular file"},
      {{"/etc/crio/a.conf"}, {"/src/p", "/src/missing"}, "--source: \"/src/missing\""},
  };
  for (const auto& c : cases) {
    auto st = CheckWritable(fs, kHost, c.targets, c.sources);
    ASSERT_FALSE(st) << c.says;
    EXPECT_TRUE(st.error().Text().starts_with(c.says)) << st.error().Text();
  }
  EXPECT_TRUE(CheckWritable(fs, kHost, {"/etc/crio/a.conf", "/opt/new/x"}, {"/src/p"}));
  EXPECT_TRUE(fs.changes.empty());
}

// node_preflight.cc: only AtomicWriteFile's temp names go.
TEST(NodePreflightFs, RemovesOnlyLeftoverTemps) {
  FakeHostFs fs;
  fs.AddFile("/h/etc/crio/.oci-rlimit.Ab12Z9", "");
  fs.AddFile("/h/etc/crio/.oci-rlimit.Ab12", "");
  fs.AddFile("/h/etc/crio/crio.conf", "");
  std::ostringstream out;
  RemoveLeftoverTemps(fs, kHost, {"/etc/crio/a.conf", "/etc/crio/b.conf"}, out);
  EXPECT_EQ(out.str(), "removed /etc/crio/.oci-rlimit.Ab12Z9 (left by an interrupted run)\n");
  EXPECT_EQ(fs.changes, std::vector<std::string>{"unlink /h/etc/crio/.oci-rlimit.Ab12Z9"});
  EXPECT_TRUE(fs.Has("/h/etc/crio/.oci-rlimit.Ab12"));
}

}  // namespace
}  // namespace ocirlimit::node
