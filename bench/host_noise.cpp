// The host's own noise floor, with no GPU, Torch or harness involved: how much the speed of
// fixed CPU work differs between processes.
//
//   host_noise [--samples 30]      prints one JSON line: per workload, the median ms per sample
//                                   and the CoV of the samples within this process
//
// Run it in several processes (scripts/gpu-check.sh noise) and compare the medians: eager
// inference at small batch is launch-bound (its time is host time), so the spread of these
// medians between processes is a floor under the run-to-run spread any harness can show there.
// Two workloads, because hosts vary in different ways: a dependent chain of integer arithmetic
// (core clock) and a pointer chase over 8 MB (caches and memory), each ~1 ms per sample.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace {

// Keeps the compiler from dropping work whose result is otherwise unused.
volatile std::uint64_t sink;

void arithmetic_chain() {
  std::uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 1000000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  sink = x;
}

class PointerChase {
 public:
  // One random cycle through all slots, so every hop depends on the last and misses L1.
  explicit PointerChase(std::size_t slots) : next_(slots) {
    std::vector<std::uint32_t> order(slots);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin() + 1, order.end(), std::mt19937(7));
    for (std::size_t i = 0; i < slots; ++i) next_[order[i]] = order[(i + 1) % slots];
  }
  void operator()() {
    std::uint32_t at = 0;
    for (int i = 0; i < 60000; ++i) at = next_[at];
    sink = at;
  }

 private:
  std::vector<std::uint32_t> next_;
};

struct Summary {
  double median_ms;
  double cov;
};

template <typename Work>
Summary measure(Work&& work, int samples) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < 5; ++i) work();  // warm caches and clocks
  std::vector<double> ms;
  for (int i = 0; i < samples; ++i) {
    auto start = clock::now();
    work();
    ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - start).count());
  }
  double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / ms.size();
  double squares = 0;
  for (double v : ms) squares += (v - mean) * (v - mean);
  double sd = ms.size() > 1 ? std::sqrt(squares / (ms.size() - 1)) : 0.0;
  std::sort(ms.begin(), ms.end());
  std::size_t n = ms.size();
  double median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  return {median, mean > 0 ? sd / mean : 0.0};
}

}  // namespace

int main(int argc, char** argv) {
  int samples = 30;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--samples") == 0 && i + 1 < argc) {
      samples = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: host_noise [--samples N]\n");
      return 2;
    }
  }
  if (samples < 1) {
    std::fprintf(stderr, "host_noise: --samples must be at least 1\n");
    return 2;
  }
  Summary arithmetic = measure(arithmetic_chain, samples);
  PointerChase chase(2u << 20);  // 2M slots of 4 bytes: 8 MB
  Summary memory = measure(chase, samples);
  std::printf(
      "{\"samples\": %d, \"arithmetic_median_ms\": %.5f, \"arithmetic_cov\": %.4f, "
      "\"pointer_chase_median_ms\": %.5f, \"pointer_chase_cov\": %.4f}\n",
      samples, arithmetic.median_ms, arithmetic.cov, memory.median_ms, memory.cov);
  return 0;
}
