# ocirlimit_unit_test(NAME LINK libs... SOURCES files...): a folder's
# pure-logic tests (no root, no runtimes), registered by the folder's own
# CMakeLists.txt beside the code they test (ninja style: foo.cc, foo_test.cc).
# SOURCES are relative to that folder. `unit_tests` builds them all (the ASan
# run in scripts/test.sh uses it). A no-op with -DOCI_RLIMIT_BUILD_TESTS=OFF.
if(OCI_RLIMIT_BUILD_TESTS)
  add_custom_target(unit_tests)
endif()
# Test code (this function's targets, and everything under tests/) is compiled
# without optimization whatever the tree's build type: it is most of what a
# tree compiles, and -O0 builds a test file about 4 times faster than -O2
# (measured on policy_test.cc under ASan: 55 s at -O2 -g, 15 s at -O0 -g).
# What the tests exercise, the libraries and programs, keeps the build type.
set(OCI_RLIMIT_TEST_COMPILE_OPTIONS -O0)
function(ocirlimit_unit_test name)
  if(NOT OCI_RLIMIT_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "LINK;SOURCES")
  add_executable(${name} ${arg_SOURCES})
  target_compile_options(${name} PRIVATE ${OCI_RLIMIT_TEST_COMPILE_OPTIONS})
  add_dependencies(unit_tests ${name})
  target_link_libraries(${name} PRIVATE ${arg_LINK} ocirlimit_testing GTest::gtest_main
                        GTest::gmock)
  gtest_discover_tests(${name} PROPERTIES LABELS unit)
endfunction()
