// torchvision_ops' CUDA kernels against its CPU kernels (which tests/unit/patches checks
// against torchvision itself): nms (exact indices, incl. ties, identical and degenerate boxes,
// several 64-box tiles, half), roi_align forward and backward (sampling_ratio <= 0, aligned,
// boxes outside the image, several images, non-contiguous gradients, half), and a scripted
// Mask R-CNN running on CUDA with the patch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/testing.h"
#include "unit/patches/reference_tensors.h"
#include "zoobench/patches/registry.h"
#include "zoobench/patches/torchvision_ops.h"

namespace zoobench::patches {
namespace {

using RoiAlignFn = at::Tensor(const at::Tensor&, const at::Tensor&, double, int64_t, int64_t,
                              int64_t, bool);

class TorchvisionOpsCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  }
  PatchScope scope_{{"torchvision_ops"}};
};

at::Tensor nms(const at::Tensor& boxes, const at::Tensor& scores, double threshold) {
  return c10::Dispatcher::singleton()
      .findSchemaOrThrow("torchvision::nms", "")
      .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double)>()
      .call(boxes, scores, threshold);
}

at::Tensor roi_align(const at::Tensor& input, const at::Tensor& rois, double scale, int64_t ph,
                     int64_t pw, int64_t ratio, bool aligned) {
  return c10::Dispatcher::singleton()
      .findSchemaOrThrow("torchvision::roi_align", "")
      .typed<RoiAlignFn>()
      .call(input, rois, scale, ph, pw, ratio, aligned);
}

at::Tensor random_boxes(int64_t n, double scale, at::ScalarType dtype = at::kFloat) {
  const at::Tensor xy = at::rand({n, 2}, at::kDouble) * scale;
  const at::Tensor wh = at::rand({n, 2}, at::kDouble) * scale / 4;
  return at::cat({xy, xy + wh}, 1).to(dtype);
}

TEST_F(TorchvisionOpsCuda, NmsMatchesTheCpuKernelExactly) {
  at::manual_seed(0);
  struct Case {
    std::string name;
    at::Tensor boxes, scores;
    double threshold;
  };
  std::vector<Case> cases;
  cases.push_back({"random", random_boxes(500, 100), at::rand({500}), 0.5});
  cases.push_back({"many tiles", random_boxes(5000, 1000), at::rand({5000}), 0.3});
  cases.push_back({"f64", random_boxes(300, 100, at::kDouble), at::rand({300}, at::kDouble), 0.4});
  cases.push_back({"ties", random_boxes(400, 30), at::randint(0, 3, {400}).to(at::kFloat), 0.4});
  const at::Tensor same = at::tensor({10.f, 10.f, 20.f, 20.f}).repeat({130, 1});
  cases.push_back({"identical (3 tiles)", same, at::rand({130}), 0.5});
  cases.push_back({"identical ties", same, at::ones({130}), 0.5});
  at::Tensor odd = random_boxes(200, 400) - 150;
  odd.narrow(0, 0, 20).narrow(1, 2, 2).copy_(odd.narrow(0, 0, 20).narrow(1, 0, 2));
  cases.push_back({"outside and degenerate", odd, at::rand({200}), 0.5});
  cases.push_back({"threshold 0", random_boxes(100, 100), at::rand({100}), 0.0});
  cases.push_back({"threshold 1", random_boxes(100, 100), at::rand({100}), 1.0});
  cases.push_back({"empty", at::zeros({0, 4}), at::zeros({0}), 0.5});
  for (const auto& c : cases) {
    const at::Tensor expected = nms(c.boxes, c.scores, c.threshold);
    const at::Tensor got = nms(c.boxes.cuda(), c.scores.cuda(), c.threshold);
    EXPECT_TRUE(got.is_cuda()) << c.name;
    EXPECT_TRUE(got.cpu().equal(expected)) << c.name;
  }
  // Half on CUDA (no CPU half kernel, as in torchvision): against float on the same values.
  const at::Tensor boxes = random_boxes(700, 100).to(at::kHalf);
  const at::Tensor scores = at::rand({700}).to(at::kHalf);
  EXPECT_TRUE(nms(boxes.cuda(), scores.cuda(), 0.5)
                  .cpu()
                  .equal(nms(boxes.to(at::kFloat), scores.to(at::kFloat), 0.5)));
}

