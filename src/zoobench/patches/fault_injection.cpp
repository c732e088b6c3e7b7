// zoobench_test::segfault and zoobench_test::abort, and their patch entry.
#include "zoobench/patches/fault_injection.h"

#include <cstdint>
#include <cstdlib>

namespace zoobench::patches {
namespace {

// Read at run time, so the compiler cannot see that the address is null and replace the
// write with a trap instruction (SIGILL) or drop it.
volatile std::uintptr_t g_null_address = 0;

at::Tensor segfault_kernel(const at::Tensor& x) {
  *reinterpret_cast<volatile int*>(g_null_address) = 1;
  return x;
}

at::Tensor abort_kernel(const at::Tensor& x) {
  std::abort();
  return x;
}

// CPU for the obvious case; CompositeExplicitAutograd so the ops run on any device too (the
// Autograd key falls through to it, and nothing ever needs their gradient).
const c10::DispatchKey kKeys[] = {c10::DispatchKey::CPU,
                                  c10::DispatchKey::CompositeExplicitAutograd};

Registrations register_fault_injection_ops() {
  Registrations handles;
  auto def = std::make_unique<torch::Library>(torch::Library::FRAGMENT, "zoobench_test",
                                              c10::nullopt, __FILE__, __LINE__);
  // CONSERVATIVE: the call is its side effect, so the JIT must never drop or merge it.
  def->def(torch::schema(kSegfaultSchema, c10::AliasAnalysisKind::CONSERVATIVE));
  def->def(torch::schema(kAbortSchema, c10::AliasAnalysisKind::CONSERVATIVE));
  handles.push_back(std::move(def));
  for (auto key : kKeys) {
    auto lib = std::make_unique<torch::Library>(torch::Library::IMPL, "zoobench_test", key,
                                                __FILE__, __LINE__);
    lib->impl("segfault", &segfault_kernel);
    lib->impl("abort", &abort_kernel);
    handles.push_back(std::move(lib));
  }
  return handles;
}

}  // namespace

Patch fault_injection_patch() {
  Patch p;
  p.name = "fault_injection";
  p.description =
      "zoobench_test::segfault (null write, SIGSEGV) and zoobench_test::abort (SIGABRT): "
      "exists to test crash handling of suite runs; never assign it to a real model";
  p.defines = {"zoobench_test::segfault", "zoobench_test::abort"};
  for (const char* op : {"zoobench_test::segfault", "zoobench_test::abort"}) {
    for (auto key : kKeys) p.overrides.push_back({op, key});
  }
  p.applies = "before load";
  p.apply = register_fault_injection_ops;
  return p;
}

}  // namespace zoobench::patches
