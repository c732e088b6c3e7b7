# Helpers that keep the per-folder CMakeLists short:
#   zoobench_component(NAME DEPS ...)  one static library per concern folder of src/zoobench/
#   zoobench_tests(NAME SOURCES ... LINK ... LABELS ...)  one GoogleTest executable under ctest
# Every target reuses one precompiled header of <torch/torch.h>: the CPU machines have 2 cores.

set(ZOOBENCH_COMMON_DEFINITIONS
  ZOOBENCH_WITH_CUDA=$<BOOL:${ZOOBENCH_WITH_CUDA}>
  ZOOBENCH_WITH_AOTI=$<BOOL:${ZOOBENCH_WITH_AOTI}>
  FMT_HEADER_ONLY=1)

function(zoobench_apply_common target)
  target_compile_definitions(${target} PUBLIC ${ZOOBENCH_COMMON_DEFINITIONS})
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
  if(NOT target STREQUAL zoobench_pch)
    target_precompile_headers(${target} REUSE_FROM zoobench_pch)
  endif()
endfunction()

# zoobench_component(<folder> [DEPS <components or targets>...])
# Builds src/zoobench/<folder>/*.cpp (and *.cu when Torch has CUDA) into zoobench_<folder>.
function(zoobench_component folder)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${folder}/*.cpp)
  if(ZOOBENCH_WITH_CUDA)
    file(GLOB cuda_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${folder}/*.cu)
    list(APPEND sources ${cuda_sources})
  endif()
  set(target zoobench_${folder})
  set(deps)
  foreach(dep ${ARG_DEPS})
    if(TARGET zoobench_${dep})
      list(APPEND deps zoobench_${dep})
    else()
      list(APPEND deps ${dep})
    endif()
  endforeach()
  if(NOT sources)
    # A folder not written yet: an interface target keeps its dependents linkable.
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${ZOOBENCH_SOURCE_ROOT})
    target_link_libraries(${target} INTERFACE ${TORCH_LIBRARIES} fmt::fmt-header-only ${deps})
    target_compile_definitions(${target} INTERFACE ${ZOOBENCH_COMMON_DEFINITIONS})
    return()
  endif()
  add_library(${target} STATIC ${sources})
  target_include_directories(${target} PUBLIC ${ZOOBENCH_SOURCE_ROOT})
  target_link_libraries(${target} PUBLIC ${TORCH_LIBRARIES} fmt::fmt-header-only Threads::Threads ${deps})
  zoobench_apply_common(${target})
endfunction()

# zoobench_tests(<name> SOURCES ... [LINK ...] [LABELS ...])
function(zoobench_tests name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINK;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LINK} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE
    ZOOBENCH_TEST_PYTHON="${ZOOBENCH_PYTHON}"
    ZOOBENCH_REPO_ROOT="${PROJECT_SOURCE_DIR}"
    ZOOBENCH_BINARY_DIR="${PROJECT_BINARY_DIR}")
  zoobench_apply_common(${name})
  set(labels ${ARG_LABELS})
  if(NOT labels)
    set(labels unit)
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST PROPERTIES LABELS "${labels}"
                       WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
endfunction()
