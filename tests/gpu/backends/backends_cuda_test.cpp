// The backends on CUDA: the shared table of cases (tests/unit/backends/backend_cases.h) with
// eager, jit, cudagraphs and aot_inductor (where the small zoo got a package: Torch >= 2.6),
// plus what only CUDA has: graph capture on by default, its switch, and the fallback when a
// model cannot be captured.
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/irparser.h>

#include "unit/backends/backend_cases.h"
#include "unit/backends/masked_assignment.h"
#include "zoobench/backends/capture_rewrites.h"
#include "zoobench/backends/cuda_graph_executable.h"

namespace zoobench::backend_cases {
namespace {

INSTANTIATE_TEST_SUITE_P(Cuda, BackendTable, ::testing::ValuesIn(backend_cases(c10::kCUDA)),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Cuda, BackendOnDevice, ::testing::Values(c10::kCUDA));

class CudaGraphs : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_usable(c10::kCUDA)) GTEST_SKIP() << "no CUDA device";
    compat::set_deterministic_numerics(true);
  }
  const c10::Device device_{c10::kCUDA};
};

// A copy of `graph` run on `inputs` (the capture rewrites' tests: before and after).
at::Tensor run_graph(const std::shared_ptr<torch::jit::Graph>& graph, const std::vector<c10::IValue>& inputs) {
  torch::jit::GraphFunction fn(c10::QualifiedName("f"), graph->copy(), nullptr);
  return fn(inputs).toTensor();
}

// Whether running it waits for the device: CUDA's sync-debug mode set to error for the run.
bool waits_for_device(const std::shared_ptr<torch::jit::Graph>& graph, const std::vector<c10::IValue>& inputs) {
  c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
  bool raised = false;
  try {
    run_graph(graph, inputs);
  } catch (const std::exception& e) {
    raised = std::string(e.what()).find("synchronizing") != std::string::npos;
  }
  c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
  return raised;
}

// Capture is on by default for compiled backends on CUDA and off when asked; what ran is in
// ExecutionInfo (the row's `cudagraphs` column).
TEST_F(CudaGraphs, OnByDefaultOffWhenDisabled) {
  Model model = load_model("conv_bn_relu", device_);
  for (Mode mode : {Mode::kInference, Mode::kTraining}) {
    for (const std::string name : {"cudagraphs", "jit"}) {
      SCOPED_TRACE(name + " " + mode_name(mode));
      BackendRequest request = request_for(device_, mode);
      auto backend = make_backend(name);
      EXPECT_EQ(backend->prepare(model.manifest, request, model.inputs)->info().cudagraphs, "on");
      request.cudagraphs = false;
      EXPECT_EQ(backend->prepare(model.manifest, request, model.inputs)->info().cudagraphs, "off");
    }
  }
  // The eager reference never captures.
  EXPECT_EQ(make_backend("eager")
                ->prepare(model.manifest, request_for(device_, Mode::kInference), model.inputs)
                ->info()
                .cudagraphs,
            "off");
}

// Adam keeps its step count on the host, so a replayed step would repeat the captured one:
// capture is refused up front and the row says why.
TEST_F(CudaGraphs, AdamIsNotCaptured) {
  Model model = load_model("mlp", device_);
  BackendRequest request = request_for(device_, Mode::kTraining);
  request.optimizer.kind = "adam";
  auto executable = make_backend("cudagraphs")->prepare(model.manifest, request, model.inputs);
  EXPECT_EQ(executable->info().cudagraphs, "fallback");
  EXPECT_NE(executable->info().note.find("adam"), std::string::npos) << executable->info().note;
}

