# Finds every third-party package and decides what the found Torch can do.
# The outcome is a handful of variables (ZOOBENCH_WITH_CUDA, ZOOBENCH_WITH_AOTI) that become
# compile definitions read by src/zoobench/util/compat.h and nowhere else.

# Torch: Debian's libtorch-dev here; on the GPU machine the caller passes
# -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)').
find_package(Torch REQUIRED)
message(STATUS "zoobench: Torch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}")

set(ZOOBENCH_WITH_CUDA OFF)
if(TARGET torch_cuda OR TARGET c10_cuda)
  set(ZOOBENCH_WITH_CUDA ON)
endif()

# AOTInductor's C++ package loader appeared in Torch 2.6.
set(ZOOBENCH_WITH_AOTI OFF)
if(ZOOBENCH_WITH_CUDA OR Torch_VERSION VERSION_GREATER_EQUAL 2.6)
  if(Torch_VERSION VERSION_GREATER_EQUAL 2.6 AND
     EXISTS "${TORCH_INSTALL_PREFIX}/include/torch/csrc/inductor/aoti_package/model_package_loader.h")
    set(ZOOBENCH_WITH_AOTI ON)
  endif()
endif()

if(ZOOBENCH_WITH_CUDA)
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  if(NOT CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "52")
    # The GPU machine is an H200 (sm_90); keep PTX for anything newer.
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
endif()
message(STATUS "zoobench: CUDA=${ZOOBENCH_WITH_CUDA} AOTInductor=${ZOOBENCH_WITH_AOTI}")

