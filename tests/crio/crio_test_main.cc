// The CRI-O suite's main: gtest with CrioEnvironment, which starts a crio for
// the process when no ctest fixture (OCI_RLIMIT_CRIO_RUN) gave one.
#include <gtest/gtest.h>

#include "crio_fixture.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new ocirlimit::itest::crio::CrioEnvironment);
  return RUN_ALL_TESTS();
}
