// Error values that carry errno plus context, in the spirit of crun's
// libcrun_error_t: the context is built up as the error travels outwards, so
// the one line a user finally sees says what failed and why.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace ocirlimit {

struct Error {
  std::string msg;  // what failed, e.g. `config "/etc/x.toml": rlimits[0] ...`
  int err = 0;      // errno when a syscall failed, else 0

  // msg, followed by ": strerror(err)" when err is set.
  std::string Text() const;
  // Prefixes context, e.g. Wrap("apply to pid 42") -> "apply to pid 42: <msg>".
  Error Wrap(const std::string& context) const;
};

[[nodiscard]] Error MakeError(std::string msg, int err = 0);

struct Ok {};

template <class T = Ok>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

using Status = Result<Ok>;

}  // namespace ocirlimit