// host_sync reads a value back to the host inside forward (float(tensor)), host_copy copies to
// the host and back: a capture can hold neither. The first warm-up call runs with syncs as
// errors and finds them, so the capture is not tried; the executable runs uncaptured, says so,
// names the operation, and still computes the right thing.
TEST_F(CudaGraphs, UncapturableModelFallsBackAndStaysCorrect) {
  const std::vector<std::pair<std::string, std::string>> models = {
      {"host_sync", "capture skipped, ran uncaptured: the model waits for the device (a host read) at "},
      {"host_copy", "capture skipped, ran uncaptured: the model waits for the device (a host read) at "}};
  for (const auto& [model_name, how] : models) {
    Model model = load_model(model_name, device_);
    for (Mode mode : {Mode::kInference, Mode::kTraining}) {
      for (const std::string name : {"cudagraphs", "jit"}) {
        SCOPED_TRACE(model_name + " " + name + " " + mode_name(mode));
        auto backend = make_backend(name);
        RunOutcome result =
            run_backend(*backend, model.manifest, request_for(device_, mode), model.inputs);
        EXPECT_EQ(result.info.cudagraphs, "fallback");
        EXPECT_NE(result.info.note.find(how), std::string::npos) << result.info.note;
        Record reference = float64_reference(model, device_, mode);
        Verdict verdict = compare_records(reference, result.record,
                                          case_tolerance(name, model_name, mode, c10::kCUDA));
        EXPECT_TRUE(verdict.pass) << verdict.report;
      }
    }
  }
  // A failed capture leaves the device usable for the next model.
  Model next = load_model("mlp", device_);
  RunOutcome after = run_backend(*make_backend("cudagraphs"), next.manifest,
                                 request_for(device_, Mode::kInference), next.inputs);
  EXPECT_EQ(after.info.cudagraphs, "on");
  Verdict verdict =
      compare_records(float64_reference(next, device_, Mode::kInference), after.record,
                      case_tolerance("cudagraphs", "mlp", Mode::kInference, c10::kCUDA));
  EXPECT_TRUE(verdict.pass) << verdict.report;
}

// A captured training step replays forward, backward and the SGD update: three replays match
// three eager steps (parameters keep moving, batch-norm statistics keep updating).
TEST_F(CudaGraphs, ReplayedTrainingStepsFollowEager) {
  Model model = load_model("conv_bn_relu", device_);
  BackendRequest request = request_for(device_, Mode::kTraining);
  auto captured = make_backend("cudagraphs")->prepare(model.manifest, request, model.inputs);
  ASSERT_EQ(captured->info().cudagraphs, "on");
  request.cudagraphs = false;
  auto eager = make_backend("eager")->prepare(model.manifest, request, model.inputs);
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    StepResult a = eager->step(clone_inputs(model.inputs));
    StepResult b = captured->step(clone_inputs(model.inputs));
    Record ra, rb;
    ra.push_back({"loss", a.loss.detach().cpu().clone()});
    rb.push_back({"loss", b.loss.detach().cpu().clone()});
    append_named("param", eager->training_state().parameters, ra);
    append_named("param", captured->training_state().parameters, rb);
    append_named("buffer", eager->training_state().buffers, ra);
    append_named("buffer", captured->training_state().buffers, rb);
    Verdict verdict = compare_records(
        ra, rb, case_tolerance("cudagraphs", "conv_bn_relu", Mode::kTraining, c10::kCUDA));
    EXPECT_TRUE(verdict.pass) << verdict.report;
  }
}

