// The comparison on CUDA (ATen operators) against the same comparison on CPU (the fused loop),
// and torch.save files with CUDA tensors. Runs on the GPU machine only (ctest label gpu).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "testing/testing.h"
#include "zoobench/accuracy/compare.h"
#include "zoobench/serialization/torch_save.h"

namespace zoobench::accuracy {
namespace {

const c10::Device kCuda(c10::kCUDA, 0);

void expect_close(double cuda, double cpu, double rel, const char* what) {
  if (std::isnan(cpu)) {
    EXPECT_TRUE(std::isnan(cuda)) << what;
  } else if (std::isinf(cpu)) {
    EXPECT_EQ(cuda, cpu) << what;
  } else {
    EXPECT_NEAR(cuda, cpu, rel * std::max(1.0, std::abs(cpu))) << what;
  }
}

TEST(CudaCompare, SameVerdictsAndStatisticsAsCpu) {
  ASSERT_TRUE(at::hasCUDA()) << "this test needs a GPU";
  at::manual_seed(5);
  int compared = 0;
  for (auto dtype : {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kLong}) {
    for (double noise : {0.0, 1e-6, 1e-3, 1e-1}) {
      for (double tol : {1e-4, 1e-2}) {
        for (bool with_fp64 : {false, true}) {
          SCOPED_TRACE(::testing::Message() << c10::toString(dtype) << " noise=" << noise
                                            << " tol=" << tol << " fp64=" << with_fp64);
          at::Tensor golden = at::randn({64, 33}, at::kDouble) * 3;
          if (dtype == at::kLong) golden = golden.round();
          at::Tensor ref = (golden + at::randn({64, 33}, at::kDouble) * noise).to(dtype);
          at::Tensor res = (golden + at::randn({64, 33}, at::kDouble) * noise).to(dtype);
          if (at::isFloatingType(dtype) && noise > 0) ref.view(-1)[7] = NAN;
          at::Tensor fp64 = with_fp64 ? golden : at::Tensor();
          SameOptions o;
          o.tol = tol;
          TensorDiagnosis cpu = compare_tensors("t", ref, res, fp64, o);
          TensorDiagnosis cuda = compare_tensors("t", ref.to(kCuda), res.to(kCuda),
                                                 with_fp64 ? fp64.to(kCuda) : at::Tensor(), o);
          EXPECT_EQ(cuda.rule, cpu.rule);
          expect_close(cuda.max_abs, cpu.max_abs, 0, "max_abs");
          expect_close(cuda.mean_abs, cpu.mean_abs, 1e-12, "mean_abs");
          expect_close(cuda.rmse_ref, cpu.rmse_ref, 1e-12, "rmse_ref");
          expect_close(cuda.rmse_res, cpu.rmse_res, 1e-12, "rmse_res");
          if (dtype == at::kHalf || dtype == at::kBFloat16) {
            // torch rounds the allclose bound differently on CUDA and CPU for these dtypes:
            // elements on the boundary may go either way.
            EXPECT_LE(std::abs(cuda.mismatched - cpu.mismatched), 1 + cpu.numel / 500);
          } else {
            EXPECT_EQ(cuda.pass, cpu.pass);
            EXPECT_EQ(cuda.mismatched, cpu.mismatched);
            expect_close(cuda.margin, cpu.margin, 1e-9, "margin");
            expect_close(cuda.min_passing_tol, cpu.min_passing_tol, 1e-9, "min_passing_tol");
          }
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 80);
}

TEST(CudaCompare, TreesAndBoolMasksOnCuda) {
  ASSERT_TRUE(at::hasCUDA());
  at::Tensor logits = at::randn({8, 1000}, at::TensorOptions().device(kCuda));
  at::Tensor mask = logits > 0;
  at::Tensor other = mask.clone();
  other.view(-1)[0] = !other.view(-1)[0].item<bool>();
  SameOptions iou;
  iou.use_iou_for_bool = true;
  EXPECT_TRUE(same(mask, other, c10::IValue(), iou).pass);  // IoU ~ 0.9997
  EXPECT_FALSE(same(mask, other).pass);                     // uint8 allclose
  SameOptions cosine;
  cosine.cos_similarity = true;
  EXPECT_TRUE(same(logits, logits * 1.001, c10::IValue(), cosine).pass);
  EXPECT_FALSE(same(logits, logits * 1.001).pass);
}

TEST(CudaTorchSave, CudaTensorsRoundTripAndMapLocation) {
  ASSERT_TRUE(at::hasCUDA());
  testing::ScratchDir dir;
  at::Tensor x =
      at::arange(12, at::TensorOptions().dtype(at::kFloat).device(kCuda)).reshape({3, 4});
  serialization::save_for_python(c10::ivalue::Tuple::create({x, x.t(), x[1]}), dir.file("cuda.pt"));
  c10::IValue on_gpu = serialization::load_torch_save(dir.file("cuda.pt"));
  const auto& elements = on_gpu.toTupleRef().elements();
  EXPECT_TRUE(elements[0].toTensor().is_cuda());
  EXPECT_TRUE(elements[0].toTensor().is_alias_of(elements[1].toTensor()));
  EXPECT_TRUE(at::equal(elements[2].toTensor().cpu(), x[1].cpu()));
  c10::IValue on_cpu = serialization::load_torch_save(dir.file("cuda.pt"), c10::Device(c10::kCPU));
  EXPECT_TRUE(on_cpu.toTupleRef().elements()[1].toTensor().is_cpu());
  EXPECT_TRUE(at::equal(on_cpu.toTupleRef().elements()[1].toTensor(), x.t().cpu()));
}

}  // namespace
}  // namespace zoobench::accuracy
