// links: patches
// Bit-packed dropout against ATen's dropout, on the CPU and (in CUDA builds) on the GPU: time of
// the forward (draw + mask + output) and of the backward (grad * mask * scale), and the bytes of
// mask each keeps for backward (mask_bytes counter: numel / 8 for zoobench::dropout_packed,
// numel for at::native_dropout's bool mask). Sizes are float32 activations of 1M and 16M
// elements. CPU times are wall time per call. CUDA times are device time per call, from CUDA
// events around a run of back-to-back calls (the device's throughput in a stream of work, as a
// training step issues it, not the host's launch and synchronize latency).
// Throughput: moved_GB_per_s counts the bytes each call must move through memory (forward:
// read x, write y and the mask; backward: read grad and the mask, write grad_in; a mask is
// numel / 8 bytes packed, numel bytes for ATen), and on CUDA h200_hbm_fraction is that rate
// over the H200's 4.8 TB/s HBM peak. bytes_per_second keeps its old meaning (x and y only).
#include <benchmark/benchmark.h>

#include <functional>

#if ZOOBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#endif

#include "zoobench/patches/packed_dropout.h"
#include "zoobench/patches/registry.h"
#include "zoobench/util/compat.h"

namespace {

using zoobench::patches::PatchScope;

constexpr double kP = 0.1;
// The H200's HBM3e bandwidth by its datasheet.
constexpr double kH200PeakBytesPerSecond = 4.8e12;

// Bytes one call must move through memory: the float32 input read and output written (x and y,
// or grad and grad_in), and the mask written (forward) or read (backward).
int64_t bytes_moved(int64_t numel, int64_t mask_bytes) {
  return 2 * numel * static_cast<int64_t>(sizeof(float)) + mask_bytes;
}

void set_counters(benchmark::State& state, int64_t numel, int64_t mask_bytes) {
  state.counters["elements"] = static_cast<double>(numel);
  state.counters["mask_bytes"] = static_cast<double>(mask_bytes);
  state.SetBytesProcessed(state.iterations() * numel * static_cast<int64_t>(sizeof(float)) * 2);
  // A rate over the time Google Benchmark reports (device time per call on CUDA).
  const double moved =
      static_cast<double>(bytes_moved(numel, mask_bytes)) * static_cast<double>(state.iterations());
  state.counters["moved_GB_per_s"] = benchmark::Counter(moved / 1e9, benchmark::Counter::kIsRate);
}

void synchronize(const c10::Device& device) {
  if (device.is_cuda()) zoobench::compat::cuda_synchronize(device.index());
}

#if ZOOBENCH_WITH_CUDA
// Calls per CUDA sample, between two events.
constexpr int kCudaCallsPerSample = 20;

struct CudaTiming {
  int64_t mask_bytes = 0;  // of the last call
  double seconds = 0;      // device time of all timed calls
};

// Each iteration's time is the device time per call over kCudaCallsPerSample back-to-back
// calls. One call is queued before the start event, so the device is busy when the event is
// recorded and the host's first launch is not counted.
CudaTiming time_cuda_samples(benchmark::State& state, const c10::Device& device,
                             const std::function<int64_t()>& call) {
  at::cuda::CUDAEvent start(cudaEventDefault);
  at::cuda::CUDAEvent stop(cudaEventDefault);
  CudaTiming timing;
  for (auto _ : state) {
    call();
    start.record(at::cuda::getCurrentCUDAStream(device.index()));
    for (int i = 0; i < kCudaCallsPerSample; ++i) timing.mask_bytes = call();
    stop.record(at::cuda::getCurrentCUDAStream(device.index()));
    stop.synchronize();
    const double seconds = start.elapsed_time(stop) / 1e3;
    timing.seconds += seconds;
    state.SetIterationTime(seconds / kCudaCallsPerSample);
  }
  return timing;
}
#endif

// Times `call` (returns the mask bytes it kept) after one untimed call (kernel loading).
void time_calls(benchmark::State& state, const c10::Device& device, int64_t numel,
                const std::function<int64_t()>& call) {
  int64_t mask_bytes = call();
  synchronize(device);
#if ZOOBENCH_WITH_CUDA
  if (device.is_cuda()) {
    const CudaTiming timing = time_cuda_samples(state, device, call);
    set_counters(state, numel, timing.mask_bytes);
    const double calls = static_cast<double>(state.iterations()) * kCudaCallsPerSample;
    const double bytes_per_second =
        static_cast<double>(bytes_moved(numel, timing.mask_bytes)) * calls / timing.seconds;
    state.counters["h200_hbm_fraction"] = bytes_per_second / kH200PeakBytesPerSecond;
    return;
  }
#endif
  for (auto _ : state) mask_bytes = call();
  set_counters(state, numel, mask_bytes);
}

void packed_forward(benchmark::State& state, c10::Device device) {
  PatchScope scope({"packed_dropout"});
  const at::Tensor x = at::randn({state.range(0)}, at::TensorOptions().device(device));
  time_calls(state, device, x.numel(), [&] {
    auto [y, mask] = zoobench::patches::dropout_packed(x, kP, true);
    benchmark::DoNotOptimize(y.data_ptr());
    return static_cast<int64_t>(mask.nbytes());
  });
}

void aten_forward(benchmark::State& state, c10::Device device) {
  const at::Tensor x = at::randn({state.range(0)}, at::TensorOptions().device(device));
  time_calls(state, device, x.numel(), [&] {
    auto [y, mask] = at::native_dropout(x, kP, true);
    benchmark::DoNotOptimize(y.data_ptr());
    return static_cast<int64_t>(mask.nbytes());
  });
}

void packed_backward(benchmark::State& state, c10::Device device) {
  PatchScope scope({"packed_dropout"});
  const auto options = at::TensorOptions().device(device);
  const at::Tensor x = at::randn({state.range(0)}, options);
  const at::Tensor grad = at::randn({state.range(0)}, options);
  auto [y, mask] = zoobench::patches::dropout_packed(x, kP, true);
  time_calls(state, device, x.numel(), [&] {
    benchmark::DoNotOptimize(zoobench::patches::dropout_packed_backward(grad, mask, kP).data_ptr());
    return static_cast<int64_t>(mask.nbytes());
  });
}

void aten_backward(benchmark::State& state, c10::Device device) {
  const auto options = at::TensorOptions().device(device);
  const at::Tensor x = at::randn({state.range(0)}, options);
  const at::Tensor grad = at::randn({state.range(0)}, options);
  auto [y, mask] = at::native_dropout(x, kP, true);
  time_calls(state, device, x.numel(), [&] {
    benchmark::DoNotOptimize(at::native_dropout_backward(grad, mask, 1.0 / (1.0 - kP)).data_ptr());
    return static_cast<int64_t>(mask.nbytes());
  });
}

void register_all(const c10::Device& device) {
  const std::string suffix = device.is_cuda() ? "/cuda" : "/cpu";
  const std::pair<const char*, void (*)(benchmark::State&, c10::Device)> cases[] = {
      {"BM_packed_forward", packed_forward},
      {"BM_aten_forward", aten_forward},
      {"BM_packed_backward", packed_backward},
      {"BM_aten_backward", aten_backward}};
  for (const auto& [name, fn] : cases) {
    auto* bench = benchmark::RegisterBenchmark((name + suffix).c_str(), fn, device);
    bench->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);
    if (device.is_cuda()) bench->UseManualTime();
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all(c10::Device(c10::kCPU));
  if (zoobench::compat::kHasCuda && zoobench::compat::cuda_device_count() > 0) {
    register_all(c10::Device(c10::kCUDA, 0));
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
