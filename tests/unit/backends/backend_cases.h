// The backends' test cases, written once and run on every device, in the manner of ggml's
// test-backend-ops: the CPU suite (backends_cpu_test.cpp) and the CUDA suite
// (tests/gpu/backends) each include this file and instantiate the suites for their device.
// Include it from exactly one file per executable.
//
// Three sections:
//  1. running a backend through the Executable interface (prepare, run / step, training_state)
//     and flattening what it produced into named tensors: "output[0]", "loss",
//     "grad:<param>.grad", "param:<param>", "buffer:<buffer>"; and the comparison of two such
//     records, with an allclose-style tolerance per case;
//  2. the reference: the eager backend in float64, itself checked against PyTorch's own float64
//     results computed in Python when the small zoo was exported (small_zoo.h);
//  3. the table: backend x model x mode, each compared with the float64 reference, and the
//     properties every backend must keep (preparing leaves the model as loaded).
// To add a model, add it to small_models.py and to kModels below; a backend is in the table
// once the registry lists it; give a case a looser tolerance in case_tolerance() only with a
// reason.
#pragma once

#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/script.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "unit/backends/small_zoo.h"
#include "zoobench/backends/backend.h"
#include "zoobench/backends/switches.h"
#include "zoobench/python/embedded_python.h"
#include "zoobench/util/compat.h"
#include "zoobench/zoo/model_files.h"

