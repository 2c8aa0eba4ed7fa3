#include "adapters/oci/json_members.h"

#include <algorithm>
#include <utility>

#include "adapters/oci/json_guard.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

// nlohmann's SAX events in, a DOM of the kept members out. Outside them an
// event only counts the nesting.
class MemberSax final : public nlohmann::json_sax<Json> {
 public:
  explicit MemberSax(const std::vector<JsonMember>& members) : members_(members) {}

  Json& root() { return root_; }
  [[nodiscard]] bool too_deep() const { return too_deep_; }

  bool null() override { return Value(nullptr); }
  bool boolean(bool v) override { return Value(v); }
  bool number_integer(number_integer_t v) override { return Value(v); }
  bool number_unsigned(number_unsigned_t v) override { return Value(v); }
  bool number_float(number_float_t v, const string_t& /*text*/) override { return Value(v); }
  bool string(string_t& v) override { return Value(v); }
  bool binary(binary_t& v) override { return Value(v); }
  bool start_object(std::size_t /*size*/) override { return Open(Json::value_t::object); }
  bool start_array(std::size_t /*size*/) override { return Open(Json::value_t::array); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& k) override;
  bool parse_error(std::size_t /*at*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*e*/) override {
    return false;
  }

 private:
  struct Level {
    Json* node;
    bool whole;       // a kept member or inside one: every member is kept
    JsonMember path;  // the keys from the root to it, while not whole
  };

  // Where the next value goes; nullptr when its member is dropped.
  Json* Slot() {
    if (levels_.empty()) return &root_;
    Json& top = *levels_.back().node;
    if (top.is_array()) return &top.emplace_back();
    return drop_next_ ? nullptr : &top[key_];
  }

  template <class T>
  bool Value(const T& v) {
    if (skip_from_ != 0) return true;
    if (Json* slot = Slot()) *slot = Json(v);
    return true;
  }

  // Whether a member a key names, beneath the object at `path`, is kept or
  // leads to one that is.
  [[nodiscard]] bool Wanted(const JsonMember& path, const std::string& k) const {
    return std::any_of(members_.begin(), members_.end(), [&](const JsonMember& m) {
      return m.size() > path.size() && std::equal(path.begin(), path.end(), m.begin()) &&
             m[path.size()] == k;
    });
  }

  bool Open(Json::value_t kind);
  bool Close();

  const std::vector<JsonMember>& members_;
  Json root_;
  std::vector<Level> levels_;  // the kept containers open, innermost last
  size_t depth_ = 0;           // every container open, dropped ones too
  size_t skip_from_ = 0;       // the depth of the dropped container we are in; 0: none
  bool drop_next_ = false;     // the member whose key was just read is dropped
  std::string key_;
  bool too_deep_ = false;
};

bool MemberSax::key(string_t& k) {
  if (skip_from_ != 0) return true;
  const Level& top = levels_.back();
  drop_next_ = !top.whole && !Wanted(top.path, k);
  key_ = k;
  return true;
}

bool MemberSax::Open(Json::value_t kind) {
  if (++depth_ > kMaxJsonDepth) {
    too_deep_ = true;
    return false;
  }
  if (skip_from_ != 0) return true;
  Json* slot = Slot();
  if (slot == nullptr) {
    skip_from_ = depth_;
    return true;
  }
  *slot = Json(kind);
  Level level{slot, kind == Json::value_t::array, {}};
  if (!levels_.empty() && !level.whole) {
    const Level& parent = levels_.back();
    level.whole = parent.whole;
    if (!level.whole) {
      level.path = parent.path;
      level.path.push_back(key_);
      level.whole = std::find(members_.begin(), members_.end(), level.path) != members_.end();
    }
  }
  levels_.push_back(std::move(level));
  return true;
}

bool MemberSax::Close() {
  if (skip_from_ == depth_) {
    skip_from_ = 0;
  } else if (skip_from_ == 0) {
    levels_.pop_back();
  }
  --depth_;
  return true;
}

}  // namespace

Result<Json> ParseJsonMembers(std::string_view text, const std::string& what,
                              const std::vector<JsonMember>& members) {
  MemberSax sax(members);
  const bool ok = Json::sax_parse(text.begin(), text.end(), &sax);
  if (sax.too_deep()) {
    return MakeError(Cat(what, ": nested deeper than ", std::to_string(kMaxJsonDepth), " levels"));
  }
  if (!ok) return MakeError(what + ": not valid JSON");
  if (!sax.root().is_object()) return MakeError(what + ": must be a JSON object");
  return std::move(sax.root());
}

}  // namespace ocirlimit