# fmt header-only: one behaviour on both machines, nothing to ship at run time.
find_package(fmt REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
# SHA-256 of the artifacts (util/sha256.cpp). On the GPU machine the caller points
# OPENSSL_ROOT_DIR at the Debian packages unpacked by scripts/fetch-gpu-deps.sh.
find_package(OpenSSL COMPONENTS Crypto)
if(NOT OpenSSL_FOUND OR NOT TARGET OpenSSL::Crypto)
  message(FATAL_ERROR "zoobench needs OpenSSL's libcrypto and its headers (openssl/evp.h): "
                      "install Debian's libssl-dev (scripts/setup-deps.sh does), or pass "
                      "-DOPENSSL_ROOT_DIR=<prefix with include/openssl and lib/libcrypto.so>")
endif()
# Debian's libssl-dev keeps openssl/configuration.h under include/<multiarch>/, which the
# compiler searches by itself only for /usr: add it for a prefix like .gpu-deps.
set(openssl_arch_include "${OPENSSL_INCLUDE_DIR}/${CMAKE_LIBRARY_ARCHITECTURE}")
if(CMAKE_LIBRARY_ARCHITECTURE AND EXISTS "${openssl_arch_include}/openssl/configuration.h")
  set_property(TARGET OpenSSL::Crypto APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${openssl_arch_include}")
endif()
message(STATUS "zoobench: OpenSSL ${OPENSSL_VERSION}: ${OPENSSL_CRYPTO_LIBRARY} (headers ${OPENSSL_INCLUDE_DIR})")
# libbacktrace names a crash report's frames (util/symbolizer.cpp). GCC ships it beside its own
# libraries (Debian's gcc-12 does), found through the compiler's search path; without it the
# frames are written unnamed, as glibc's backtrace_symbols_fd does.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_LIBRARIES backtrace)
check_cxx_source_compiles("#include <backtrace.h>
int main() { return backtrace_create_state(nullptr, 1, nullptr, nullptr) != nullptr; }"
                          ZOOBENCH_WITH_LIBBACKTRACE)
unset(CMAKE_REQUIRED_LIBRARIES)
message(STATUS "zoobench: libbacktrace for crash reports: ${ZOOBENCH_WITH_LIBBACKTRACE}")

# RE2 matches -k/-x patterns in linear time (util/name_pattern.cpp). Debian's libre2-dev ships
# no CMake package; on the GPU machine CMAKE_PREFIX_PATH reaches the copy in .gpu-deps.
find_path(ZOOBENCH_RE2_INCLUDE re2/re2.h)
find_library(ZOOBENCH_RE2_LIBRARY re2)
if(NOT ZOOBENCH_RE2_INCLUDE OR NOT ZOOBENCH_RE2_LIBRARY)
  message(FATAL_ERROR "zoobench needs RE2 (re2/re2.h and libre2): install Debian's libre2-dev "
                      "(scripts/setup-deps.sh does), or pass -DCMAKE_PREFIX_PATH=<prefix with "
                      "include/re2 and lib/libre2.so>")
endif()
add_library(zoobench_re2 INTERFACE IMPORTED)
set_target_properties(zoobench_re2 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${ZOOBENCH_RE2_INCLUDE}"
                      INTERFACE_LINK_LIBRARIES "${ZOOBENCH_RE2_LIBRARY};Threads::Threads")
message(STATUS "zoobench: RE2 ${ZOOBENCH_RE2_LIBRARY}")
if(ZOOBENCH_BUILD_TESTS)
  if(ZOOBENCH_GTEST_SOURCE_DIR)
    # GoogleTest built from source with this build's compiler and flags (the GPU machine: a
    # prebuilt libgtest from another distribution crashed in its inline std::string accessors).
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    set(BUILD_GMOCK ON CACHE BOOL "" FORCE)
    add_subdirectory(${ZOOBENCH_GTEST_SOURCE_DIR} ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)
    foreach(lib gtest gtest_main gmock)
      if(NOT TARGET GTest::${lib})
        add_library(GTest::${lib} ALIAS ${lib})
      endif()
    endforeach()
  else()
    find_package(GTest REQUIRED)
  endif()
  include(GoogleTest)
endif()
if(ZOOBENCH_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

# yaml-cpp's exported target name changed between releases (yaml-cpp vs yaml-cpp::yaml-cpp).
if(TARGET yaml-cpp::yaml-cpp)
  set(ZOOBENCH_YAML_TARGET yaml-cpp::yaml-cpp)
else()
  set(ZOOBENCH_YAML_TARGET yaml-cpp)
endif()

# Python with torch, for tests that compare with the real library and for the exporter.
if(NOT ZOOBENCH_PYTHON)
  if(EXISTS /usr/bin/python3 AND NOT ZOOBENCH_WITH_CUDA)
    set(ZOOBENCH_PYTHON /usr/bin/python3)
  else()
    find_program(ZOOBENCH_PYTHON python3 REQUIRED)
  endif()
endif()
message(STATUS "zoobench: python for the exporter and reference tests: ${ZOOBENCH_PYTHON}")

# The embedded Python of the torch.compile backends (src/zoobench/python/): ZOOBENCH_PYTHON
# itself, so that its `import torch` loads the LibTorch zoobench links (Debian's python3-torch
# is the build of libtorch-dev; on the GPU machine the wheel found above). It lives in a plugin,
# libzoobench_python.so, that needs the interpreter's headers and libpython, torch's
# libtorch_python and pybind11's headers; without one of them zoobench builds without the
# plugin and the Python backends' rows say what is missing.
set(ZOOBENCH_WITH_PYTHON OFF)
set(ZOOBENCH_PYTHON_MISSING "")
execute_process(
  COMMAND ${ZOOBENCH_PYTHON} -c "import sysconfig as s; v = s.get_config_var; print(s.get_paths()['include']); print(v('LIBDIR') or ''); print(v('INSTSONAME') or ''); print(v('LDVERSION') or v('VERSION') or '')"
  OUTPUT_VARIABLE python_facts RESULT_VARIABLE python_facts_status OUTPUT_STRIP_TRAILING_WHITESPACE)
if(python_facts_status EQUAL 0)
  string(REPLACE "\n" ";" python_facts "${python_facts}")
  list(GET python_facts 0 python_include_hint)
  list(GET python_facts 1 python_libdir)
  list(GET python_facts 2 python_soname)
  list(GET python_facts 3 python_ldversion)
  find_path(ZOOBENCH_PYTHON_INCLUDE Python.h HINTS "${python_include_hint}" NO_DEFAULT_PATH)
  find_library(ZOOBENCH_PYTHON_LIBRARY NAMES python${python_ldversion} ${python_soname}
               HINTS "${python_libdir}" "${python_libdir}/x86_64-linux-gnu")
else()
  set(ZOOBENCH_PYTHON_MISSING "${ZOOBENCH_PYTHON} did not run")
endif()
find_library(ZOOBENCH_TORCH_PYTHON_LIBRARY torch_python HINTS "${TORCH_INSTALL_PREFIX}/lib")
find_path(ZOOBENCH_PYBIND11_INCLUDE pybind11/pybind11.h HINTS ${TORCH_INCLUDE_DIRS} "${TORCH_INSTALL_PREFIX}/include")
foreach(part ZOOBENCH_PYTHON_INCLUDE ZOOBENCH_PYTHON_LIBRARY ZOOBENCH_TORCH_PYTHON_LIBRARY ZOOBENCH_PYBIND11_INCLUDE)
  if(NOT ${part})
    list(APPEND missing_python_parts ${part})
  endif()
endforeach()
if(NOT ZOOBENCH_PYTHON_MISSING AND NOT missing_python_parts)
  set(ZOOBENCH_WITH_PYTHON ON)
elseif(missing_python_parts)
  string(REPLACE ";" ", " missing_python_parts "${missing_python_parts}")
  set(ZOOBENCH_PYTHON_MISSING "not found: ${missing_python_parts} (Debian: python3-dev, pybind11-dev)")
endif()
message(STATUS "zoobench: embedded Python=${ZOOBENCH_WITH_PYTHON} ${ZOOBENCH_PYTHON_LIBRARY} ${ZOOBENCH_TORCH_PYTHON_LIBRARY} ${ZOOBENCH_PYTHON_MISSING}")
