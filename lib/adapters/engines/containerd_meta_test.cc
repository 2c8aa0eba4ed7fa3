// containerd's metadata database, built here byte by byte in bbolt's format
// (meta pages with their FNV-1a checksum, branch and leaf pages, inline
// buckets), holding what containerd 1.7 and 2.x keep for a CRI sandbox. The
// CRI tests read a real containerd's file (tests/cri/nri_heal_test.cc).
#include "adapters/engines/containerd_meta.h"

#include <gmock/gmock.h>
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

std::string Meta(uint64_t root, uint64_t txid, uint32_t page_size = kPage) {
  std::string m(page_size, '\0');
  Put<uint16_t>(m, 8, 0x04);
  Put<uint32_t>(m, 16, 0xED0CDAED);
  Put<uint32_t>(m, 20, 2);
  Put<uint32_t>(m, 24, page_size);
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

std::string Padded(std::string page, size_t size = kPage) {
  page.resize(size, '\0');
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

// A branch page over `children`, each element keyed "k".
std::string Branch(const std::vector<uint64_t>& children) {
  std::string p(16 + children.size() * 16, '\0');
  Put<uint16_t>(p, 8, 0x01);
  Put<uint16_t>(p, 10, static_cast<uint16_t>(children.size()));
  for (size_t i = 0; i < children.size(); ++i) {
    const size_t e = 16 + i * 16;
    Put<uint32_t>(p, e, static_cast<uint32_t>(p.size() + i - e));
    Put<uint32_t>(p, e + 4, 1);
    Put<uint64_t>(p, e + 8, children[i]);
  }
  return p + std::string(children.size(), 'k');
}

// A bucket whose root is page `root` of the file.
Entry OnPage(const std::string& key, uint64_t root) {
  std::string header(16, '\0');
  Put<uint64_t>(header, 0, root);
  return {key, header, true};
}

// Both meta pages (the same root), then `pages` from page 2 on.
std::string File(const std::vector<std::string>& pages, uint64_t root = 2) {
  std::string f = Meta(root, 2) + Meta(root, 1);
  for (const auto& p : pages) f += Padded(p);
  return f;
}

std::string Refused(const std::string& db) {
  auto got = ReadPodAnnotations(db, "k8s.io");
  return got ? "read" : got.error().Text();
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

// Hostile files: each names what is wrong, in time linear in the file.
MATCHER_P(Says, text, "") { return arg.find(text) != std::string::npos; }

TEST(ContainerdMetaHostile, ATruncatedPageIsOutsideTheFile) {
  std::string db = File({LeafPage(V1())});
  db.resize(2 * kPage + 100);  // page 2 cut short: the file has 2 whole pages
  EXPECT_THAT(Refused(db), Says("root page 2 is outside the file's 2 pages"));
  std::string header_only = File({Branch({3}), LeafPage(V1())});
  header_only.resize(3 * kPage + 12);
  EXPECT_THAT(Refused(header_only), Says("page 3 is outside the file's 3 pages"));
}

TEST(ContainerdMetaHostile, ABranchToAPagePastTheFileOrAMetaPage) {
  EXPECT_THAT(Refused(File({Branch({99})})), Says("page 99 is outside the file's 3 pages"));
  EXPECT_THAT(Refused(File({Branch({3})})), Says("page 3 is outside the file's 3 pages"));
  EXPECT_THAT(Refused(File({Branch({1})})), Says("page 1 is outside"));
  EXPECT_THAT(Refused(File({Branch({uint64_t{1} << 63})})), Says("is outside"));
}

TEST(ContainerdMetaHostile, ABranchToItselfOrAnEarlierPageIsACycle) {
  EXPECT_THAT(Refused(File({Branch({2})})), Says("page 2 is reached twice"));
  EXPECT_THAT(Refused(File({Branch({3}), Branch({4}), Branch({2})})),
              Says("page 2 is reached twice"));
}

// Each branch points at the next page twice: read naively, 2^16 leaf visits
// for 18 pages; read once per page, the second pointer is refused.
TEST(ContainerdMetaHostile, AFanOutGraphIsRefusedAtItsFirstSharedPage) {
  std::vector<std::string> pages;
  for (uint64_t p = 2; p < 18; ++p) pages.push_back(Branch({p + 1, p + 1}));
  pages.push_back(LeafPage({{"k", "v"}}));
  EXPECT_THAT(Refused(File(pages)), Says("page 18 is reached twice"));
}

TEST(ContainerdMetaHostile, BranchesNestedDeeperThan64AreRefused) {
  std::vector<std::string> pages;
  for (uint64_t p = 2; p < 70; ++p) pages.push_back(Branch({p + 1}));
  pages.push_back(LeafPage(V1()));
  EXPECT_THAT(Refused(File(pages)), Says("pages nest deeper than 64"));
  pages.erase(pages.begin() + 10, pages.end() - 1);  // 10 branches deep: read
  EXPECT_EQ(Refused(File(pages)), "read");
}

TEST(ContainerdMetaHostile, ALeafWhoseElementsRunPastThePage) {
  std::string many = LeafPage(V1());
  Put<uint16_t>(many, 10, 300);  // 16 + 300 * 16 bytes > 4096
  EXPECT_THAT(Refused(File({many})), Says("page 2: its 300 elements run past the page"));
  std::string long_value = LeafPage(V1());
  Put<uint32_t>(long_value, 16 + 12, kPage);  // v1's value runs into the next page
  EXPECT_THAT(Refused(File({long_value, LeafPage({})})),
              Says("page 2: element 0's key or value lies outside"));
  std::string far_key = LeafPage(V1());
  Put<uint32_t>(far_key, 16 + 4, 0xfffffff0);
  EXPECT_THAT(Refused(File({far_key})), Says("element 0's key or value lies outside"));
}

TEST(ContainerdMetaHostile, LeafElementsThatShareTheirBytesAreRefused) {
  std::string twice = LeafPage({{"a", "1"}, {"b", "2"}});
  Put<uint32_t>(twice, 32 + 4, 17);  // b's key at a's value (byte 49)
  EXPECT_THAT(Refused(File({twice})), Says("element 1's key or value lies outside"));
  std::string in_array = LeafPage({{"a", "1"}});
  Put<uint32_t>(in_array, 16 + 4, 8);  // a's key inside its own element
  EXPECT_THAT(Refused(File({in_array})), Says("element 0's key or value lies outside"));
}

TEST(ContainerdMetaHostile, AWrongChecksumOnBothMetaPagesIsNotABoltFile) {
  std::string db = File({LeafPage(V1())});
  db[72] ^= 1;
  EXPECT_EQ(Refused(db), "read") << "meta 1 still holds";
  db[kPage + 72] ^= 1;
  EXPECT_THAT(Refused(db), Says("not a bbolt database (no meta page whose checksum holds)"));
  // Meta 0 torn, and meta 1 (one 4096-byte page in) says its pages are 8192 bytes.
  std::string moved = Meta(2, 2) + Meta(2, 3, 2 * kPage) + Padded(LeafPage(V1()));
  moved[72] ^= 1;
  EXPECT_THAT(Refused(moved), Says("not a bbolt database"));
}

// Meta 0 names page 2 (no sandbox), meta 1 page 3 (sb1): the newer one whose
// checksum holds is read, meta 0 on a tie, as bbolt does.
TEST(ContainerdMetaHostile, TheNewerValidMetaPageIsRead) {
  const std::string pages = Padded(LeafPage({})) + Padded(LeafPage(V1()));
  auto sandboxes = [](const std::string& db) {
    auto got = ReadPodAnnotations(db, "k8s.io");
    return got ? got->size() : size_t{99};
  };
  EXPECT_EQ(sandboxes(Meta(2, 5) + Meta(3, 6) + pages), 1u);
  EXPECT_EQ(sandboxes(Meta(2, 6) + Meta(3, 5) + pages), 0u);
  EXPECT_EQ(sandboxes(Meta(2, 6) + Meta(3, 6) + pages), 0u);
  std::string torn = Meta(2, 5) + Meta(3, 6) + pages;
  torn[kPage + 40] ^= 1;  // meta 1's freelist: its checksum fails
  EXPECT_EQ(sandboxes(torn), 0u);
}

TEST(ContainerdMetaHostile, APageSizeUnder512OrNotAPowerOfTwoIsRefused) {
  for (uint32_t size : {256U, 511U, 3000U, 1U << 21}) {
    const std::string db = Meta(2, 2, size) + std::string(4 * size, '\0');
    EXPECT_THAT(Refused(db), Says("page size " + std::to_string(size) + " is not a power of two"));
  }
  const std::string small = Meta(2, 2, 512) + Meta(2, 1, 512) + Padded(LeafPage({{"k", "v"}}), 512);
  EXPECT_EQ(Refused(small), "read");
}

TEST(ContainerdMetaHostile, ABucketRootOutOfRangeIsRefused) {
  EXPECT_THAT(Refused(File({LeafPage({OnPage("v1", 3)})})),
              Says("a bucket's root page 3 is outside the file's 3 pages"));
  EXPECT_THAT(Refused(File({LeafPage({OnPage("v1", 1)})})), Says("root page 1 is outside"));
  const Entry k8s = Inline("k8s.io", {Inline("containers", {})});
  EXPECT_EQ(Refused(File({LeafPage({OnPage("v1", 3)}), LeafPage({k8s})})), "read");
  EXPECT_THAT(Refused(File({LeafPage(V1())}, 3)), Says("the root page 3 is outside"));
  EXPECT_THAT(Refused(File({LeafPage(V1())}, 0)), Says("the root page 0 is outside"));
}

TEST(ContainerdMetaHostile, AnInlineBucketRunningPastItsValueIsRefused) {
  Entry v1 = V1()[0];
  Put<uint16_t>(v1.value, 16 + 10, 1000);  // 16,016 bytes of elements in a short value
  EXPECT_THAT(Refused(File({LeafPage({v1})})),
              Says("an inline bucket: its 1000 elements run past the page"));
  Entry short_value{"v1", std::string(20, '\0'), true};
  EXPECT_THAT(Refused(File({LeafPage({short_value})})),
              Says("an inline bucket shorter than its page header"));
  Entry no_header{"v1", std::string(8, '\0'), true};
  EXPECT_THAT(Refused(File({LeafPage({no_header})})), Says("shorter than its header"));
  Entry branch{"v1", std::string(16, '\0') + Branch({2}), true};
  EXPECT_THAT(Refused(File({LeafPage({branch})})), Says("inline bucket that is not a leaf"));
}

TEST(ContainerdMetaHostile, OverflowPagesAreReadOnceAndInsideTheFile) {
  // The root, a branch on page 2 over page 3 (a leaf one overflow page long:
  // v1/k8s.io/containers/sb1 and a 4096-byte value) and page `next`.
  const std::string leaf = LeafPage({V1()[0], {"pad", std::string(kPage, 'p')}});
  auto db = [&](uint32_t overflow, uint64_t next) {
    std::string l = leaf;
    Put<uint32_t>(l, 12, overflow);
    return File({Branch({3, next}), l.substr(0, kPage), l.substr(kPage), LeafPage({})});
  };
  auto ok = ReadPodAnnotations(db(1, 5), "k8s.io");
  ASSERT_TRUE(ok) << ok.error().Text();
  EXPECT_EQ(ok->size(), 1u);
  EXPECT_THAT(Refused(db(1, 4)), Says("page 4 is reached twice"));
  std::string spans_four = LeafPage({{"k", "v"}});
  Put<uint32_t>(spans_four, 12, 1);
  EXPECT_THAT(Refused(File({Branch({4, 3}), spans_four, LeafPage({})})),
              Says("page 4 is reached twice (in the overflow of page 3)"));
  EXPECT_THAT(Refused(db(3, 5)), Says("page 3: its overflow runs past the file"));
  EXPECT_THAT(Refused(db(0, 5)), Says("page 3: element 1's key or value lies outside"));
}

}  // namespace
}  // namespace ocirlimit
