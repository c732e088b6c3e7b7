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
