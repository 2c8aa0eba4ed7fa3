# bench/cribench.cc: added container-create latency with and without
# oci-rlimit-nri, through CRI against real containerd (bench/run.sh). It links
# the CRI harness, so tests/cri/CMakeLists.txt includes this file once that
# harness exists (and with grpc's shared libstdc++, as the CRI tests). Not a
# test (but see bench.cribench_smoke below), not installed.
# Built under tests/, so at -O0 like the harness it links: the client side of
# each CRI call costs the same in both arms, and the figures that matter are
# the arms' differences; containerd and the plugin keep their build type.
add_executable(cribench ${PROJECT_SOURCE_DIR}/bench/cribench.cc)
target_link_libraries(cribench PRIVATE ocirlimit_cri_harness)
add_dependencies(cribench oci-rlimit-nri)
# CI runs it once, as small as it goes (one pod per arm on containerd 2.x,
# about 3 s): not for its figures, which nothing asserts, but so that the
# benchmark keeps working (it fails when the plugin's log-file misses a
# "with" container or names a "without" one).
add_test(NAME bench.cribench_smoke
         COMMAND cribench --pods 1 --warmup 0 --settle-ms 0 --containerd 2)
set_tests_properties(bench.cribench_smoke PROPERTIES
  LABELS "cri;integration" RUN_SERIAL TRUE TIMEOUT 120 SKIP_RETURN_CODE 77)
