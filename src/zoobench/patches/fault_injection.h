// The `fault_injection` patch: operators that crash the process on purpose, so that tests can
// check how a suite run handles a model that dies from a signal. zoobench_test::segfault(x)
// writes through a null pointer (SIGSEGV), zoobench_test::abort(x) calls std::abort (SIGABRT).
// Both are declared only while the patch is active; never assign it to a real model.
#pragma once

#include "zoobench/patches/registry.h"

namespace zoobench::patches {

inline constexpr const char* kSegfaultSchema = "zoobench_test::segfault(Tensor x) -> Tensor";
inline constexpr const char* kAbortSchema = "zoobench_test::abort(Tensor x) -> Tensor";

// The table entry (registry.cpp's builtin table holds it).
Patch fault_injection_patch();

}  // namespace zoobench::patches
