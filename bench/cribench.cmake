# bench/cribench.cc: added container-create latency with and without
# oci-rlimit-nri, through CRI against real containerd (bench/run.sh). It links
# the CRI harness, so tests/cri/CMakeLists.txt includes this file once that
# harness exists (and with grpc's shared libstdc++, as the CRI tests). Not a
# test, not installed.
add_executable(cribench ${PROJECT_SOURCE_DIR}/bench/cribench.cc)
target_link_libraries(cribench PRIVATE ocirlimit_cri_harness)
add_dependencies(cribench oci-rlimit-nri)
