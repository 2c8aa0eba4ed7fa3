// Every flag of a program's table, in every spelling formats/argv.h accepts:
// the cases come from the table itself, so a flag added to a program
// without a sample value in its test fails that test instead of going
// untested.
//
//   constexpr FlagSample kSamples[] = {{"--config", "/c.toml"}};
//   INSTANTIATE_TEST_SUITE_P(X, Y, ::testing::ValuesIn(FlagFormCases(kFlags, kSamples)),
//                            CaseName{});
//   TEST_P(Y, BothFormsReadTheSame) { ExpectFlagForms(GetParam(), parse); }
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/argv.h"

namespace ocirlimit {
namespace {

// What a test gives for one flag: a value it accepts (ignored for a
// switch) and the other arguments a successful parse needs besides it.
struct FlagSample {
  std::string_view flag;
  std::string_view value = {};
  std::vector<std::string> rest = {};
};

struct FlagFormCase {
  std::string name;  // the flag as a test name: "status_file"
  FlagSpec flag;
  bool sampled = false;  // the test's samples name this flag
  std::string value;
  std::vector<std::string> rest;
};

// One case per flag of `specs`, in table order.
inline std::vector<FlagFormCase> FlagFormCases(std::span<const FlagSpec> specs,
                                               std::span<const FlagSample> samples) {
  std::vector<FlagFormCase> out;
  for (const FlagSpec& spec : specs) {
    FlagFormCase c;
    for (char ch : spec.name) {
      if (ch != '-' || !c.name.empty()) c.name += ch == '-' ? '_' : ch;
    }
    c.flag = spec;
    auto it = std::find_if(samples.begin(), samples.end(),
                           [&](const FlagSample& s) { return s.flag == spec.name; });
    if (it != samples.end()) {
      c.sampled = true;
      c.value = std::string(it->value);
      c.rest = it->rest;
    }
    out.push_back(std::move(c));
  }
  return out;
}

// `front` then the case's other arguments.
inline std::vector<std::string> FlagFormArgs(const FlagFormCase& c,
                                             std::vector<std::string> front) {
  front.insert(front.end(), c.rest.begin(), c.rest.end());
  return front;
}

// For a program read through ArgReader. parse(args) returns a Result<T> of
// a T with operator==. A flag with a value: "--flag=V" and "--flag V" read
// the same, and differ from the arguments without the flag when those read
// at all (the flag is not ignored). A switch reads alone, differs likewise,
// and refuses "--flag=1" in ArgReader's one form. A short name reads as its
// long name.
template <class Parse>
void ExpectFlagForms(const FlagFormCase& c, const Parse& parse) {
  const std::string name(c.flag.name);
  const bool takes_value = !c.flag.metavar.empty();
  ASSERT_TRUE(c.sampled || !takes_value)
      << name << " takes " << c.flag.metavar << ": add a sample value for it to this test";
  const auto without = parse(c.rest);
  const std::vector<std::string> long_form =
      takes_value ? FlagFormArgs(c, {name, c.value}) : FlagFormArgs(c, {name});
  const auto read = parse(long_form);
  ASSERT_TRUE(read.ok()) << read.error().Text();
  if (without.ok()) {
    EXPECT_FALSE(*read == *without) << name << " changed nothing";
  }
  if (takes_value) {
    const auto joined = parse(FlagFormArgs(c, {name + "=" + c.value}));
    ASSERT_TRUE(joined.ok()) << joined.error().Text();
    EXPECT_TRUE(*joined == *read) << name << "=" << c.value << " and " << name << " " << c.value
                                  << " read differently";
  } else {
    const auto valued = parse(FlagFormArgs(c, {name + "=1"}));
    ASSERT_FALSE(valued.ok()) << name << "=1 was accepted";
    EXPECT_EQ(valued.error().Text(), name + ": takes no value, got \"" + name + "=1\"");
  }
  if (!c.flag.short_name.empty()) {
    const std::string short_name(c.flag.short_name);
    const auto short_read =
        parse(takes_value ? FlagFormArgs(c, {short_name, c.value}) : FlagFormArgs(c, {short_name}));
    ASSERT_TRUE(short_read.ok()) << short_read.error().Text();
    EXPECT_TRUE(*short_read == *read) << short_name << " and " << name << " read differently";
  }
}

}  // namespace
}  // namespace ocirlimit