TEST_F(TorchvisionOpsCuda, RoiAlignForwardAndBackwardMatchTheCpuKernels) {
  at::manual_seed(1);
  struct Config {
    int64_t n, c, h, w, k;
    double scale;
    int64_t ph, pw, ratio;
    bool aligned;
    at::ScalarType dtype;
  };
  const std::vector<Config> configs = {
      {2, 3, 10, 13, 20, 0.5, 7, 7, -1, false, at::kFloat},
      {2, 3, 10, 13, 20, 0.5, 7, 7, -1, true, at::kFloat},
      {3, 4, 16, 16, 30, 0.25, 3, 5, 2, false, at::kFloat},
      {3, 4, 16, 16, 30, 0.25, 3, 5, 0, true, at::kDouble},
      {2, 256, 50, 50, 200, 0.25, 7, 7, 2, false, at::kFloat},  // Mask R-CNN's box head size
      {2, 3, 10, 10, 0, 0.5, 7, 7, -1, false, at::kFloat},      // no rois
  };
  for (const auto& c : configs) {
    const std::string what = "C=" + std::to_string(c.c) + " K=" + std::to_string(c.k) +
                             " ratio=" + std::to_string(c.ratio) +
                             " aligned=" + std::to_string(c.aligned);
    const double image_h = c.h / c.scale, image_w = c.w / c.scale;
    const at::Tensor index = at::randint(0, c.n, {c.k, 1}).to(at::kDouble);
    const at::Tensor x0 = at::rand({c.k, 1}, at::kDouble) * image_w * 1.2 - image_w * 0.1;
    const at::Tensor y0 = at::rand({c.k, 1}, at::kDouble) * image_h * 1.2 - image_h * 0.1;
    const at::Tensor rois =
        at::cat({index, x0, y0, x0 + at::rand({c.k, 1}, at::kDouble) * image_w / 2,
                 y0 + at::rand({c.k, 1}, at::kDouble) * image_h / 2},
                1)
            .to(c.dtype);
    const at::Tensor input = at::randn({c.n, c.c, c.h, c.w}).to(c.dtype);
    const double tol = c.dtype == at::kDouble ? 1e-10 : 1e-4;

    const at::Tensor cpu_in = input.clone().requires_grad_(true);
    const at::Tensor cpu_out = roi_align(cpu_in, rois, c.scale, c.ph, c.pw, c.ratio, c.aligned);
    const at::Tensor grad = at::randn(cpu_out.sizes()).to(c.dtype);
    cpu_out.backward(grad);

    const at::Tensor cuda_in = input.cuda().requires_grad_(true);
    const at::Tensor cuda_out =
        roi_align(cuda_in, rois.cuda(), c.scale, c.ph, c.pw, c.ratio, c.aligned);
    EXPECT_TRUE(at::allclose(cuda_out.cpu(), cpu_out, tol, tol)) << what << " forward";
    // A non-contiguous gradient (same values) through autograd.
    cuda_out.backward(grad.cuda().transpose(2, 3).contiguous().transpose(2, 3));
    EXPECT_TRUE(at::allclose(cuda_in.grad().cpu(), cpu_in.grad(), tol, tol)) << what << " backward";

    if (c.dtype == at::kFloat) {
      // The reference sees the same half-rounded values (box corners near 200 px move by up to
      // 0.06 px in half, which moves bilinear samples); what is left is the kernel's own
      // rounding of its sums and of the result.
      const at::Tensor input_h = input.to(at::kHalf), rois_h = rois.to(at::kHalf);
      const at::Tensor reference = roi_align(input_h.to(at::kFloat), rois_h.to(at::kFloat),
                                             c.scale, c.ph, c.pw, c.ratio, c.aligned);
      const at::Tensor half_out =
          roi_align(input_h.cuda(), rois_h.cuda(), c.scale, c.ph, c.pw, c.ratio, c.aligned);
      EXPECT_EQ(half_out.scalar_type(), at::kHalf);
      EXPECT_TRUE(at::allclose(half_out.cpu().to(at::kFloat), reference, 1e-2, 1e-2))
          << what << " half: max |diff| "
          << (half_out.cpu().to(at::kFloat) - reference).abs().max().item<double>();
    }
  }
}

TEST_F(TorchvisionOpsCuda, ScriptedMaskRcnnRunsOnCuda) {
  testing::ScratchDir dir;
  const std::string model_path = dir.file("maskrcnn.pt");
  const std::string expected_path = dir.file("expected.pt");
  testing::run_python(std::string(testing::kSaveTensorsPython) + "MODEL = '" + model_path +
                      "'\nEXPECTED = '" + expected_path + R"PY('
import torchvision
torch.manual_seed(0)
model = torchvision.models.detection.maskrcnn_resnet50_fpn(
    weights=None, weights_backbone=None, min_size=128, max_size=128,
    rpn_pre_nms_top_n_test=300, rpn_post_nms_top_n_test=100,
    box_score_thresh=0.0, box_detections_per_img=20).eval()
torch.jit.script(model).save(MODEL)
save_tensors(EXPECTED, {'image': torch.rand(3, 128, 128)})
)PY");
  const at::Tensor image = testing::load_tensors(expected_path)["image"];
  torch::jit::Module model = torch::jit::load(model_path, c10::Device(c10::kCUDA));
  model.eval();
  at::NoGradGuard no_grad;
  c10::List<at::Tensor> images;
  images.push_back(image.cuda());
  for (int run = 0; run < 3; ++run) {  // profiling and optimised executor runs
    auto output = model.forward({images}).toTuple();
    auto d = output->elements()[1].toList().get(0).toGenericDict();
    const at::Tensor boxes = d.at("boxes").toTensor();
    const at::Tensor scores = d.at("scores").toTensor();
    const at::Tensor masks = d.at("masks").toTensor();
    ASSERT_TRUE(boxes.is_cuda());
    EXPECT_EQ(boxes.size(0), 20);
    EXPECT_TRUE(boxes.ge(0).all().item<bool>() && boxes.le(128).all().item<bool>());
    EXPECT_TRUE((scores.narrow(0, 0, scores.size(0) - 1) >= scores.narrow(0, 1, scores.size(0) - 1))
                    .all()
                    .item<bool>());
    EXPECT_EQ(masks.sizes(), (std::vector<int64_t>{20, 1, 128, 128}));
    EXPECT_TRUE(masks.ge(0).all().item<bool>() && masks.le(1).all().item<bool>());
  }
}

}  // namespace
}  // namespace zoobench::patches