// The capture rewrites on the device (backends/capture_rewrites.h). Traced size arithmetic that
// meets a 0-dim CUDA constant (timm's "same" padding: floor_divide(pad, 2) with the 2 traced on
// the GPU) reads the device back in int(); after the rewrite the same numbers come from the host.
TEST_F(CudaGraphs, SizeArithmeticWithADeviceConstantStaysOnTheHost) {
  auto graph = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(R"IR(
graph(%x : Tensor, %two : Tensor):
  %zero : int = prim::Constant[value=0]()
  %fill : float = prim::Constant[value=0.]()
  %n : int = aten::size(%x, %zero)
  %nt : Tensor = prim::NumToTensor(%n)
  %half : Tensor = aten::floor_divide(%nt, %two)
  %i : int = aten::Int(%half)
  %pad : int[] = prim::ListConstruct(%i, %i)
  %y : Tensor = aten::constant_pad_nd(%x, %pad, %fill)
  return (%y))IR",
                      graph.get());
  {
    // The 2 becomes a constant on the GPU, as tracing on CUDA records it.
    torch::jit::WithInsertPoint first(graph->nodes().front());
    graph->inputs()[1]->replaceAllUsesWith(
        graph->insertConstant(at::scalar_tensor(2, at::TensorOptions(at::kLong).device(device_))));
    graph->eraseInput(1);
  }
  const std::vector<c10::IValue> x = {at::randn({6}, at::TensorOptions().device(device_))};
  const at::Tensor before = run_graph(graph, x);
  EXPECT_TRUE(waits_for_device(graph, x)) << "the test graph must read the device before the rewrite";
  auto rewritten = graph->copy();
  EXPECT_EQ(keep_size_arithmetic_on_host(*rewritten), 1) << *rewritten;
  EXPECT_FALSE(waits_for_device(rewritten, x)) << *rewritten;
  EXPECT_TRUE(at::equal(run_graph(rewritten, x), before));
  EXPECT_EQ(before.size(0), 6 + 2 * 3);
}

// transformers' attention masks (masking_utils): a 0.0 made from a Python number, traced as a
// CPU constant and copied to the GPU on every call, which waits for the device from pageable
// memory (RobertaForQuestionAnswering's capture fell back on it, 2026-12-02g). Folded, the copy
// is made once, nothing waits, and the mask is the same.
TEST_F(CudaGraphs, ACopyOfAHostConstantToTheDeviceIsMadeOnceAndReadsNothingBack) {
  auto graph = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(R"IR(
graph(%mask : Tensor, %zero : Tensor, %device : Device):
  %float : int = prim::Constant[value=6]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %min : float = prim::Constant[value=-3.4028234663852886e+38]()
  %on_device : Tensor = aten::to(%zero, %device, %float, %false, %false, %none)
  %kept : Tensor = aten::detach(%on_device)
  %y : Tensor = aten::where(%mask, %kept, %min)
  return (%y))IR",
                      graph.get());
  {
    torch::jit::WithInsertPoint first(graph->nodes().front());
    graph->inputs()[1]->replaceAllUsesWith(graph->insertConstant(at::scalar_tensor(0.0, at::kDouble)));
    graph->inputs()[2]->replaceAllUsesWith(graph->insertConstant(device_));
    graph->eraseInput(2);
    graph->eraseInput(1);
  }
  const std::vector<c10::IValue> mask = {at::rand({4, 8}, at::TensorOptions().device(device_)) > 0.5};
  const at::Tensor before = run_graph(graph, mask);
  EXPECT_TRUE(waits_for_device(graph, mask)) << "the copy from the host must wait for the device before the rewrite";
  auto rewritten = graph->copy();
  EXPECT_EQ(fold_constant_copies(rewritten), 1) << *rewritten;
  EXPECT_FALSE(waits_for_device(rewritten, mask)) << *rewritten;
  const at::Tensor after = run_graph(rewritten, mask);
  EXPECT_TRUE(at::equal(after, before));
  EXPECT_TRUE(after.is_cuda());
  EXPECT_EQ(after.scalar_type(), at::kFloat);
}

// t[mask] = v with v on the GPU: the rewritten assignment fills through where(), no host read,
// the same elements as index_put_.
TEST_F(CudaGraphs, MaskedAssignmentOfADeviceValueReadsNothingBack) {
  torch::jit::Module original = testing_models::masked_assignment();
  torch::jit::Module rewritten = testing_models::masked_assignment();
  CaptureRewriteSwitches mask_fills;
  mask_fills.mask_fill_index_put = true;
  ASSERT_EQ(apply_capture_rewrites(rewritten, mask_fills).masked_fills, 1);
  const auto on = at::TensorOptions().device(device_);
  const at::Tensor t = at::randn({8, 16}, on);
  const at::Tensor mask = t > 0.5;
  const at::Tensor v = at::scalar_tensor(-3.0, on);
  const at::Tensor expected = original.forward({t, mask, v}).toTensor();
  c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
  at::Tensor got;
  EXPECT_NO_THROW(got = rewritten.forward({t, mask, v}).toTensor());
  c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
  EXPECT_TRUE(at::equal(expected, got));
}

