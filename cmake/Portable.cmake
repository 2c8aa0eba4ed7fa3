# OCI_RLIMIT_PORTABLE: the programs that go onto hosts (hook, wrapper, helper,
# admin CLI, NRI plugin) linked fully static: glibc, libstdc++, libcap and
# protobuf included, so they run on any Linux of their architecture whatever
# its glibc (or none). scripts/build-node.sh builds with it and
# scripts/check-portable.sh proves the result. The .deb is built without it.
#
# Static glibc breaks NSS (getpwnam, getaddrinfo, ...), iconv and dlopen: the
# linker warns "Using 'X' in statically linked applications requires at runtime
# the shared libraries...". build-node.sh fails on that warning, and
# check-portable.sh on those symbols in the binaries.
option(OCI_RLIMIT_PORTABLE
  "Link the host programs fully static (glibc, libstdc++, libcap, protobuf), for nodes of any glibc" OFF)
if(OCI_RLIMIT_PORTABLE)
  add_link_options(-static)
  # Static archives only, so find_library and pkg_check_modules (libcap) pick
  # libcap.a and never libcap.so.
  set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
  set(Protobuf_USE_STATIC_LIBS ON)
endif()

# The programs that go onto nodes, known once every directory is read (so the
# NRI plugin joins when its target exists): the `node-programs` target builds
# them, and node-programs.txt in the build tree lists them for
# scripts/build-node.sh, check-portable.sh and the tests.
function(ocirlimit_node_programs)
  set(programs oci-rlimit-hook oci-rlimit-runtime oci-prlimit-helper oci-rlimit)
  if(TARGET oci-rlimit-nri)
    list(APPEND programs oci-rlimit-nri)
  endif()
  add_custom_target(node-programs)
  add_dependencies(node-programs ${programs})
  list(JOIN programs "\n" lines)
  file(WRITE ${PROJECT_BINARY_DIR}/node-programs.txt "${lines}\n")
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL ocirlimit_node_programs)
