// CapOps through libcap and prctl(2): the helper's only libcap user.
#include <sys/capability.h>
#include <sys/prctl.h>

#include <cerrno>
#include <memory>
#include <type_traits>

#include "prlimit-helper/privileges.h"

namespace ocirlimit {
namespace {

struct CapFree {
  void operator()(void* p) const { cap_free(p); }
};
using Caps = std::unique_ptr<std::remove_pointer_t<cap_t>, CapFree>;

bool Has(cap_t caps, cap_value_t cap, cap_flag_t set) {
  cap_flag_value_t v = CAP_CLEAR;
  return cap_get_flag(caps, cap, set, &v) == 0 && v == CAP_SET;
}

class LinuxOps final : public CapOps {
 public:
  Status SetNoNewPrivs() override {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return MakeError("prctl", errno);
    return Ok{};
  }
  Result<Own> ReadOwn() override {
    Caps current(cap_get_proc());
    if (!current) return MakeError("cap_get_proc", errno);
    return Own{Has(current.get(), CAP_SYS_RESOURCE, CAP_PERMITTED),
               Has(current.get(), CAP_SETPCAP, CAP_EFFECTIVE)};
  }
  int MaxBits() override { return static_cast<int>(cap_max_bits()); }
  bool InBounding(int cap) override { return cap_get_bound(cap) == 1; }
  Status DropBound(int cap) override {
    if (cap_drop_bound(cap) != 0) return MakeError("cap_drop_bound", errno);
    return Ok{};
  }
  bool AmbientSupported() override { return CAP_AMBIENT_SUPPORTED(); }
  Status ResetAmbient() override {
    if (cap_reset_ambient() != 0) return MakeError("cap_reset_ambient", errno);
    return Ok{};
  }
  Status SetProc(const std::vector<int>& keep) override {
    Caps wanted(cap_init());  // all three sets empty
    if (!wanted) return MakeError("cap_init", errno);
    std::vector<cap_value_t> values(keep.begin(), keep.end());
    if (!values.empty()) {
      for (cap_flag_t set : {CAP_PERMITTED, CAP_EFFECTIVE}) {
        if (cap_set_flag(wanted.get(), set, static_cast<int>(values.size()), values.data(),
                         CAP_SET) != 0) {
          return MakeError("cap_set_flag", errno);
        }
      }
    }
    if (cap_set_proc(wanted.get()) != 0) return MakeError("cap_set_proc", errno);
    return Ok{};
  }
};

}  // namespace

CapOps& LinuxCapOps() {
  static LinuxOps ops;
  return ops;
}

}  // namespace ocirlimit