// A package that the exporter's buffers retry made, for a model that writes a plain tensor
// attribute in forward (llama's KV cache; small_models.py kv_cache): zoobench's loader runs it,
// captured and not, with PyTorch's own float64 result. PyTorch's Python loader crashed on the
// same model's package on the H200 (a segmentation fault while loading, 2026-12-02g to -03c;
// tests/python/test_aoti_export.py), which is why this runs in zoobench's C++ backend.
TEST_F(CudaGraphs, AotInductorRunsThePackageOfAModelThatWritesItsTensorAttribute) {
  if (!compat::kHasAotInductor) GTEST_SKIP() << "AOTInductor needs Torch >= 2.6";
  Model model = load_model("kv_cache", device_);
  ASSERT_NE(model.manifest.artifact("aoti.float32.cuda"), nullptr)
      << "no package: " << aoti_failure("kv_cache", c10::kCUDA);
  // The package came from the retry, with the cache as its buffer.
  std::ifstream in(testing::small_model_manifest(zoo_for(c10::kCUDA), "kv_cache"));
  const nlohmann::json adaptations =
      nlohmann::json::parse(in)["artifacts"]["aoti.float32.cuda"].value("adaptations",
                                                                        nlohmann::json::array());
  ASSERT_EQ(adaptations.size(), 1u) << adaptations.dump();
  EXPECT_NE(adaptations[0].get<std::string>().find("cache"), std::string::npos)
      << adaptations.dump();

  const Record reference = python_float64_results("kv_cache", Mode::kInference, c10::kCUDA);
  const Tolerance tol = case_tolerance("aot_inductor", "kv_cache", Mode::kInference, c10::kCUDA);
  auto backend = make_backend("aot_inductor");
  for (bool captured : {true, false}) {
    SCOPED_TRACE(captured ? "captured" : "not captured");
    BackendRequest request = request_for(device_, Mode::kInference);
    request.cudagraphs = captured;
    RunOutcome result = run_backend(*backend, model.manifest, request, model.inputs);
    EXPECT_EQ(result.info.cudagraphs, captured ? "on" : "off");
    Verdict verdict = compare_records(reference, result.record, tol, /*flat_outputs=*/true);
    EXPECT_TRUE(verdict.pass) << verdict.report;
  }
}

// What a capture meets after a float64 check (BlenderbotSmallForCausalLM at batch 256,
// 2026-12-03e: 107 GiB cached and unused, 5.5 GiB free): a cache that holds the device's memory.
// The allocator's own limit stands in for the full device, so that no GPU memory is taken from
// tests running beside this one: cached blocks fill it to within less than the smallest segment
// a pool allocates (2 MiB). A capture allocates from a private pool, which cannot use the
// cached blocks, and the allocator frees none while a capture is underway, so a plain capture
// runs out of memory (asserted: it shows the setup is what it claims). capture_graph releases
// the cache and captures, and the replay computes what the uncaptured call did.
TEST_F(CudaGraphs, ACaptureOutOfMemoryBesideAFullCacheReleasesItAndCaptures) {
  const c10::DeviceIndex index = c10::cuda::current_device();
  const at::Tensor x = torch::randn({256, 256}, torch::device(device_));
  const at::Tensor w = torch::randn({256, 256}, torch::device(device_));
  at::Tensor y;
  auto call = [&] { y = at::relu(at::mm(x, w)); };
  c10::cuda::device_synchronize();  // x and w were made on the default stream
  c10::cuda::CUDAStreamGuard on_side(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, index));
  for (int i = 0; i < 3; ++i) call();  // the warm-up (cuBLAS's workspace, the output's block)
  const at::Tensor expected = y.clone();
  y = at::Tensor();
  { const at::Tensor filler = at::empty({64 << 20}, torch::dtype(torch::kUInt8).device(device_)); }
  c10::cuda::device_synchronize();
  const int64_t reserved =
      c10::cuda::CUDACachingAllocator::getDeviceStats(index).reserved_bytes[0].current;
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  C10_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  struct LimitUndone {
    c10::DeviceIndex index;
    ~LimitUndone() {
      c10::cuda::CUDACachingAllocator::setMemoryFraction(1.0, index);
      c10::cuda::CUDACachingAllocator::emptyCache();
    }
  } undo{index};
  c10::cuda::CUDACachingAllocator::setMemoryFraction(
      static_cast<double>(reserved + (1 << 20)) / static_cast<double>(total_bytes), index);

  std::string plain_failure;
  {
    at::cuda::CUDAGraph plain;
    plain.capture_begin();
    try {
      call();
    } catch (const std::exception& e) {
      plain_failure = e.what();
    }
    try {
      plain.capture_end();
    } catch (...) {
      // only the stream's capture state is reset here
    }
  }
  ASSERT_NE(plain_failure.find("out of memory"), std::string::npos)
      << "the setup should leave a capture no room; the plain capture said: " << plain_failure;

  std::unique_ptr<at::cuda::CUDAGraph> graph = capture_graph(call);
  ASSERT_NE(graph, nullptr);
  ASSERT_TRUE(y.defined());
  graph->replay();
  c10::cuda::device_synchronize();
  EXPECT_TRUE(at::allclose(y, expected, 1e-5, 1e-5)) << (y - expected).abs().max().item<float>();
}

