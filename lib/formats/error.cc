#include "formats/error.h"

#include <cstring>

namespace ocirlimit {

std::string Error::Text() const {
  if (err == 0) return msg;
  return msg + ": " + std::strerror(err);
}

Error Error::Wrap(const std::string& context) const { return Error{context + ": " + msg, err}; }

Error MakeError(std::string msg, int err) { return Error{std::move(msg), err}; }

}  // namespace ocirlimit
