// links: perf backends zoo
// Harness overhead: a trivial TorchScript model (one tiny elementwise op) through zoobench's
// full timing path — Executable::run inside the Timer used by the performance experiment — so
// the per-iteration time is almost all harness and dispatch overhead. bench/python_latency.py
// times the same file in a Python loop with the same protocol, for the comparison in docs/.
//
//   bench_harness_overhead [--model trivial.pt]   (default: a module defined here, saved nowhere)
#include <benchmark/benchmark.h>
#include <torch/script.h>

#include <cstring>
#include <string>

#include "zoobench/backends/torchscript_executable.h"
#include "zoobench/perf/timer.h"
#include "zoobench/util/compat.h"

namespace {

std::string g_model_path;

torch::jit::Module trivial_module(const c10::Device& device) {
  if (!g_model_path.empty()) return torch::jit::load(g_model_path, device);
  torch::jit::Module module("Trivial");
  module.define(R"(
    def forward(self, x):
        return x + 1.0
  )");
  module.to(device);
  return module;
}

void run_trivial(benchmark::State& state, const c10::Device& device, bool optimize) {
  zoobench::Manifest manifest;
  manifest.name = "trivial";
  zoobench::BackendRequest request;
  request.device = device;
  zoobench::TorchScriptExecutable executable(trivial_module(device), manifest, request, optimize);
  std::vector<c10::IValue> inputs = {at::ones({8}, at::TensorOptions().device(device))};
  auto timer = zoobench::make_timer(device);
  auto iteration = [&] { executable.run(inputs); };
  timer->time(iteration, 100);  // warm-up (profiling runs for the optimizing executor)
  constexpr int64_t kPerSample = 200;
  // One benchmark iteration is one timed sample of kPerSample model iterations; the time it
  // reports is per model iteration, so the iteration count is fixed (kSamples below) rather
  // than grown until the reported time adds up to --benchmark_min_time.
  for (auto _ : state) {
    zoobench::TimedSample sample = timer->time(iteration, kPerSample);
    state.SetIterationTime(sample.end_to_end_ms / 1e3);  // seconds per model iteration
  }
}

constexpr int64_t kSamples = 50;

void BM_TrivialEagerCpu(benchmark::State& state) { run_trivial(state, c10::Device(c10::kCPU), false); }
void BM_TrivialJitCpu(benchmark::State& state) { run_trivial(state, c10::Device(c10::kCPU), true); }
BENCHMARK(BM_TrivialEagerCpu)->UseManualTime()->Iterations(kSamples)->Unit(benchmark::kMicrosecond)->Repetitions(5)->ReportAggregatesOnly();
BENCHMARK(BM_TrivialJitCpu)->UseManualTime()->Iterations(kSamples)->Unit(benchmark::kMicrosecond)->Repetitions(5)->ReportAggregatesOnly();

#if ZOOBENCH_WITH_CUDA
void BM_TrivialEagerCuda(benchmark::State& state) { run_trivial(state, c10::Device(c10::kCUDA, 0), false); }
void BM_TrivialJitCuda(benchmark::State& state) { run_trivial(state, c10::Device(c10::kCUDA, 0), true); }
BENCHMARK(BM_TrivialEagerCuda)->UseManualTime()->Iterations(kSamples)->Unit(benchmark::kMicrosecond)->Repetitions(5)->ReportAggregatesOnly();
BENCHMARK(BM_TrivialJitCuda)->UseManualTime()->Iterations(kSamples)->Unit(benchmark::kMicrosecond)->Repetitions(5)->ReportAggregatesOnly();
#endif

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--model") == 0) {
      g_model_path = argv[i + 1];
      for (int j = i; j + 2 < argc; ++j) argv[j] = argv[j + 2];
      argc -= 2;
      break;
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
