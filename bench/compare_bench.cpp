// links: accuracy
// Throughput of the `same` comparison on one large tensor (64M float32 elements), in bytes
// read per second: the allclose-pass path (ref, res) and the rmse path (ref, res and the
// float64 golden, allclose failing), on CPU through the fused loop and through ATen operators
// (what CUDA runs), and on CUDA when built with it.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

#include <map>
#include <string>

#include "zoobench/accuracy/compare.h"
#include "zoobench/accuracy/error_stats.h"
#include "zoobench/util/compat.h"

namespace {

using zoobench::accuracy::compare_tensors;
using zoobench::accuracy::SameOptions;
using zoobench::accuracy::detail::error_stats;
using zoobench::accuracy::detail::StatsBackend;

constexpr int64_t kElements = int64_t{64} << 20;

struct Data {
  at::Tensor ref, close, far, fp64;
};

// One set per device, made once: 64M float32 ref, a res within allclose, a res outside it,
// and a float64 golden.
const Data& data(c10::Device device) {
  static std::map<std::string, Data> cache;
  auto found = cache.find(device.str());
  if (found != cache.end()) return found->second;
  at::manual_seed(0);
  Data d;
  d.fp64 = at::randn({kElements}, at::kDouble);
  d.ref = (d.fp64 + at::randn({kElements}, at::kDouble) * 1e-6).to(at::kFloat);
  d.close = (d.fp64 + at::randn({kElements}, at::kDouble) * 1e-6).to(at::kFloat);
  d.far = (d.fp64 + at::randn({kElements}, at::kDouble) * 1e-2).to(at::kFloat);
  d.fp64 = d.fp64.to(device);
  d.ref = d.ref.to(device);
  d.close = d.close.to(device);
  d.far = d.far.to(device);
  return cache.emplace(device.str(), d).first->second;
}

void allclose_pass(benchmark::State& state, c10::Device device) {
  const Data& d = data(device);
  // Untimed first call: on CUDA it pays for loading the kernels (a single 200 ms call was all
  // Google Benchmark timed on the H200 without it).
  compare_tensors("output", d.ref, d.close, at::Tensor(), SameOptions());
  for (auto _ : state) {
    auto diagnosis = compare_tensors("output", d.ref, d.close, at::Tensor(), SameOptions());
    if (!diagnosis.pass) state.SkipWithError("expected allclose to pass");
    benchmark::DoNotOptimize(diagnosis);
  }
  state.SetBytesProcessed(state.iterations() * kElements * 2 * 4);
}

void rmse_path(benchmark::State& state, c10::Device device) {
  const Data& d = data(device);
  compare_tensors("output", d.ref, d.far, d.fp64, SameOptions());  // untimed, as above
  for (auto _ : state) {
    auto diagnosis = compare_tensors("output", d.ref, d.far, d.fp64, SameOptions());
    if (diagnosis.rule != zoobench::accuracy::Rule::kRmse) state.SkipWithError("expected rmse");
    benchmark::DoNotOptimize(diagnosis);
  }
  state.SetBytesProcessed(state.iterations() * kElements * (4 + 4 + 8));
}

// The statistics alone, through one backend: the fused CPU loop against the ATen operators.
void stats_backend(benchmark::State& state, StatsBackend backend) {
  const Data& d = data(c10::Device(c10::kCPU));
  for (auto _ : state) {
    benchmark::DoNotOptimize(error_stats(d.ref, d.far, d.fp64, 1e-4, false, backend));
  }
  state.SetBytesProcessed(state.iterations() * kElements * (4 + 4 + 8));
}

BENCHMARK_CAPTURE(allclose_pass, cpu, c10::Device(c10::kCPU))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(rmse_path, cpu, c10::Device(c10::kCPU))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(stats_backend, fused_cpu, StatsBackend::kFusedCpu)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(stats_backend, aten_cpu, StatsBackend::kAten)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
#if ZOOBENCH_WITH_CUDA
BENCHMARK_CAPTURE(allclose_pass, cuda, c10::Device(c10::kCUDA, 0))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(rmse_path, cuda, c10::Device(c10::kCUDA, 0))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
#endif

}  // namespace

BENCHMARK_MAIN();
