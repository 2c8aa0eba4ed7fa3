# Protos that scripts/fetch-containerd.sh unpacks outside the tree (never
# committed, never generated into the source tree), and a function that
# compiles one at build time with Debian 12's protoc (and grpc_cpp_plugin).

set(_ocirlimit_cache "/var/cache/oci-rlimit")
if(DEFINED ENV{OCI_RLIMIT_CACHE})
  set(_ocirlimit_cache "$ENV{OCI_RLIMIT_CACHE}")
endif()
set(OCI_RLIMIT_CACHE_DIR "${_ocirlimit_cache}" CACHE PATH
  "Where scripts/fetch-containerd.sh unpacks containerd releases and API protos")
set(OCI_RLIMIT_CRI_PROTO
  "${OCI_RLIMIT_CACHE_DIR}/cri-api/usr/share/gocode/src/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto"
  CACHE FILEPATH "The CRI runtime.v1 api.proto (golang-github-kubernetes-cri-api-dev, trixie)")
set(OCI_RLIMIT_NRI_PROTO
  "${OCI_RLIMIT_CACHE_DIR}/nri-api/usr/share/gocode/src/github.com/containerd/nri/pkg/api/api.proto"
  CACHE FILEPATH "The NRI api.proto (golang-github-containerd-nri-dev, forky)")
set(OCI_RLIMIT_CONTAINERD_17_DIR "${OCI_RLIMIT_CACHE_DIR}/containerd-1.7" CACHE PATH
  "dpkg -x root of containerd 1.7 from trixie (binaries in usr/bin)")
set(OCI_RLIMIT_CONTAINERD_2_DIR "${OCI_RLIMIT_CACHE_DIR}/containerd-2" CACHE PATH
  "dpkg -x root of containerd 2.x from forky (binaries in usr/bin)")

set(_ocirlimit_proto_dir "${CMAKE_CURRENT_LIST_DIR}")

# ocirlimit_proto_library(TARGET PROTO <file> NAME <dir> [GRPC] [TEST_ONLY])
#
# Copies PROTO to ${CMAKE_CURRENT_BINARY_DIR}/gen/NAME/, dropping gogoproto's
# import and file options (Go-only; the CRI proto carries them, Debian 12 has
# no gogo.proto for C++), and compiles it at build time into a static library
# TARGET. Consumers include "NAME/<stem>.pb.h" (and "NAME/<stem>.grpc.pb.h"
# with GRPC). The include directory is SYSTEM and the generated sources build
# with -w, so -Werror and clang-tidy never judge generated code.
# Sets <TARGET>_FOUND in the caller's scope; when protoc, the proto or (with
# GRPC) grpc++ is missing it is FALSE and <TARGET>_MISSING says why.
# TEST_ONLY builds the generated code with -O0 -g0: the CRI api.pb.cc alone
# costs ~50 s of CPU at -O2 -g and ~13 s at -O0, and tests need no speed.
function(ocirlimit_proto_library target)
  cmake_parse_arguments(ARG "GRPC;TEST_ONLY" "PROTO;NAME" "" ${ARGN})
  set(${target}_FOUND FALSE PARENT_SCOPE)
  find_program(OCI_RLIMIT_PROTOC protoc)
  find_package(Protobuf QUIET)
  if(NOT OCI_RLIMIT_PROTOC OR NOT Protobuf_FOUND)
    set(${target}_MISSING "protoc or libprotobuf-dev not installed (scripts/install-deps.sh all)"
        PARENT_SCOPE)
    return()
  endif()
  if(NOT EXISTS "${ARG_PROTO}")
    set(${target}_MISSING "${ARG_PROTO} missing (scripts/fetch-containerd.sh)" PARENT_SCOPE)
    return()
  endif()
  if(ARG_GRPC)
    find_program(OCI_RLIMIT_GRPC_CPP_PLUGIN grpc_cpp_plugin)
    find_package(gRPC CONFIG QUIET)
    if(NOT OCI_RLIMIT_GRPC_CPP_PLUGIN OR NOT gRPC_FOUND)
      set(${target}_MISSING
          "grpc_cpp_plugin or libgrpc++-dev not installed (scripts/install-deps.sh all)"
          PARENT_SCOPE)
      return()
    endif()
  endif()

  get_filename_component(stem "${ARG_PROTO}" NAME_WE)
  set(gen "${CMAKE_CURRENT_BINARY_DIR}/gen")
  set(copy "${gen}/${ARG_NAME}/${stem}.proto")
  set(outputs "${gen}/${ARG_NAME}/${stem}.pb.cc" "${gen}/${ARG_NAME}/${stem}.pb.h")
  set(plugin_args)
  if(ARG_GRPC)
    list(APPEND outputs "${gen}/${ARG_NAME}/${stem}.grpc.pb.cc" "${gen}/${ARG_NAME}/${stem}.grpc.pb.h")
    set(plugin_args "--grpc_out=${gen}" "--plugin=protoc-gen-grpc=${OCI_RLIMIT_GRPC_CPP_PLUGIN}")
  endif()
  add_custom_command(
    OUTPUT "${copy}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${gen}/${ARG_NAME}"
    COMMAND ${CMAKE_COMMAND} "-DIN=${ARG_PROTO}" "-DOUT=${copy}"
            -P "${_ocirlimit_proto_dir}/strip-gogo.cmake"
    DEPENDS "${ARG_PROTO}" "${_ocirlimit_proto_dir}/strip-gogo.cmake"
    COMMENT "Copying ${ARG_PROTO} without gogoproto options"
    VERBATIM)
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${OCI_RLIMIT_PROTOC} "--proto_path=${gen}" "--cpp_out=${gen}" ${plugin_args}
            "${ARG_NAME}/${stem}.proto"
    DEPENDS "${copy}" ${OCI_RLIMIT_PROTOC}
    COMMENT "protoc ${ARG_NAME}/${stem}.proto"
    VERBATIM)
  set(sources ${outputs})
  list(FILTER sources INCLUDE REGEX "\\.cc$")
  add_library(${target} STATIC ${sources})
  set(options -w)
  if(ARG_TEST_ONLY)
    list(APPEND options -O0 -g0)
  endif()
  set_source_files_properties(${sources} PROPERTIES COMPILE_OPTIONS "${options}")
  target_include_directories(${target} SYSTEM PUBLIC "${gen}")
  target_link_libraries(${target} PUBLIC protobuf::libprotobuf)
  if(ARG_GRPC)
    target_link_libraries(${target} PUBLIC gRPC::grpc++)
  endif()
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  set(${target}_FOUND TRUE PARENT_SCOPE)
endfunction()