// Switches that decide a capture: aot_inductor's `cudagraphs` and Inductor's
// `triton.cudagraphs` (reduce-overhead) turn it off, other switches leave it on (Inductor's
// mode is turned into options beneath the disabled switches': torch.compile takes a mode or
// options, not both), and every run matches the float64 reference.
class BackendSwitchesOnCuda : public CudaGraphs {
 protected:
  void expect_runs(const std::string& backend_name,
                   const std::vector<std::pair<std::vector<std::string>, std::string>>& runs) {
    Model model = load_model("conv_bn_relu", device_);
    auto backend = make_backend(backend_name);
    BackendRequest request = request_for(device_, Mode::kInference);
    if (auto why = backend->unsupported_reason(model.manifest, request))
      GTEST_SKIP() << backend_name << ": " << *why;
    const bool flat_outputs = backend_name == "aot_inductor";
    if (flat_outputs && model.manifest.artifact("aoti.float32.cuda") == nullptr)
      GTEST_SKIP() << "no AOTInductor package: " << aoti_failure("conv_bn_relu", c10::kCUDA);
    const Record reference = float64_reference(model, device_, Mode::kInference);
    const Tolerance tol =
        case_tolerance(backend_name, "conv_bn_relu", Mode::kInference, c10::kCUDA);
    for (const auto& [disabled, cudagraphs] : runs) {
      std::string off;
      for (const auto& name : disabled) off += name + " ";
      SCOPED_TRACE(backend_name + " off: " + off);
      request.disabled_switches = disabled;
      RunOutcome result = run_backend(*backend, model.manifest, request, model.inputs);
      EXPECT_EQ(result.info.cudagraphs, cudagraphs);
      Verdict verdict = compare_records(reference, result.record, tol, flat_outputs);
      EXPECT_TRUE(verdict.pass) << verdict.report;
    }
  }
};

TEST_F(BackendSwitchesOnCuda, AotInductorCaptureIsASwitch) {
  expect_runs("aot_inductor", {{{}, "on"},
                               {{"narrowing_memo"}, "on"},
                               {{"cudagraphs"}, "off"},
                               {{"cudagraphs", "narrowing_memo"}, "off"}});
}

TEST_F(BackendSwitchesOnCuda, InductorModeKeepsItsCaptureBesideOtherSwitches) {
  expect_runs("inductor:reduce-overhead",
              {{{"pattern_matcher", "fusion"}, "on"}, {{"triton.cudagraphs"}, "off"}});
}

}  // namespace
}  // namespace zoobench::backend_cases
