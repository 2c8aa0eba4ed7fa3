// One temporary directory for unit tests: made under $TMPDIR (or /tmp) as
// oci-rlimit-PREFIX-XXXXXX, removed with everything in it on destruction.
// A fixture holds one as a member; a failed mkdtemp fails the test (it throws).
// (The integration harness has its own, which also unmounts what a runtime
// left mounted under it: tests/harness/harness.h.)
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace ocirlimit::testsupport {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "test") {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / ("oci-rlimit-" + prefix + "-XXXXXX")).string();
    // Thrown, not ADD_FAILURE: a test must never go on with no directory
    // (its paths would be under /). gtest fails the test that was building it.
    if (mkdtemp(tmpl.data()) == nullptr) {
      throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
    }
    path_ = tmpl;
  }
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace ocirlimit::testsupport
