// links: boundary
// The 64-bit boundary's cost: int64 -> int32 narrowing of one tensor per layout, through
//   plain_to        src.to(kInt)                       (what the Ascend backend did)
//   contiguous_to   src.contiguous().to(kInt)          (the other naive path)
//   boundary        to_dtype_preserving_layout(src)    (keeps the layout)
//   memo_hit        NarrowingMemo::narrow on an unchanged source
//   predicate_only  is_non_overlapping_and_dense(src): all the boundary adds to a dense cast
// on the CPU and, in CUDA builds, on the GPU. Dense layouts must show no boundary overhead
// over plain_to; non-dense ones show the cast time and the memory each path allocates.
//
// Counters per benchmark: elements (numel), span (reachable storage elements), and peak_bytes:
// the most bytes the call held allocated at once, measured by c10's allocator reporting hook
// (every CPU and CUDA allocation of this thread), in one untimed call.
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "zoobench/boundary/boundary.h"
#include "zoobench/util/compat.h"

namespace {

using zoobench::boundary::NarrowingMemo;
using zoobench::boundary::reachable_span;
using zoobench::boundary::to_dtype_preserving_layout;

// Receives every allocation and free c10's allocators make on this thread while installed as
// the thread's PROFILER_STATE debug info (the hook the memory profiler uses).
class AllocationMeter final : public c10::MemoryReportingInfoBase {
 public:
  void reportMemoryUsage(void* /*ptr*/, int64_t bytes, zoobench::compat::AllocatorReportTotal,
                         zoobench::compat::AllocatorReportTotal, c10::Device) override {
    current_ += bytes;
    peak_ = std::max(peak_, current_);
  }
  bool memoryProfilingEnabled() const override { return true; }
  int64_t peak() const { return peak_; }

 private:
  int64_t current_ = 0;
  int64_t peak_ = 0;
};

// Peak bytes allocated during one call of `call` (its result included, until released).
int64_t peak_bytes(const std::function<at::Tensor()>& call) {
  auto meter = std::make_shared<AllocationMeter>();
  {
    c10::DebugInfoGuard guard(c10::DebugInfoKind::PROFILER_STATE, meter);
    at::Tensor result = call();
  }
  return meter->peak();
}

enum class Layout { kContiguous, kTransposed, kOverlapping, kGapped, kExpanded };
enum class Method { kPlainTo, kContiguousTo, kBoundary, kMemoHit, kPredicateOnly };

const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::kContiguous:
      return "contiguous";
    case Layout::kTransposed:
      return "transposed";
    case Layout::kOverlapping:
      return "overlapping";
    case Layout::kGapped:
      return "gapped";
    case Layout::kExpanded:
      return "expanded";
  }
  return "?";
}

const char* method_name(Method method) {
  switch (method) {
    case Method::kPlainTo:
      return "plain_to";
    case Method::kContiguousTo:
      return "contiguous_to";
    case Method::kBoundary:
      return "boundary";
    case Method::kMemoHit:
      return "memo_hit";
    case Method::kPredicateOnly:
      return "predicate_only";
  }
  return "?";
}

// An int64 source of about n elements (n a multiple of 1024) in the given layout.
at::Tensor make_source(Layout layout, int64_t n, const at::Device& device) {
  auto options = at::TensorOptions().dtype(at::kLong).device(device);
  switch (layout) {
    case Layout::kContiguous:
      return at::arange(n, options);
    case Layout::kTransposed:  // dense, permuted
      return at::arange(n, options).reshape({n / 1024, 1024}).t();
    case Layout::kOverlapping:  // Longformer's chunks: rows of 1024 every 512 (numel ~2n, span n)
      return at::arange(n, options).as_strided({n / 512 - 1, 1024}, {512, 1});
    case Layout::kGapped:  // every other element (numel n, span ~2n)
      return at::arange(2 * n, options).as_strided({n / 1024, 1024}, {2048, 2});
    case Layout::kExpanded:  // one row broadcast (numel n, span 1024)
      return at::arange(1024, options).expand({n / 1024, 1024});
  }
  return {};
}

void synchronize(const at::Device& device) {
  if (device.is_cuda()) zoobench::compat::cuda_synchronize(device.index());
}

void bench_cast(benchmark::State& state, Layout layout, Method method, at::Device device) {
  const int64_t n = state.range(0);
  const at::Tensor src = make_source(layout, n, device);
  NarrowingMemo memo;
  std::function<at::Tensor()> call;
  switch (method) {
    case Method::kPlainTo:
      call = [&] { return src.to(at::kInt); };
      break;
    case Method::kContiguousTo:
      call = [&] { return src.contiguous().to(at::kInt); };
      break;
    case Method::kBoundary:
      call = [&] { return to_dtype_preserving_layout(src, at::kInt); };
      break;
    case Method::kMemoHit:
      memo.narrow(src, at::kInt);
      call = [&] { return memo.narrow(src, at::kInt); };
      break;
    case Method::kPredicateOnly:
      // All the boundary adds to a dense cast: deciding that it is dense.
      call = [&] {
        benchmark::DoNotOptimize(zoobench::boundary::is_non_overlapping_and_dense(src));
        return at::Tensor();
      };
      break;
  }
  synchronize(device);
  const int64_t peak = peak_bytes(call);
  synchronize(device);
  for (auto _ : state) {
    at::Tensor result = call();
    benchmark::DoNotOptimize(result.unsafeGetTensorImpl());
    synchronize(device);
  }
  state.SetItemsProcessed(state.iterations() * src.numel());
  state.counters["elements"] = static_cast<double>(src.numel());
  state.counters["span"] = static_cast<double>(reachable_span(src));
  state.counters["peak_bytes"] = static_cast<double>(peak);
  if (method == Method::kMemoHit) {
    state.counters["hits"] = static_cast<double>(memo.stats().hits);
    state.counters["misses"] = static_cast<double>(memo.stats().misses);
  }
}

void register_all(const at::Device& device, const std::vector<int64_t>& sizes) {
  const std::string device_name = device.is_cuda() ? "cuda" : "cpu";
  for (Layout layout : {Layout::kContiguous, Layout::kTransposed, Layout::kOverlapping,
                        Layout::kGapped, Layout::kExpanded}) {
    for (Method method : {Method::kPlainTo, Method::kContiguousTo, Method::kBoundary,
                          Method::kMemoHit, Method::kPredicateOnly}) {
      const std::string name = std::string("narrow/") + device_name + "/" + layout_name(layout) +
                               "/" + method_name(method);
      auto* bench = benchmark::RegisterBenchmark(name.c_str(), bench_cast, layout, method, device);
      for (int64_t size : sizes) bench->Arg(size);
      // CPU: this thread's CPU time (the machine is shared); CUDA: wall time to completion.
      if (device.is_cuda()) bench->UseRealTime();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // One intra-op thread: every path gets the same single core, and a shared two-core machine
  // gives steadier numbers.
  at::set_num_threads(1);
  register_all(at::Device(at::kCPU), {1 << 12, 1 << 16, 1 << 20});
  if (zoobench::compat::kHasCuda && zoobench::compat::cuda_device_count() > 0) {
    register_all(at::Device(at::kCUDA, 0), {1 << 16, 1 << 20, 1 << 24});
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
