#include "formats/key_value.h"

#include "formats/text.h"

namespace ocirlimit {

Status ForEachKeyValue(std::string_view text,
                       const std::function<Status(std::string_view, std::string_view)>& each) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty() || line.front() == '#') continue;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) return MakeError("line " + Quote(line) + ": no '='");
    if (auto done = each(line.substr(0, eq), line.substr(eq + 1)); !done) return done.error();
  }
  return Ok{};
}

}  // namespace ocirlimit
