// containerd's metadata database, built here byte by byte in bbolt's format
// (meta pages with their FNV-1a checksum, branch and leaf pages, inline
// buckets), holding what containerd 1.7 and 2.x keep for a CRI sandbox. The
// CRI tests read a real containerd's file (tests/cri/nri_heal_test.cc).
#include "adapters/engines/containerd_meta.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ocirlimit {
namespace {

constexpr size_t kPage = 4096;

template <class T>
void Put(std::string& s, size_t off, T v) {
  if (s.size() < off + sizeof(T)) s.resize(off + sizeof(T));
  std::memcpy(s.data() + off, &v, sizeof(T));
}

struct Entry {
  std::string key;
  std::string value;
  bool bucket = false;
};

std::string LeafPage(const std::vector<Entry>& es) {
  std::string p(16 + es.size() * 16, '\0');
  Put<uint16_t>(p, 8, 0x02);
  Put<uint16_t>(p, 10, static_cast<uint16_t>(es.size()));
  for (size_t i = 0; i < es.size(); ++i) {
    const size_t e = 16 + i * 16;
    Put<uint32_t>(p, e, es[i].bucket ? 1 : 0);
    Put<uint32_t>(p, e + 4, static_cast<uint32_t>(p.size() - e));
    Put<uint32_t>(p, e + 8, static_cast<uint32_t>(es[i].key.size()));
    Put<uint32_t>(p, e + 12, static_cast<uint32_t>(es[i].value.size()));
    p += es[i].key + es[i].value;
  }
  return p;
}

Entry Inline(const std::string& key, const std::vector<Entry>& es) {
  return {key, std::string(16, '\0') + LeafPage(es), true};
}

std::string Meta(uint64_t root, uint64_t txid) {
  std::string m(kPage, '\0');
  Put<uint16_t>(m, 8, 0x04);
  Put<uint32_t>(m, 16, 0xED0CDAED);
  Put<uint32_t>(m, 20, 2);
  Put<uint32_t>(m, 24, kPage);
  Put<uint64_t>(m, 32, root);
  Put<uint64_t>(m, 64, txid);
  uint64_t h = 14695981039346656037ULL;
  for (size_t i = 16; i < 72; ++i) {
    h ^= static_cast<unsigned char>(m[i]);
    h *= 1099511628211ULL;
  }
  Put<uint64_t>(m, 72, h);
  return m;
}

std::string Padded(std::string page) {
  page.resize(kPage, '\0');
  return page;
}

std::string Any(const std::string& json) {
  const std::string type = "github.com/containerd/cri/pkg/store/sandbox/Metadata";
  std::string out = "\x0a" + std::string(1, static_cast<char>(type.size())) + type + "\x12";
  for (size_t n = json.size();; n >>= 7) {
    out += static_cast<char>((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
    if (n < 0x80) break;
  }
  return out + json;
}

const std::string kSandbox =
    R"({"Version":"v1","Metadata":{"ID":"sb1","Config":{"metadata":{"name":"p"},)"
    R"("annotations":{"oci-rlimit.io/rlimits":"memlock=2M","example.com/x":"y"}}}})";

// v1/k8s.io/containers/{c1 (no extension), sb1 (the sandbox's metadata)}.
std::vector<Entry> V1() {
  Entry sb1 =
      Inline("sb1", {Inline("extensions", {{"io.cri-containerd.sandbox.metadata", Any(kSandbox)}}),
                     {"spec", "x"}});
  Entry c1 = Inline("c1", {{"spec", "y"}});
  return {Inline("v1", {Inline("k8s.io", {Inline("containers", {c1, sb1})})})};
}

// Meta pages 0 and 1, then a branch root (page 2) over one leaf (page 3).
std::string Db(uint64_t tx0, uint64_t tx1) {
  std::string branch(32, '\0');
  Put<uint16_t>(branch, 8, 0x01);
  Put<uint16_t>(branch, 10, 1);
  Put<uint32_t>(branch, 16, 16);  // pos of the key
  Put<uint32_t>(branch, 20, 2);
  Put<uint64_t>(branch, 24, 3);
  branch += "v1";
  return Meta(2, tx0) + Meta(2, tx1) + Padded(branch) + Padded(LeafPage(V1()));
}

TEST(ContainerdMeta, ReadsEachSandboxesPodAnnotations) {
  auto got = ReadPodAnnotations(Db(7, 6), "k8s.io");
  ASSERT_TRUE(got) << got.error().Text();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ(got->at("sb1"), (std::map<std::string, std::string>{
                                {"example.com/x", "y"}, {"oci-rlimit.io/rlimits", "memlock=2M"}}));
  auto other = ReadPodAnnotations(Db(7, 6), "moby");
  ASSERT_TRUE(other) << other.error().Text();
  EXPECT_TRUE(other->empty()) << "a namespace with nothing in it";
}

TEST(ContainerdMeta, ATornMetaPageFallsBackToTheOther) {
  std::string db = Db(7, 6);
  db[64] ^= 1;  // meta 0's txid: its checksum no longer holds
  auto got = ReadPodAnnotations(db, "k8s.io");
  ASSERT_TRUE(got) << got.error().Text();
  EXPECT_EQ(got->size(), 1u);
}

TEST(ContainerdMeta, NotABoltFileOrCutShortIsAnError) {
  auto junk = ReadPodAnnotations(std::string(3 * kPage, 'x'), "k8s.io");
  ASSERT_FALSE(junk);
  EXPECT_NE(junk.error().Text().find("not a bbolt database"), std::string::npos)
      << junk.error().Text();
  std::string cut = Db(7, 6);
  cut.resize(3 * kPage + 20);
  auto short_db = ReadPodAnnotations(cut, "k8s.io");
  ASSERT_FALSE(short_db);
  EXPECT_NE(short_db.error().Text().find("bbolt: "), std::string::npos) << short_db.error().Text();
}

}  // namespace
}  // namespace ocirlimit
