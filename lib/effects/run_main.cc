#include "effects/run_main.h"

#include <exception>
#include <iostream>

namespace ocirlimit {

int RunMain(const char* name, const std::function<int()>& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    std::cerr << name << ": internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << name << ": internal error: unknown exception\n";
  }
  return 1;
}

std::vector<std::string> ArgsOf(int argc, char** argv) {
  if (argc < 1) return {};
  return {argv + 1, argv + argc};
}

}  // namespace ocirlimit
