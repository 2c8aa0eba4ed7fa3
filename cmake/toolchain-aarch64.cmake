# Cross build for arm64 (aarch64) with Debian 12's g++-aarch64-linux-gnu.
#   cmake -S . -B build-portable-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake \
#         -DOCI_RLIMIT_ARM64_ROOT=$(scripts/fetch-arm64-deps.sh) -DOCI_RLIMIT_PORTABLE=ON
# The C library and libstdc++ come with the cross compiler (/usr/aarch64-linux-gnu).
# The -dev libraries (libcap.a, gtest, protobuf, the JSON and TOML headers) come
# from Debian's arm64 archive, unpacked (not installed) by scripts/fetch-arm64-deps.sh
# into OCI_RLIMIT_ARM64_ROOT. Test programs run under qemu-aarch64-static,
# called directly (no binfmt), when it is installed.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

if(NOT OCI_RLIMIT_ARM64_ROOT)
  set(OCI_RLIMIT_ARM64_ROOT "$ENV{OCI_RLIMIT_ARM64_ROOT}")
endif()
if(NOT OCI_RLIMIT_ARM64_ROOT OR NOT EXISTS "${OCI_RLIMIT_ARM64_ROOT}/usr")
  message(FATAL_ERROR "OCI_RLIMIT_ARM64_ROOT: \"${OCI_RLIMIT_ARM64_ROOT}\" is not an unpacked arm64 root; "
                      "pass -DOCI_RLIMIT_ARM64_ROOT=$(scripts/fetch-arm64-deps.sh)")
endif()
# Seen by try_compile too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES OCI_RLIMIT_ARM64_ROOT)

# Libraries, headers and CMake packages: the arm64 root and the cross
# compiler's own prefix only, never the host's /usr (which is amd64).
set(CMAKE_FIND_ROOT_PATH "${OCI_RLIMIT_ARM64_ROOT}" /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# The compiler does not search the arm64 root's headers on its own.
set(CMAKE_CXX_FLAGS_INIT "-isystem ${OCI_RLIMIT_ARM64_ROOT}/usr/include")
set(CMAKE_C_FLAGS_INIT "-isystem ${OCI_RLIMIT_ARM64_ROOT}/usr/include")

# pkg-config (libcap) answers from the arm64 root alone.
set(ENV{PKG_CONFIG_LIBDIR}
    "${OCI_RLIMIT_ARM64_ROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${OCI_RLIMIT_ARM64_ROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${OCI_RLIMIT_ARM64_ROOT}")
set(ENV{PKG_CONFIG_PATH} "")

find_program(OCI_RLIMIT_QEMU_AARCH64 qemu-aarch64-static)
if(OCI_RLIMIT_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${OCI_RLIMIT_QEMU_AARCH64}")
endif()
