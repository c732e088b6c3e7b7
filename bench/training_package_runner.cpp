// The training step as one AOTInductor package, run by LibTorch's C++ loader as zoobench's
// aot_inductor backend runs its packages: the `package` and `package_graph` sides of
// bench/training_package.py (issue 18, target 2). Python's loader (aoti_load_package) died of a
// segmentation fault inside AOTIModelPackageLoader's constructor on this package on the H200
// (2026-12-03e and -03f, the faulthandler's stack), as it had on the small zoo's kv_cache
// package, which zoobench's C++ loader runs; so the package is timed here, from C++.
//
//   bench_training_package_runner --package STEP.pt2 --tensors FLAT.pt --parameters N
//       [--graph] [--learning-rate 0.01] [--warmup 5] [--iterations 30] [--outputs OUT.pt]
//
// FLAT.pt is torch.save's list of the package's arguments (parameters first, then buffers and
// the model's inputs); the package returns [loss, gradient per parameter]. A step is one call
// of the package and SGD on the parameters (one multi-tensor update, as zoobench's training
// step and the Python sides do). --graph captures the step (package and update) as one CUDA
// graph after a warm-up on a side stream, and times its replays. --outputs writes the
// package's outputs of one call, made before any step, for the Python side to check against
// autograd. Prints one JSON line: prepare_s, median_ms, p10_ms, p90_ms, steps (each step
// timed from its launch to the device's synchronize, as the Python sides time theirs).
#include <CLI/CLI.hpp>
#include <chrono>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "zoobench/perf/statistics.h"
#include "zoobench/serialization/torch_save.h"
#include "zoobench/util/compat.h"

#if ZOOBENCH_WITH_AOTI && ZOOBENCH_WITH_CUDA
#include <ATen/ATen.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include "zoobench/backends/cuda_graph_executable.h"
#endif

namespace {

struct Options {
  std::string package, tensors, outputs;
  int parameters = 0, warmup = 5, iterations = 30;
  double learning_rate = 0.01;
  bool graph = false;
};

#if ZOOBENCH_WITH_AOTI && ZOOBENCH_WITH_CUDA
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int run(const Options& options) {
  const c10::Device device(c10::kCUDA, 0);
  // The numerics of zoobench's timed runs and of the Python sides (TF32 and cuDNN's benchmark
  // on): the package's matrix products are cuBLAS calls, which read the switch when they run.
  zoobench::compat::set_deterministic_numerics(false);
  const auto start = Clock::now();
  c10::IValue saved = zoobench::serialization::load_torch_save(options.tensors, device);
  std::vector<at::Tensor> flat;
  for (const c10::IValue& value : saved.toListRef()) flat.push_back(value.toTensor());
  if (options.parameters <= 0 || options.parameters > static_cast<int>(flat.size()))
    throw std::runtime_error("--parameters " + std::to_string(options.parameters) + " with " +
                             std::to_string(flat.size()) + " tensors in " + options.tensors);
  // The parameters are the package's first arguments: the update writes them in place, so
  // the next call (or replay) reads the updated weights.
  std::vector<at::Tensor> parameters(flat.begin(), flat.begin() + options.parameters);
  // A captured package must run single-threaded (the container's default run waits on its
  // own events, which a capturing stream does not permit), as the aot_inductor backend loads it.
  torch::inductor::AOTIModelPackageLoader loader(options.package, "model",
                                                 /*run_single_threaded=*/options.graph,
                                                 /*num_runners=*/1, device.index());

  if (!options.outputs.empty()) {
    c10::List<at::Tensor> outputs;
    for (const at::Tensor& t : loader.run(flat)) outputs.push_back(t.cpu());
    zoobench::serialization::save_for_python(c10::IValue(outputs), options.outputs);
  }

  std::function<void()> step = [&] {
    std::vector<at::Tensor> outputs = loader.run(flat);
    if (outputs.size() != parameters.size() + 1)
      throw std::runtime_error("the package returned " + std::to_string(outputs.size()) +
                               " tensors, expected the loss and " +
                               std::to_string(parameters.size()) + " gradients");
    std::vector<at::Tensor> gradients(outputs.begin() + 1, outputs.end());
    at::_foreach_add_(parameters, gradients, -options.learning_rate);
  };
  std::unique_ptr<at::cuda::CUDAGraph> graph;
  if (options.graph) {
    auto side = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index());
    {
      c10::cuda::CUDAStreamGuard on_side(side);
      for (int i = 0; i < 3; ++i) step();  // PyTorch's recipe: warm up on the capture's stream
      c10::cuda::device_synchronize();
      graph = zoobench::capture_graph(step);
    }
    c10::cuda::device_synchronize();
    step = [&] { graph->replay(); };
  }
  const double prepare_s = seconds_since(start);

  for (int i = 0; i < options.warmup; ++i) step();
  c10::cuda::device_synchronize();
  std::vector<double> samples;
  for (int i = 0; i < options.iterations; ++i) {
    const auto launched = Clock::now();
    step();
    c10::cuda::device_synchronize();
    samples.push_back(seconds_since(launched) * 1e3);
  }
  nlohmann::json row = {{"prepare_s", prepare_s},
                        {"median_ms", zoobench::stats::median(samples)},
                        {"p10_ms", zoobench::stats::percentile(samples, 10)},
                        {"p90_ms", zoobench::stats::percentile(samples, 90)},
                        {"steps", options.iterations},
                        {"loader", "C++ AOTIModelPackageLoader"}};
  std::cout << row.dump() << std::endl;
  return 0;
}
#else
int run(const Options&) {
  std::cerr << "bench_training_package_runner: this build has no AOTInductor on CUDA (it needs "
               "Torch >= 2.6 built with CUDA, as on the GPU machine); the package cannot be run "
               "here\n";
  return 2;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"The training step as one AOTInductor package, timed through the C++ loader"};
  app.add_option("--package", options.package, "the step's .pt2")->required();
  app.add_option("--tensors", options.tensors, "torch.save'd list of the package's arguments")
      ->required();
  app.add_option("--parameters", options.parameters, "how many of them are parameters (first)")
      ->required();
  app.add_option("--learning-rate", options.learning_rate, "SGD's learning rate");
  app.add_option("--warmup", options.warmup, "steps before the timed ones");
  app.add_option("--iterations", options.iterations, "timed steps");
  app.add_option("--outputs", options.outputs, "write one call's outputs here, before any step");
  app.add_flag("--graph", options.graph, "capture the step as one CUDA graph and time replays");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::cerr << "bench_training_package_runner: " << e.what() << "\n";
    return 1;
  }
}
