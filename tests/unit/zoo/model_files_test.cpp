// Loading a model's verified bytes, and casting modules and inputs to another dtype and cloning
// inputs: floating tensors change, integer ones (ids, masks, batch norm's num_batches_tracked,
// position_ids buffers) never do.
#include "zoobench/zoo/model_files.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/script.h>

#include <filesystem>

#include "testing/testing.h"
#include "zoobench/serialization/torch_save.h"
#include "zoobench/util/files.h"
#include "zoobench/util/sha256.h"

namespace zoobench {
namespace {

// A module like a text encoder: a float weight, an int64 position_ids buffer used as indices,
// a float buffer.
torch::jit::Module embedding_module() {
  torch::jit::Module module("Embedder");
  module.register_parameter("weight", at::arange(12, at::kFloat).reshape({6, 2}), false);
  module.register_buffer("position_ids", at::arange(4, at::kLong));
  module.register_buffer("scale", at::full({1}, 0.5, at::kFloat));
  module.define(R"(
    def forward(self, x):
        return torch.embedding(self.weight, self.position_ids) * self.scale + x
  )");
  return module;
}

// What torch.jit.trace records for a convolution: aten::_convolution with the cuDNN switches of
// the moment (here benchmark off, TF32 on) as constants, in a submodule's method.
torch::jit::Module traced_convolution_model() {
  torch::jit::Module conv("Conv");
  conv.register_parameter("weight", at::randn({4, 3, 3, 3}, at::TensorOptions().dtype(at::kFloat)), false);
  conv.define(R"(
    def forward(self, x):
        return torch._convolution(x, self.weight, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                                  False, False, True, True)
  )");
  torch::jit::Module model("Model");
  model.register_module("conv", conv);
  model.define(R"(
    def forward(self, x):
        return torch.relu(self.conv.forward(x))
  )");
  return model;
}

int traced_convolutions(const torch::jit::Module& module) {
  int found = 0;
  for (const auto& submodule : module.modules()) {
    for (const auto& method : submodule.get_methods()) {
      found += static_cast<int>(
          torch::jit::findAllNodes(*method.graph(), c10::Symbol::fromQualString("aten::_convolution"), true).size());
    }
  }
  return found;
}

// The rewritten convolutions read the run's switches (no constant one is left) and compute what
// the recorded ones did on the CPU, bit for bit.
TEST(ConvolutionSettings, TracedConvolutionsFollowTheRun) {
  at::manual_seed(0);
  torch::jit::Module recorded = traced_convolution_model();
  at::manual_seed(0);
  torch::jit::Module rewritten = traced_convolution_model();  // the same weights
  ASSERT_EQ(traced_convolutions(rewritten), 1);
  // Rewritten before its first run, as load_torchscript does (an executor keeps its first plan).
  EXPECT_EQ(follow_run_convolution_settings(rewritten), 1);
  EXPECT_EQ(traced_convolutions(rewritten), 0);
  EXPECT_EQ(traced_convolutions(recorded), 1);
  at::Tensor x = at::randn({2, 3, 8, 8});
  EXPECT_TRUE(at::equal(rewritten.forward({x}).toTensor(), recorded.forward({x}).toTensor()));
  EXPECT_EQ(follow_run_convolution_settings(rewritten), 0);  // nothing left to do
}

TEST(CastModule, FloatingTensorsOnly) {
  for (c10::ScalarType dtype : {at::kDouble, at::kHalf, at::kBFloat16}) {
    torch::jit::Module module = embedding_module();
    cast_module(module, dtype);
    EXPECT_EQ(module.attr("weight").toTensor().scalar_type(), dtype);
    EXPECT_EQ(module.attr("scale").toTensor().scalar_type(), dtype);
    EXPECT_EQ(module.attr("position_ids").toTensor().scalar_type(), at::kLong)
        << c10::toString(dtype);
    EXPECT_TRUE(at::equal(module.attr("position_ids").toTensor(), at::arange(4, at::kLong)));
  }
}

TEST(CastModule, TheCastModuleStillRuns) {
  torch::jit::Module module = embedding_module();
  cast_module(module, at::kDouble);
  at::Tensor out = module.forward({at::zeros({4, 2}, at::kDouble)}).toTensor();
  EXPECT_EQ(out.scalar_type(), at::kDouble);
  EXPECT_TRUE(at::allclose(out, at::arange(8, at::kDouble).reshape({4, 2}) * 0.5));
}

TEST(CastModule, ParametersStayParametersOfTheModule) {
  torch::jit::Module module = embedding_module();
  module.train();
  cast_module(module, at::kDouble);
  int parameters = 0;
  for (const auto& p : module.parameters()) {
    EXPECT_EQ(p.scalar_type(), at::kDouble);
    ++parameters;
  }
  EXPECT_EQ(parameters, 1);
}

// What torch.jit.trace records for HuggingFace's `attn_weights.type(value.dtype)` and a mask
// made with `dtype=torch.float32`: casts to float32 (6) as constants, inside an `if` block too.
torch::jit::Module traced_float32_casts() {
  torch::jit::Module module("Attention");
  module.register_parameter("value", at::randn({3, 3}, at::kFloat), false);
  module.define(R"(
    def forward(self, scores):
        weights = torch.softmax(scores, -1, dtype=6).to(6)
        mask = torch.ones([3, 3], dtype=6)
        if bool(scores.sum() > -1000.0):
            weights = weights.to(6) * mask
        return torch.matmul(weights, self.value)
  )");
  return module;
}

// The golden run computes in float64 throughout, and matches a float64 computation of the
// same expression; unwidened it fails as GPT-2's did ("expected scalar type Float but found
// Double").
TEST(WidenFloatDtypeConstants, TheFloat64RunStaysFloat64) {
  at::manual_seed(0);
  torch::jit::Module module = traced_float32_casts();
  const at::Tensor value = module.attr("value").toTensor().to(at::kDouble);
  cast_module(module, at::kDouble);
  const at::Tensor scores = at::randn({3, 3}, at::kDouble);
  EXPECT_THROW(module.forward({scores}), std::exception);

  at::manual_seed(0);
  torch::jit::Module widened = traced_float32_casts();  // the same weights
  cast_module(widened, at::kDouble);
  EXPECT_EQ(widen_float_dtype_constants(widened), 4);  // softmax, two to(), ones
  const at::Tensor out = widened.forward({scores}).toTensor();
  EXPECT_EQ(out.scalar_type(), at::kDouble);
  EXPECT_TRUE(at::allclose(out, at::matmul(at::softmax(scores, -1), value), 1e-12, 1e-12));
  EXPECT_EQ(widen_float_dtype_constants(widened), 0);  // nothing left to do
}

TEST(CastInputs, FloatingInputsOnly) {
  std::vector<c10::IValue> inputs = {at::ones({2}, at::kFloat), at::arange(3, at::kLong),
                                     at::ones({1}, at::kBool), c10::IValue(int64_t{7})};
  auto cast = cast_inputs(inputs, at::kDouble);
  ASSERT_EQ(cast.size(), 4u);
  EXPECT_EQ(cast[0].toTensor().scalar_type(), at::kDouble);
  EXPECT_EQ(cast[1].toTensor().scalar_type(), at::kLong);
  EXPECT_EQ(cast[2].toTensor().scalar_type(), at::kBool);
  EXPECT_EQ(cast[3].toInt(), 7);
  EXPECT_EQ(inputs[0].toTensor().scalar_type(), at::kFloat) << "the originals are untouched";
}

TEST(CloneInputs, IndependentCopiesWithTheSameStrides) {
  at::Tensor channels_last = at::randn({2, 3, 4, 5}).contiguous(at::MemoryFormat::ChannelsLast);
  at::Tensor transposed = at::randn({3, 4}).t();
  std::vector<c10::IValue> inputs = {channels_last, transposed, c10::IValue(2.5)};
  auto copies = clone_inputs(inputs);
  ASSERT_EQ(copies.size(), 3u);
  EXPECT_EQ(copies[0].toTensor().strides(), channels_last.strides());
  EXPECT_EQ(copies[1].toTensor().strides(), transposed.strides());
  EXPECT_TRUE(at::equal(copies[0].toTensor(), channels_last));
  copies[0].toTensor().add_(1);
  EXPECT_FALSE(at::equal(copies[0].toTensor(), channels_last))
      << "the copy shares memory with the input";
  EXPECT_DOUBLE_EQ(copies[2].toDouble(), 2.5);
}

// A module whose one weight holds `value`, saved as `path`.
void save_module_with_weight(const std::string& path, float value) {
  torch::jit::Module module("Scaled");
  module.register_parameter("weight", at::full({2}, value), false);
  module.define(R"(
    def forward(self, x):
        return x * self.weight
  )");
  module.save(path);
}

// The file is read once: what is loaded is the bytes whose sha256 was checked. A file swapped
// after the check (a re-export during a run) is not what the module or the inputs come from, and
// a load that reads the file again refuses it by its digest (both opened the path twice).
TEST(VerifiedBytes, WhatIsLoadedIsWhatWasHashedNotTheFileSwappedIn) {
  testing::ScratchDir dir;
  Manifest manifest;
  manifest.name = "scaled";
  Artifact eval;
  eval.role = "eval";
  eval.path = dir.file("eval.pt");
  save_module_with_weight(eval.path, 1.0f);
  eval.sha256 = sha256_file(eval.path);
  manifest.artifacts["eval"] = eval;
  manifest.inputs_path = dir.file("inputs.pt");
  serialization::save_for_python(c10::ivalue::Tuple::create({at::full({2}, 3.0f)}),
                                 manifest.inputs_path);
  manifest.inputs_sha256 = sha256_file(manifest.inputs_path);

  const std::string module_bytes = read_verified_artifact(eval.path, eval.sha256, "TorchScript");
  EXPECT_EQ(module_bytes, read_text_file(eval.path));
  EXPECT_EQ(sha256_hex(module_bytes.data(), module_bytes.size()), eval.sha256);
  const std::string input_bytes =
      read_verified_artifact(manifest.inputs_path, manifest.inputs_sha256, "inputs");

  // Both files swapped after the check.
  save_module_with_weight(eval.path, 7.0f);
  serialization::save_for_python(c10::ivalue::Tuple::create({at::full({2}, 9.0f)}),
                                 manifest.inputs_path);

  const torch::jit::Module module = load_torchscript_bytes(module_bytes, eval, c10::Device("cpu"));
  EXPECT_TRUE(at::equal(module.attr("weight").toTensor(), at::full({2}, 1.0f)));
  const auto inputs = load_inputs_bytes(input_bytes, manifest.inputs_path, c10::Device("cpu"));
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_TRUE(at::equal(inputs[0].toTensor(), at::full({2}, 3.0f)));

  EXPECT_THROW(load_torchscript(manifest, "eval", c10::Device("cpu")), ModelLoadError);
  EXPECT_THROW(load_inputs(manifest, c10::Device("cpu")), ModelLoadError);
}

// A private copy for a loader that takes a path holds the bytes, and goes with its object.
TEST(VerifiedBytes, APrivateCopyHoldsTheBytesAndIsRemoved) {
  std::string path;
  {
    const PrivateFileCopy copy("the package's bytes", "package.pt2");
    path = copy.path();
    EXPECT_EQ(read_text_file(path), "the package's bytes");
    struct stat st {};
    ASSERT_EQ(::stat(std::filesystem::path(path).parent_path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace zoobench
