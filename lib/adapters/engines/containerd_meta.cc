#include "adapters/engines/containerd_meta.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "adapters/oci/spec.h"

namespace ocirlimit {
namespace {

constexpr uint32_t kMagic = 0xED0CDAED;
constexpr uint16_t kBranch = 0x01;
constexpr uint16_t kLeaf = 0x02;
constexpr uint32_t kBucketLeaf = 0x01;
constexpr size_t kPageHeader = 16;
constexpr size_t kElement = 16;
constexpr size_t kBucketHeader = 16;
constexpr uint32_t kMinPage = 512;
constexpr uint32_t kMaxPage = 1U << 20;
constexpr int kMaxDepth = 64;
constexpr std::string_view kSandboxExtension = "io.cri-containerd.sandbox.metadata";

template <class T>
std::optional<T> At(std::string_view buf, size_t off) {
  if (off > buf.size() || buf.size() - off < sizeof(T)) return std::nullopt;
  T v;
  std::memcpy(&v, buf.data() + off, sizeof(T));
  return v;
}

// FNV-1a, 64 bit, as bbolt checksums its meta page.
uint64_t Fnv64a(std::string_view bytes) {
  uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string PageName(uint64_t pgid) { return "bbolt: page " + std::to_string(pgid); }

// A bucket's root: a page of the file (`pgid`), or an inline leaf page
// inside a bucket's value (`inline_page`).
struct BucketRef {
  uint64_t pgid = 0;
  std::string_view inline_page;
};

struct Item {
  std::string_view key;
  std::string_view value;
  uint32_t flags = 0;
};

// One page's bytes (with its overflow pages) and its header.
struct Page {
  std::string_view bytes;
  uint16_t flags = 0;
  uint16_t count = 0;
  std::string name;
};

// A bbolt file read in time linear in its size: each page (and each of
// its overflow pages) is read at most once per Bolt, so a cycle or a page
// shared by two parents is an error, and a leaf's keys and values may not
// overlap (as bbolt writes them: one after the other), so no byte is
// scanned twice at one nesting level.
class Bolt {
 public:
  explicit Bolt(std::string_view d) : d_(d) {}

  Result<BucketRef> Root();
  // Each key/value of the bucket at `b`, through its branch pages.
  Status ForEach(BucketRef b, const std::function<void(const Item&)>& fn, int depth = 0);
  // The bucket stored as `item`'s value.
  [[nodiscard]] Result<BucketRef> Bucket(const Item& item) const;
  Result<std::optional<Item>> Get(BucketRef b, std::string_view key);

 private:
  struct MetaPage {
    uint32_t page_size;
    uint64_t root;
    uint64_t txid;
  };
  [[nodiscard]] std::optional<MetaPage> Meta(size_t off) const;
  Result<Page> Visit(uint64_t pgid);
  Status Elements(const Page& p, const std::function<void(const Item&)>& fn, int depth);
  [[nodiscard]] uint64_t Pages() const { return d_.size() / page_; }

  std::string_view d_;
  uint32_t page_ = 0;
  std::vector<bool> seen_;
};

std::optional<Bolt::MetaPage> Bolt::Meta(size_t off) const {
  auto magic = At<uint32_t>(d_, off + 16);
  auto version = At<uint32_t>(d_, off + 20);
  auto psz = At<uint32_t>(d_, off + 24);
  auto root = At<uint64_t>(d_, off + 32);
  auto txid = At<uint64_t>(d_, off + 64);
  auto sum = At<uint64_t>(d_, off + 72);
  if (!magic || *magic != kMagic || !version || *version != 2 || !sum) return std::nullopt;
  if (Fnv64a(d_.substr(off + 16, 56)) != *sum) return std::nullopt;
  return MetaPage{*psz, *root, *txid};
}

// The newer of the two meta pages whose checksum holds (a write in progress
// leaves the other one valid), as bbolt chooses: meta 0 on a tie. Meta 1
// sits one page in, so without meta 0 it is looked for at each page size.
Result<BucketRef> Bolt::Root() {
  auto m0 = Meta(0);
  std::optional<MetaPage> m1;
  for (uint32_t ps = kMinPage; ps <= kMaxPage && !m1; ps *= 2) {
    if (m0 && m0->page_size != ps) continue;
    m1 = Meta(ps);
    if (m1 && m1->page_size != ps) m1.reset();
  }
  if (!m0 && !m1) return MakeError("not a bbolt database (no meta page whose checksum holds)");
  const MetaPage& m = !m1 || (m0 && m0->txid >= m1->txid) ? *m0 : *m1;
  if (m.page_size < kMinPage || m.page_size > kMaxPage || (m.page_size & (m.page_size - 1)) != 0) {
    return MakeError("bbolt: page size " + std::to_string(m.page_size) +
                     " is not a power of two from 512 to 1 MiB");
  }
  page_ = m.page_size;
  seen_.assign(Pages(), false);
  if (m.root < 2 || m.root >= Pages()) {
    return MakeError("bbolt: the root page " + std::to_string(m.root) + " is outside the file's " +
                     std::to_string(Pages()) + " pages");
  }
  return BucketRef{m.root, {}};
}

// Page `pgid` and its overflow pages, marked read: a page read twice is a
// cycle or a page two parents share, which bbolt never writes.
Result<Page> Bolt::Visit(uint64_t pgid) {
  const std::string name = PageName(pgid);
  if (pgid < 2 || pgid >= Pages()) {
    return MakeError(name + " is outside the file's " + std::to_string(Pages()) + " pages");
  }
  if (seen_[pgid]) return MakeError(name + " is reached twice (a cycle, or a shared page)");
  const size_t off = pgid * page_;
  auto flags = At<uint16_t>(d_, off + 8);
  auto count = At<uint16_t>(d_, off + 10);
  auto overflow = At<uint32_t>(d_, off + 12);
  if (!flags || !count || !overflow) return MakeError(name + ": a short page header");
  if (*overflow >= Pages() - pgid) return MakeError(name + ": its overflow runs past the file");
  for (uint64_t i = pgid; i <= pgid + *overflow; ++i) {
    if (seen_[i]) {
      return MakeError(PageName(i) + " is reached twice (in the overflow of page " +
                       std::to_string(pgid) + ")");
    }
    seen_[i] = true;
  }
  return Page{d_.substr(off, (size_t{*overflow} + 1) * page_), *flags, *count, name};
}

Status Bolt::ForEach(BucketRef b, const std::function<void(const Item&)>& fn, int depth) {
  if (depth > kMaxDepth) return MakeError("bbolt: pages nest deeper than 64");
  if (b.pgid == 0) {
    const std::string_view pg = b.inline_page;
    auto flags = At<uint16_t>(pg, 8);
    auto count = At<uint16_t>(pg, 10);
    if (!flags || !count) return MakeError("bbolt: an inline bucket shorter than its page header");
    if (*flags != kLeaf) return MakeError("bbolt: an inline bucket that is not a leaf page");
    return Elements(Page{pg, *flags, *count, "bbolt: an inline bucket"}, fn, depth);
  }
  auto p = Visit(b.pgid);
  if (!p) return p.error();
  return Elements(*p, fn, depth);
}

// The elements of one page, each inside it; a leaf's keys and values in
// element order, none overlapping another or the element array.
Status Bolt::Elements(const Page& p, const std::function<void(const Item&)>& fn, int depth) {
  if (p.flags != kBranch && p.flags != kLeaf) {
    return MakeError(p.name + " is neither a branch nor a leaf");
  }
  const size_t array_end = kPageHeader + size_t{p.count} * kElement;
  if (array_end > p.bytes.size()) {
    return MakeError(p.name + ": its " + std::to_string(p.count) + " elements run past the page");
  }
  size_t next = array_end;  // where the next key may start
  for (size_t i = 0; i < p.count; ++i) {
    const size_t e = kPageHeader + i * kElement;
    // A leaf element: flags, pos, ksize, vsize; a branch's: pos, ksize, pgid.
    const bool leaf = p.flags == kLeaf;
    const uint32_t f = leaf ? *At<uint32_t>(p.bytes, e) : 0;
    const uint32_t pos = *At<uint32_t>(p.bytes, leaf ? e + 4 : e);
    const uint32_t ksz = *At<uint32_t>(p.bytes, leaf ? e + 8 : e + 4);
    const uint64_t vsz = leaf ? *At<uint32_t>(p.bytes, e + 12) : 0;
    const uint64_t child = *At<uint64_t>(p.bytes, e + 8);
    const uint64_t at = uint64_t{e} + pos;
    if (at < next || at + ksz + vsz > p.bytes.size()) {
      return MakeError(p.name + ": element " + std::to_string(i) +
                       "'s key or value lies outside its place in the page");
    }
    next = at + ksz + vsz;
    if (leaf) {
      fn({p.bytes.substr(at, ksz), p.bytes.substr(at + ksz, vsz), f});
    } else if (auto st = ForEach({child, {}}, fn, depth + 1); !st) {
      return st;
    }
  }
  return Ok{};
}

Result<BucketRef> Bolt::Bucket(const Item& item) const {
  if ((item.flags & kBucketLeaf) == 0) return MakeError("bbolt: not a bucket");
  auto root = At<uint64_t>(item.value, 0);
  if (!root || item.value.size() < kBucketHeader) {
    return MakeError("bbolt: a bucket value shorter than its header");
  }
  if (*root == 0) return BucketRef{0, item.value.substr(kBucketHeader)};  // inline
  if (*root < 2 || *root >= Pages()) {
    return MakeError("bbolt: a bucket's root page " + std::to_string(*root) +
                     " is outside the file's " + std::to_string(Pages()) + " pages");
  }
  return BucketRef{*root, {}};
}

Result<std::optional<Item>> Bolt::Get(BucketRef b, std::string_view key) {
  std::optional<Item> found;
  auto st = ForEach(b, [&](const Item& i) {
    if (!found && i.key == key) found = i;
  });
  if (!st) return st.error();
  return found;
}

// The value (field 2) of a protobuf Any.
std::optional<std::string_view> AnyValue(std::string_view any) {
  size_t p = 0;
  while (p < any.size()) {
    const auto tag = static_cast<unsigned char>(any[p++]);
    if ((tag & 7) != 2) return std::nullopt;
    uint64_t n = 0;
    for (int shift = 0; p < any.size() && shift < 64; shift += 7) {
      const auto b = static_cast<unsigned char>(any[p++]);
      n |= uint64_t{b & 0x7fU} << shift;
      if ((b & 0x80) == 0) break;
    }
    if (n > any.size() - p) return std::nullopt;
    if ((tag >> 3) == 2) return any.substr(p, n);
    p += n;
  }
  return std::nullopt;
}

// The pod's annotations in the CRI plugin's sandbox metadata JSON.
std::optional<std::map<std::string, std::string>> Annotations(std::string_view json) {
  auto j = ParseJsonObject(json, "sandbox metadata");
  if (!j) return std::nullopt;
  const Json* a = &*j;
  for (const char* key : {"Metadata", "Config", "annotations"}) {
    if (!a->is_object() || !a->contains(key)) return std::nullopt;
    a = &(*a)[key];
  }
  if (!a->is_object()) return std::nullopt;
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : a->items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

// The sandbox metadata of container `c`: its extensions bucket's entry, if
// it has one. A page that does not hold together is an error.
Result<std::optional<std::string_view>> SandboxMetadata(Bolt& bolt, const Item& c) {
  auto bucket = bolt.Bucket(c);
  if (!bucket) return bucket.error();
  auto ext = bolt.Get(*bucket, "extensions");
  if (!ext) return ext.error();
  if (!*ext || ((*ext)->flags & kBucketLeaf) == 0) return std::optional<std::string_view>();
  auto ext_bucket = bolt.Bucket(**ext);
  if (!ext_bucket) return ext_bucket.error();
  auto meta = bolt.Get(*ext_bucket, kSandboxExtension);
  if (!meta) return meta.error();
  if (!*meta) return std::optional<std::string_view>();
  return std::optional<std::string_view>((*meta)->value);
}

}  // namespace

Result<PodAnnotations> ReadPodAnnotations(std::string_view db, const std::string& ns) {
  Bolt bolt(db);
  auto root = bolt.Root();
  if (!root) return root.error();
  PodAnnotations out;
  BucketRef b = *root;
  for (std::string_view name :
       {std::string_view("v1"), std::string_view(ns), std::string_view("containers")}) {
    auto item = bolt.Get(b, name);
    if (!item) return item.error();
    if (!*item) return out;  // no such namespace, or no containers yet
    auto next = bolt.Bucket(**item);
    if (!next) return next.error();
    b = *next;
  }
  std::vector<Item> containers;
  if (auto st = bolt.ForEach(b, [&](const Item& i) { containers.push_back(i); }); !st) {
    return st.error();
  }
  for (const Item& c : containers) {
    if ((c.flags & kBucketLeaf) == 0) continue;  // not a container
    auto meta = SandboxMetadata(bolt, c);
    if (!meta) return meta.error().Wrap("container " + JsonQuoteCut(std::string(c.key)));
    if (!*meta) continue;
    auto value = AnyValue(**meta);
    if (!value) continue;
    if (auto a = Annotations(*value)) out[std::string(c.key)] = std::move(*a);
  }
  return out;
}

}  // namespace ocirlimit
