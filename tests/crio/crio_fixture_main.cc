// The ctest fixture of the CRI-O suite (tests/crio/CMakeLists.txt):
//   crio_fixture start POINTER CACHE   starts one crio for the suite in a new
//                                      /tmp/oci-rlimit-crio.XXXXXX and writes
//                                      that path (or "skip: LINE") to POINTER
//   crio_fixture stop POINTER          kills it and everything it started
// The tests find it through OCI_RLIMIT_CRIO_RUN=POINTER.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "crio_fixture.h"

namespace {

namespace fs = std::filesystem;
using ocirlimit::itest::ReadFile;
using ocirlimit::itest::WriteFile;
using ocirlimit::itest::crio::CriO;

void StopRecorded(const std::string& pointer) {
  std::string dir = ReadFile(pointer);
  while (!dir.empty() && dir.back() == '\n') dir.pop_back();
  if (dir.starts_with("/tmp/oci-rlimit-crio.")) {
    CriO::Stop(dir);
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::error_code ec;
  fs::remove(pointer, ec);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 2 ? argv[1] : "";
  if (cmd == "stop" && argc == 3) {
    StopRecorded(argv[2]);
    return 0;
  }
  if (cmd != "start" || argc != 4) {
    std::cerr << "usage: crio_fixture start POINTER CACHE | stop POINTER\n";
    return 2;
  }
  const std::string pointer = argv[2];
  StopRecorded(pointer);  // a run killed before its cleanup
  char tmpl[] = "/tmp/oci-rlimit-crio.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    std::cerr << "crio_fixture: mkdtemp failed\n";
    return 1;
  }
  const std::string dir = tmpl;
  WriteFile(pointer, dir + "\n");
  auto err = CriO::Start(dir, argv[3]);
  if (!err) return 0;
  CriO::Stop(dir);
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (err->starts_with("skip: ")) {
    std::cout << err->substr(6) << "\n";
    WriteFile(pointer, *err + "\n");
    return 0;
  }
  std::cerr << "crio_fixture: " << *err << "\n";
  WriteFile(pointer, "error: " + *err + "\n");
  return 1;
}
