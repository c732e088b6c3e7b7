// links: patches
// Bit-packed dropout against ATen's dropout, on the CPU and (in CUDA builds) on the GPU: time of
// the forward (draw + mask + output) and of the backward (grad * mask * scale), and the bytes of
// mask each keeps for backward (mask_bytes counter: numel / 8 for zoobench::dropout_packed,
// numel for at::native_dropout's bool mask). Sizes are float32 activations of 1M and 16M
// elements. CUDA times are wall time with a synchronize after each call.
#include <benchmark/benchmark.h>

#include <functional>

#include "zoobench/patches/packed_dropout.h"
#include "zoobench/patches/registry.h"
#include "zoobench/util/compat.h"

namespace {

using zoobench::patches::PatchScope;

constexpr double kP = 0.1;

void set_counters(benchmark::State& state, int64_t numel, int64_t mask_bytes) {
  state.counters["elements"] = static_cast<double>(numel);
  state.counters["mask_bytes"] = static_cast<double>(mask_bytes);
  state.SetBytesProcessed(state.iterations() * numel * static_cast<int64_t>(sizeof(float)) * 2);
}

void synchronize(const c10::Device& device) {
  if (device.is_cuda()) zoobench::compat::cuda_synchronize(device.index());
}

// Times `call` (returns the mask bytes it kept) after one untimed call (kernel loading).
void time_calls(benchmark::State& state, const c10::Device& device, int64_t numel,
                const std::function<int64_t()>& call) {
  int64_t mask_bytes = call();
  synchronize(device);
  for (auto _ : state) {
    mask_bytes = call();
    synchronize(device);
  }
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
    if (device.is_cuda()) bench->UseRealTime();
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