namespace zoobench::backend_cases {
namespace {

// --- 1. Running a backend, comparing records -------------------------------------------------

struct Named {
  std::string path;
  at::Tensor tensor;  // on the CPU
};
using Record = std::vector<Named>;

void flatten_into(const c10::IValue& value, const std::string& path, Record& out) {
  if (value.isTensor()) {
    out.push_back({path, value.toTensor().detach().to(at::kCPU).clone()});
  } else if (value.isTuple()) {
    const auto& elements = value.toTupleRef().elements();
    for (std::size_t i = 0; i < elements.size(); ++i) {
      flatten_into(elements[i], path + "[" + std::to_string(i) + "]", out);
    }
  } else if (value.isList()) {
    const auto list = value.toListRef();
    for (std::size_t i = 0; i < list.size(); ++i) {
      flatten_into(list[i], path + "[" + std::to_string(i) + "]", out);
    }
  } else if (value.isGenericDict()) {
    for (const auto& item : value.toGenericDict()) {
      flatten_into(item.value(), path + "['" + item.key().toStringRef() + "']", out);
    }
  }
}

void append_named(const std::string& group,
                  const std::vector<std::pair<std::string, at::Tensor>>& tensors, Record& out) {
  for (const auto& [name, t] : tensors) {
    out.push_back({group + ":" + name, t.detach().to(at::kCPU).clone()});
  }
}

constexpr int kTrainingSteps = 2;  // as the accuracy experiment's default --iterations

struct RunOutcome {
  Record record;
  ExecutionInfo info;
};

// Prepares `backend` and runs it once (inference) or kTrainingSteps steps (training), cloning
// the inputs per call as the experiments do.
RunOutcome run_backend(Backend& backend, const Manifest& manifest, const BackendRequest& request,
                       const std::vector<c10::IValue>& inputs) {
  auto executable = backend.prepare(manifest, request, inputs);
  RunOutcome outcome;
  outcome.info = executable->info();
  if (request.mode == Mode::kInference) {
    flatten_into(executable->run(clone_inputs(inputs)), "output", outcome.record);
    return outcome;
  }
  StepResult step;
  for (int i = 0; i < kTrainingSteps; ++i) step = executable->step(clone_inputs(inputs));
  flatten_into(step.outputs, "output", outcome.record);
  outcome.record.push_back({"loss", step.loss.detach().to(at::kCPU).clone()});
  TrainingState state = executable->training_state();
  append_named("grad", state.gradients, outcome.record);
  append_named("param", state.parameters, outcome.record);
  append_named("buffer", state.buffers, outcome.record);
  return outcome;
}

// Elementwise |res - ref| <= atol + rtol * |ref| (NaN matches only NaN); integer tensors must be
// equal.
struct Tolerance {
  double atol = 1e-5;
  double rtol = 1e-4;
};

struct Verdict {
  bool pass = true;
  double worst_ratio = 0;  // max over tensors of max |res - ref| / (atol + rtol |ref|)
  std::string worst_path;
  std::string report;  // one line per failing tensor, or the structural mismatch
};

// Worst ratio of one tensor pair (inf for a shape or dtype-kind mismatch or an unmatched NaN).
double tensor_ratio(const at::Tensor& ref, const at::Tensor& res, const Tolerance& tol,
                    std::string& why) {
  if (ref.sizes() != res.sizes()) {
    why = "shape " + c10::str(res.sizes()) + " vs reference " + c10::str(ref.sizes());
    return std::numeric_limits<double>::infinity();
  }
  if (ref.is_floating_point() != res.is_floating_point()) {
    why = std::string("dtype ") + c10::toString(res.scalar_type()) + " vs reference " +
          c10::toString(ref.scalar_type());
    return std::numeric_limits<double>::infinity();
  }
  if (!ref.is_floating_point()) {
    if (at::equal(ref.to(at::kLong), res.to(at::kLong))) return 0;
    why = "integer values differ";
    return std::numeric_limits<double>::infinity();
  }
  if (ref.numel() == 0) return 0;
  at::Tensor a = ref.to(at::kDouble), b = res.to(at::kDouble);
  at::Tensor nan_a = a.isnan(), nan_b = b.isnan();
  if (!at::equal(nan_a, nan_b)) {
    why = "NaN where the reference has none (or the reverse)";
    return std::numeric_limits<double>::infinity();
  }
  at::Tensor diff = (b - a).abs();
  at::Tensor ratio = diff / ((a.abs() * tol.rtol) + tol.atol);
  // Equal elements are within any tolerance, zero included (0/0 would be NaN).
  ratio = at::where(nan_a.logical_or(diff == 0), at::zeros_like(ratio), ratio);
  const double worst = ratio.max().item<double>();
  why = "max |diff| " + std::to_string((b - a).abs().nan_to_num(0).max().item<double>());
  return worst;
}

// Compares by path: every path of `ref` must be in `res` and the reverse. With `by_position`
// (a backend that returns a flat list, as AOTInductor does) outputs pair up in order instead.
Verdict compare_records(const Record& ref, const Record& res, const Tolerance& tol,
                        bool by_position = false) {
  Verdict verdict;
  auto fail_structure = [&](const std::string& why) {
    verdict.pass = false;
    verdict.worst_ratio = std::numeric_limits<double>::infinity();
    verdict.report += why + "\n";
  };
  std::vector<std::pair<const Named*, const Named*>> pairs;
  if (by_position) {
    if (ref.size() != res.size()) {
      fail_structure("the backend produced " + std::to_string(res.size()) +
                     " tensors, the reference " + std::to_string(ref.size()));
      return verdict;
    }
    for (std::size_t i = 0; i < ref.size(); ++i) pairs.emplace_back(&ref[i], &res[i]);
  } else {
    std::map<std::string, const Named*> by_path;
    for (const auto& r : res) by_path[r.path] = &r;
    for (const auto& r : ref) {
      auto it = by_path.find(r.path);
      if (it == by_path.end()) {
        fail_structure(r.path + ": missing from the backend's results");
        continue;
      }
      pairs.emplace_back(&r, it->second);
      by_path.erase(it);
    }
    for (const auto& [path, named] : by_path) fail_structure(path + ": not in the reference");
  }
  for (const auto& [a, b] : pairs) {
    std::string why;
    const double ratio = tensor_ratio(a->tensor, b->tensor, tol, why);
    if (!(ratio <= 1.0)) {
      verdict.pass = false;
      verdict.report += b->path + ": ratio " + std::to_string(ratio) + " (" + why + ")\n";
    }
    if (!(ratio <= verdict.worst_ratio)) {
      verdict.worst_ratio = ratio;
      verdict.worst_path = b->path;
    }
  }
  return verdict;
}

// --- 2. The reference -------------------------------------------------------------------------

struct Model {
  Manifest manifest;
  std::vector<c10::IValue> inputs;  // on the device, as saved (float32 / int64)
};

std::string zoo_for(c10::DeviceType device) {
  testing::SmallZooOptions options;
  options.aoti_cuda = device == c10::kCUDA && compat::kHasAotInductor;
  return testing::small_zoo_dir(options);
}

Model load_model(const std::string& name, c10::Device device) {
  const std::string zoo = zoo_for(device.type());
  if (zoo.empty()) throw std::runtime_error("the small zoo could not be exported (see above)");
  Model model;
  model.manifest = read_manifest(testing::small_model_manifest(zoo, name));
  model.inputs = load_inputs(model.manifest, device);
  return model;
}

BackendRequest request_for(c10::Device device, Mode mode) {
  BackendRequest request;
  request.device = device;
  request.mode = mode;
  return request;
}

// The eager backend in float64: model and floating inputs cast, as the accuracy experiment's
// golden run.
Record float64_reference(const Model& model, c10::Device device, Mode mode) {
  BackendRequest request = request_for(device, mode);
  request.dtype_override = c10::kDouble;
  request.cudagraphs = false;
  auto eager = make_backend("eager");
  return run_backend(*eager, model.manifest, request, cast_inputs(model.inputs, c10::kDouble))
      .record;
}

// PyTorch's float64 results for a model, written by small_zoo.h's Python.
Record python_float64_results(const std::string& model, Mode mode, c10::DeviceType device) {
  const std::string path = zoo_for(device) + "/expected/" + model + "." + mode_name(mode) + ".pt";
  torch::jit::Module holder = torch::jit::load(path);
  Record record;
  for (const auto& item : holder.attr("values").toGenericDict()) {
    record.push_back({item.key().toStringRef(), item.value().toTensor()});
  }
  return record;
}

std::string aoti_failure(const std::string& model, c10::DeviceType device) {
  std::ifstream in(zoo_for(device) + "/aoti_failures.json");
  if (!in) return "";
  nlohmann::json failures = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (failures.is_object() && failures.contains(model)) return failures[model].get<std::string>();
  return "";
}

const std::vector<std::string> kModels = {"conv_bn_relu", "mlp", "encoder_layer", "host_sync"};
// Every backend the registry lists: a new backend joins the table by being registered.
const std::vector<std::string>& table_backends() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& listing : list_backends()) {
      // max-autotune benchmarks every kernel's candidates: minutes per tiny model, and the
      // same code path as the other inductor modes.
      if (listing.name.find("max-autotune") != std::string::npos) continue;
      out.push_back(listing.name);
    }
    return out;
  }();
  return names;
}

