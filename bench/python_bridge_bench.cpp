// links: python perf
// The harness's own cost on the Python backends' path: a one-op Python model called from C++
// through the embedded-Python bridge (GIL, IValue -> Python -> IValue, the call) inside
// zoobench's Timer, against the same model called in a Python loop. The difference per call is
// what zoobench adds to a torch.compile or python_eager iteration; docs/benchmarks.md relates
// it to a 1 ms model.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdlib>

#include "zoobench/perf/timer.h"
#include "zoobench/python/embedded_python.h"
#include "zoobench/util/compat.h"

namespace {

constexpr int64_t kPerSample = 200;

zoobench::python::Object one_op() {
  ::setenv("PYTHONPATH", ZOOBENCH_BENCH_DIR, 1);  // read when the interpreter starts
  return zoobench::python::make_object("python_bridge_helpers", "make", nullptr);
}

std::vector<c10::IValue> inputs_on(const c10::Device& device) {
  return {
      c10::ivalue::Tuple::create({c10::IValue(at::ones({8}, at::TensorOptions().device(device)))})};
}

void from_cpp(benchmark::State& state, const c10::Device& device) {
  auto object = one_op();
  auto inputs = inputs_on(device);
  auto timer = zoobench::make_timer(device);
  auto iteration = [&] { object.call("run", inputs); };
  timer->time(iteration, 100);  // warm-up
  for (auto _ : state)
    state.SetIterationTime(timer->time(iteration, kPerSample).end_to_end_ms / 1e3);
}

void in_python(benchmark::State& state, const c10::Device& device) {
  auto object = one_op();
  auto args = inputs_on(device);
  args.emplace_back(kPerSample);
  object.call("loop", args);  // warm-up
  for (auto _ : state) state.SetIterationTime(object.call("loop", args).toDouble());
}

void BM_BridgeCallCpu(benchmark::State& state) { from_cpp(state, c10::Device(c10::kCPU)); }
void BM_PythonLoopCpu(benchmark::State& state) { in_python(state, c10::Device(c10::kCPU)); }
BENCHMARK(BM_BridgeCallCpu)
    ->UseManualTime()
    ->Iterations(50)
    ->Unit(benchmark::kMicrosecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly();
BENCHMARK(BM_PythonLoopCpu)
    ->UseManualTime()
    ->Iterations(50)
    ->Unit(benchmark::kMicrosecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly();

#if ZOOBENCH_WITH_CUDA
void BM_BridgeCallCuda(benchmark::State& state) { from_cpp(state, c10::Device(c10::kCUDA, 0)); }
void BM_PythonLoopCuda(benchmark::State& state) { in_python(state, c10::Device(c10::kCUDA, 0)); }
BENCHMARK(BM_BridgeCallCuda)
    ->UseManualTime()
    ->Iterations(50)
    ->Unit(benchmark::kMicrosecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly();
BENCHMARK(BM_PythonLoopCuda)
    ->UseManualTime()
    ->Iterations(50)
    ->Unit(benchmark::kMicrosecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly();
#endif

}  // namespace

BENCHMARK_MAIN();
