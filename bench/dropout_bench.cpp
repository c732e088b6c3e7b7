// links: patches
// Bit-packed dropout against ATen's dropout, CPU: time of the forward (draw + mask + output) and
// of the backward (grad * mask * scale), and the bytes of mask each keeps for backward
// (mask_bytes counter: numel / 8 for zoobench::dropout_packed, numel for at::native_dropout's
// bool mask). Sizes are float32 activations of 1M and 16M elements.
#include <benchmark/benchmark.h>

#include "zoobench/patches/packed_dropout.h"
#include "zoobench/patches/registry.h"

namespace {

using zoobench::patches::PatchScope;

constexpr double kP = 0.1;

void set_counters(benchmark::State& state, int64_t numel, int64_t mask_bytes) {
  state.counters["elements"] = static_cast<double>(numel);
  state.counters["mask_bytes"] = static_cast<double>(mask_bytes);
  state.SetBytesProcessed(state.iterations() * numel * static_cast<int64_t>(sizeof(float)) * 2);
}

void BM_packed_forward(benchmark::State& state) {
  PatchScope scope({"packed_dropout"});
  const at::Tensor x = at::randn({state.range(0)});
  int64_t mask_bytes = 0;
  for (auto _ : state) {
    auto [y, mask] = zoobench::patches::dropout_packed(x, kP, true);
    mask_bytes = static_cast<int64_t>(mask.nbytes());
    benchmark::DoNotOptimize(y.data_ptr());
  }
  set_counters(state, x.numel(), mask_bytes);
}

void BM_aten_forward(benchmark::State& state) {
  const at::Tensor x = at::randn({state.range(0)});
  int64_t mask_bytes = 0;
  for (auto _ : state) {
    auto [y, mask] = at::native_dropout(x, kP, true);
    mask_bytes = static_cast<int64_t>(mask.nbytes());
    benchmark::DoNotOptimize(y.data_ptr());
  }
  set_counters(state, x.numel(), mask_bytes);
}

void BM_packed_backward(benchmark::State& state) {
  PatchScope scope({"packed_dropout"});
  const at::Tensor x = at::randn({state.range(0)});
  const at::Tensor grad = at::randn({state.range(0)});
  auto [y, mask] = zoobench::patches::dropout_packed(x, kP, true);
  for (auto _ : state) {
    benchmark::DoNotOptimize(zoobench::patches::dropout_packed_backward(grad, mask, kP).data_ptr());
  }
  set_counters(state, x.numel(), static_cast<int64_t>(mask.nbytes()));
}

void BM_aten_backward(benchmark::State& state) {
  const at::Tensor x = at::randn({state.range(0)});
  const at::Tensor grad = at::randn({state.range(0)});
  auto [y, mask] = at::native_dropout(x, kP, true);
  for (auto _ : state) {
    benchmark::DoNotOptimize(at::native_dropout_backward(grad, mask, 1.0 / (1.0 - kP)).data_ptr());
  }
  set_counters(state, x.numel(), static_cast<int64_t>(mask.nbytes()));
}

}  // namespace

BENCHMARK(BM_packed_forward)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_aten_forward)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_packed_backward)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_aten_backward)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