// float32 against float64. Fusion (jit) and folded batch norm change rounding, not results: on
// the CPU the worst ratios measured are ~0.1 (the test prints them per case).
Tolerance case_tolerance(const std::string& backend, const std::string& model, Mode mode,
                         c10::DeviceType device) {
  Tolerance tol{1e-6, 1e-5};
  // Different kernels (cuDNN/cuBLAS algorithms, Inductor's generated code) reassociate sums.
  if (device == c10::kCUDA) {
    tol.atol *= 10;
    tol.rtol *= 10;
  }
  return tol;
}

// --- 3. The table -------------------------------------------------------------------------------

struct BackendCase {
  c10::DeviceType device;
  std::string backend;
  std::string model;
  Mode mode;
};

void PrintTo(const BackendCase& c, std::ostream* out) {
  *out << c.backend << " " << c.model << " " << mode_name(c.mode) << " on "
       << c10::DeviceTypeName(c.device, true);
}

std::vector<BackendCase> backend_cases(c10::DeviceType device) {
  std::vector<BackendCase> cases;
  for (const auto& backend : table_backends()) {
    for (const auto& model : kModels) {
      for (Mode mode : {Mode::kInference, Mode::kTraining})
        cases.push_back({device, backend, model, mode});
    }
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<BackendCase>& info) {
  std::string backend = info.param.backend;
  for (char& c : backend) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';  // inductor:reduce-overhead
  return backend + "_" + info.param.model + "_" + mode_name(info.param.mode);
}

bool cuda_usable(c10::DeviceType device) {
  return device != c10::kCUDA || (compat::kHasCuda && torch::cuda::is_available());
}

class BackendTable : public ::testing::TestWithParam<BackendCase> {
 protected:
  void SetUp() override {
    if (!cuda_usable(GetParam().device)) GTEST_SKIP() << "no CUDA device";
    // As the accuracy runner: deterministic algorithms, TF32 off.
    compat::set_deterministic_numerics(true);
  }
};

TEST_P(BackendTable, MatchesTheFloat64Reference) {
  const BackendCase& c = GetParam();
  const c10::Device device(c.device);
  Model model = load_model(c.model, device);
  auto backend = make_backend(c.backend);
  BackendRequest request = request_for(device, c.mode);
  if (auto why = backend->unsupported_reason(model.manifest, request)) {
    GTEST_SKIP() << c.backend << " does not run this case: " << *why;
  }
  const bool flat_outputs = c.backend == "aot_inductor";
  if (flat_outputs &&
      model.manifest.artifact("aoti.float32." + std::string(device.is_cuda() ? "cuda" : "cpu")) ==
          nullptr) {
    GTEST_SKIP() << "no AOTInductor package for " << c.model << ": "
                 << aoti_failure(c.model, c.device);
  }
  Record reference = float64_reference(model, device, c.mode);
  RunOutcome result = run_backend(*backend, model.manifest, request, model.inputs);
  for (const Named& named : result.record) {
    if (named.tensor.is_floating_point()) {
      EXPECT_EQ(named.tensor.scalar_type(), at::kFloat)
          << named.path << " was not computed in float32";
    }
  }
  const Tolerance tol = case_tolerance(c.backend, c.model, c.mode, c.device);
  Verdict verdict = compare_records(reference, result.record, tol, flat_outputs);
  std::printf("[ case     ] %s %s %s on %s: worst ratio %.3g at %s (cudagraphs %s)\n",
              c.backend.c_str(), c.model.c_str(), mode_name(c.mode).c_str(), device.str().c_str(),
              verdict.worst_ratio, verdict.worst_path.c_str(), result.info.cudagraphs.c_str());
  EXPECT_TRUE(verdict.pass) << c.backend << " vs eager float64 (atol " << tol.atol << ", rtol "
                            << tol.rtol << "):\n"
                            << verdict.report;
  if (c.mode == Mode::kTraining) {
    // Every parameter has its gradient and its value after the step in the record.
    std::size_t grads = 0, params = 0;
    for (const Named& named : result.record) {
      grads += named.path.rfind("grad:", 0) == 0 ? 1 : 0;
      params += named.path.rfind("param:", 0) == 0 ? 1 : 0;
    }
    EXPECT_GT(params, 0u);
    EXPECT_EQ(grads, params);
  }
}

// Properties that hold on every device.
class BackendOnDevice : public ::testing::TestWithParam<c10::DeviceType> {
 protected:
  void SetUp() override {
    if (!cuda_usable(GetParam())) GTEST_SKIP() << "no CUDA device";
    compat::set_deterministic_numerics(true);
    // As in a zoobench run, where a Python backend's availability is asked before any model
    // runs: the embedded Python, torch imported (its Python autograd engine), starts before the
    // first backward. A C++ backward first, then torch's import and a Python backward, trips an
    // internal assert of the autograd engine on CUDA (PyTorch 2.11, 2026-12-01).
    python::unavailable_reason();
  }
};

// The reference itself: zoobench's eager backend in float64 gives PyTorch's float64 results
// (Python, nn.Module, torch.optim.SGD) to rounding.
TEST_P(BackendOnDevice, EagerFloat64IsPyTorchFloat64) {
  const c10::Device device(GetParam());
  std::vector<std::string> models = kModels;
  models.push_back("kv_cache");  // the reference of the package test on CUDA
  for (const auto& name : models) {
    for (Mode mode : {Mode::kInference, Mode::kTraining}) {
      SCOPED_TRACE(name + " " + mode_name(mode));
      Model model = load_model(name, device);
      Record ours = float64_reference(model, device, mode);
      Record python = python_float64_results(name, mode, device.type());
      Tolerance tight{1e-12, 1e-9};
      Verdict verdict = compare_records(python, ours, tight);
      EXPECT_TRUE(verdict.pass) << verdict.report;
      for (const Named& named : ours) {
        if (named.tensor.is_floating_point()) {
          EXPECT_EQ(named.tensor.scalar_type(), at::kDouble) << named.path;
        }
      }
    }
  }
}

// Preparing a training executable (jit's profiling runs, a CUDA graph's warm-up and capture)
// must leave the model exactly as loaded: same parameters and buffers bit for bit (batch-norm
// statistics included), zero gradients, and the example inputs untouched.
TEST_P(BackendOnDevice, PreparingForTrainingLeavesTheModelAsLoaded) {
  const c10::Device device(GetParam());
  for (const std::string& backend_name : table_backends()) {
    for (const auto& name : kModels) {
      SCOPED_TRACE(backend_name + " " + name);
      Model model = load_model(name, device);
      auto backend = make_backend(backend_name);
      BackendRequest request = request_for(device, Mode::kTraining);
      if (backend->unsupported_reason(model.manifest, request)) continue;
      std::vector<c10::IValue> inputs_before = clone_inputs(model.inputs);
      auto executable = backend->prepare(model.manifest, request, model.inputs);
      TrainingState state = executable->training_state();

      torch::jit::Module fresh = load_torchscript(model.manifest, "train", device);
      std::map<std::string, at::Tensor> loaded;
      for (const auto& item : fresh.named_parameters()) loaded[item.name] = item.value;
      for (const auto& item : fresh.named_buffers()) loaded["buffer:" + item.name] = item.value;
      ASSERT_EQ(state.parameters.size(), fresh.parameters().size());
      for (const auto& [param, value] : state.parameters) {
        ASSERT_TRUE(loaded.count(param)) << param;
        EXPECT_TRUE(at::equal(value.detach(), loaded[param]))
            << param << " changed while preparing";
      }
      for (const auto& [buffer, value] : state.buffers) {
        ASSERT_TRUE(loaded.count("buffer:" + buffer)) << buffer;
        EXPECT_TRUE(at::equal(value, loaded["buffer:" + buffer]))
            << buffer << " changed while preparing";
      }
      for (const auto& [grad_name, grad] : state.gradients) {
        EXPECT_EQ(grad.abs().sum().item<double>(), 0.0)
            << grad_name << " is not zero after preparing";
      }
      for (std::size_t i = 0; i < inputs_before.size(); ++i) {
        EXPECT_TRUE(at::equal(inputs_before[i].toTensor(), model.inputs[i].toTensor()))
            << "input " << i << " changed while preparing";
      }
    }
  }
}

// Running twice on the same inputs gives the same result (no state leaks between inference
// calls: a frozen module, static CUDA-graph buffers), and new inputs give new results.
TEST_P(BackendOnDevice, InferenceFollowsItsInputs) {
  const c10::Device device(GetParam());
  for (const std::string& backend_name : table_backends()) {
    // aot_inductor's packages are compiled for one input shape and value-independent: the
    // table above checks its results.
    if (backend_name == "aot_inductor") continue;
    for (const std::string name : {"conv_bn_relu", "mlp"}) {
      SCOPED_TRACE(backend_name + " " + name);
      Model model = load_model(name, device);
      auto backend = make_backend(backend_name);
      BackendRequest request = request_for(device, Mode::kInference);
      if (backend->unsupported_reason(model.manifest, request)) continue;
      auto executable = backend->prepare(model.manifest, request, model.inputs);
      std::vector<c10::IValue> other = {model.inputs[0].toTensor() * 2 + 1};
      Record first, second, changed;
      flatten_into(executable->run(clone_inputs(model.inputs)), "output", first);
      flatten_into(executable->run(clone_inputs(other)), "output", changed);
      flatten_into(executable->run(clone_inputs(model.inputs)), "output", second);
      Verdict same = compare_records(first, second, Tolerance{0, 0});
      EXPECT_TRUE(same.pass) << same.report;
      Verdict differs = compare_records(
          first, changed, case_tolerance(backend_name, name, Mode::kInference, device.type()));
      EXPECT_FALSE(differs.pass) << "the output did not follow a change of the input";

      // And the new input's output is right.
      Model other_model = model;
      other_model.inputs = other;
      Record reference = float64_reference(other_model, device, Mode::kInference);
      Verdict right = compare_records(
          reference, changed, case_tolerance(backend_name, name, Mode::kInference, device.type()));
      EXPECT_TRUE(right.pass) << right.report;
    }
  }
}

// Every switch of a backend off at once (`zoobench bisect`'s "everything off" step: jit
// unfrozen and interpreted, aot_inductor uncaptured and unmemoized, Inductor with none of its
// config steps): the backend still prepares, matches the float64 reference and captures no
// CUDA graph (each backend's capture is one of its switches).
TEST_P(BackendOnDevice, EverySwitchOffStillMatchesTheReference) {
  const c10::Device device(GetParam());
  const Mode mode = Mode::kInference;
  Model model = load_model("conv_bn_relu", device);
  const Record reference = float64_reference(model, device, mode);
  for (const std::string& backend_name : table_backends()) {
    auto backend = make_backend(backend_name);
    BackendRequest request = request_for(device, mode);
    for (const auto& s : applicable_switches(*backend, mode, device.is_cuda() ? "cuda" : "cpu"))
      request.disabled_switches.push_back(s.name);
    if (request.disabled_switches.empty()) continue;
    if (backend->unsupported_reason(model.manifest, request)) continue;
    const bool flat_outputs = backend_name == "aot_inductor";
    const std::string package = std::string("aoti.float32.") + (device.is_cuda() ? "cuda" : "cpu");
    if (flat_outputs && model.manifest.artifact(package) == nullptr) continue;
    SCOPED_TRACE(backend_name + " with every switch off");
    RunOutcome result = run_backend(*backend, model.manifest, request, model.inputs);
    const Tolerance tol = case_tolerance(backend_name, "conv_bn_relu", mode, device.type());
    Verdict verdict = compare_records(reference, result.record, tol, flat_outputs);
    std::printf("[ switches ] %s off on %s: worst ratio %.3g\n", backend_name.c_str(),
                device.str().c_str(), verdict.worst_ratio);
    EXPECT_TRUE(verdict.pass) << verdict.report;
    EXPECT_EQ(result.info.cudagraphs, "off");
  }
}

}  // namespace
}  // namespace zoobench::backend_cases
