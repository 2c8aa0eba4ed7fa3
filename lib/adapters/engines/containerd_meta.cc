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

// A bucket's root: a page of the file, or an inline page inside a value.
struct BucketRef {
  std::string_view buf;
  size_t off = 0;
};

struct Item {
  std::string_view key;
  std::string_view value;
  uint32_t flags = 0;
};

class Bolt {
 public:
  explicit Bolt(std::string_view d) : d_(d) {}

  // The newer of the two meta pages whose checksum holds (a write in
  // progress leaves the other one valid).
  Result<BucketRef> Root() {
    auto m0 = Meta(0);
    page_ = m0 ? m0->page_size : 4096;
    auto m1 = Meta(page_);
    if (m1 && m0 && m1->page_size != page_) m1.reset();
    if (!m0 && !m1) return MakeError("not a bbolt database (no valid meta page)");
    const MetaPage& m = !m1 || (m0 && m0->txid >= m1->txid) ? *m0 : *m1;
    if (m.root > d_.size() / page_) return MakeError("bbolt: the root is past the end of the file");
    return BucketRef{d_, m.root * page_};
  }

  // Each key/value of the bucket at `b`, through its branch pages.
  Status ForEach(BucketRef b, const std::function<void(const Item&)>& fn, int depth = 0) {
    if (depth > kMaxDepth) return MakeError("bbolt: pages nest too deep");
    auto flags = At<uint16_t>(b.buf, b.off + 8);
    auto count = At<uint16_t>(b.buf, b.off + 10);
    if (!flags || !count) return MakeError("bbolt: a page past the end of the file");
    for (size_t i = 0; i < *count; ++i) {
      const size_t e = b.off + kPageHeader + i * kElement;
      if ((*flags & kBranch) != 0) {
        auto pgid = At<uint64_t>(b.buf, e + 8);
        if (!pgid || *pgid > d_.size() / page_) return MakeError("bbolt: a bad branch element");
        if (auto st = ForEach({d_, *pgid * page_}, fn, depth + 1); !st) return st;
      } else if ((*flags & kLeaf) != 0) {
        auto f = At<uint32_t>(b.buf, e);
        auto pos = At<uint32_t>(b.buf, e + 4);
        auto ksz = At<uint32_t>(b.buf, e + 8);
        auto vsz = At<uint32_t>(b.buf, e + 12);
        if (!f || !pos || !ksz || !vsz) return MakeError("bbolt: a bad leaf element");
        const size_t at = e + *pos;
        if (at > b.buf.size() || b.buf.size() - at < uint64_t{*ksz} + *vsz) {
          return MakeError("bbolt: a leaf element past its page");
        }
        fn({b.buf.substr(at, *ksz), b.buf.substr(at + *ksz, *vsz), *f});
      } else {
        return MakeError("bbolt: neither a branch nor a leaf page");
      }
    }
    return Ok{};
  }

  // The bucket stored as `item`'s value.
  Result<BucketRef> Bucket(const Item& item) const {
    if ((item.flags & kBucketLeaf) == 0) return MakeError("bbolt: not a bucket");
    auto root = At<uint64_t>(item.value, 0);
    if (!root) return MakeError("bbolt: a short bucket header");
    if (*root == 0) return BucketRef{item.value, 16};  // inline
    if (*root > d_.size() / page_) return MakeError("bbolt: a bucket past the end of the file");
    return BucketRef{d_, *root * page_};
  }

  Result<std::optional<Item>> Get(BucketRef b, std::string_view key) {
    std::optional<Item> found;
    auto st = ForEach(b, [&](const Item& i) {
      if (!found && i.key == key) found = i;
    });
    if (!st) return st.error();
    return found;
  }

 private:
  struct MetaPage {
    uint32_t page_size;
    uint64_t root;
    uint64_t txid;
  };
  std::optional<MetaPage> Meta(size_t off) const {
    auto magic = At<uint32_t>(d_, off + 16);
    auto version = At<uint32_t>(d_, off + 20);
    auto psz = At<uint32_t>(d_, off + 24);
    auto root = At<uint64_t>(d_, off + 32);
    auto txid = At<uint64_t>(d_, off + 64);
    auto sum = At<uint64_t>(d_, off + 72);
    if (!magic || *magic != kMagic || !version || *version != 2 || !psz || *psz < 512) {
      return std::nullopt;
    }
    if (Fnv64a(d_.substr(off + 16, 56)) != *sum) return std::nullopt;
    return MetaPage{*psz, *root, *txid};
  }

  std::string_view d_;
  uint32_t page_ = 0;
};

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
    auto bucket = bolt.Bucket(c);
    if (!bucket) continue;
    auto ext = bolt.Get(*bucket, "extensions");
    if (!ext || !*ext) continue;
    auto ext_bucket = bolt.Bucket(**ext);
    if (!ext_bucket) continue;
    auto meta = bolt.Get(*ext_bucket, kSandboxExtension);
    if (!meta || !*meta) continue;
    auto value = AnyValue((*meta)->value);
    if (!value) continue;
    if (auto a = Annotations(*value)) out[std::string(c.key)] = std::move(*a);
  }
  return out;
}

}  // namespace ocirlimit
