// Readable parameterised tests: gtest prints a test's parameter (in
// --gtest_list_tests, failures and ctest logs) through PrintTo, else as a hex
// dump ("GetParam() = 192-byte object <50-05 00-00 ...>"). Including this in
// a test file, before its cases, prints every case struct that has a `name`
// member as that name. It opens the file's own anonymous namespace inside
// ocirlimit (the same one in the whole translation unit), where
// argument-dependent lookup finds it for the file's case structs.
//
// CaseName is the matching name generator for INSTANTIATE_TEST_SUITE_P.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

namespace ocirlimit {
namespace {

template <class Case>
concept NamedCase = requires(const Case& c) {
  std::string_view(c.name);
};

template <NamedCase Case>
void PrintTo(const Case& c, std::ostream* os) {
  *os << std::string_view(c.name);
}

// INSTANTIATE_TEST_SUITE_P(X, Y, Values(...), CaseName{});
struct CaseName {
  template <class Info>
  std::string operator()(const Info& info) const {
    return std::string(std::string_view(info.param.name));
  }
};

}  // namespace
}  // namespace ocirlimit
