// A scripted torchvision Mask R-CNN (vision_maskrcnn's model, random weights, small image and
// proposal counts to keep the test short) cannot load in a plain LibTorch process, and with the
// torchvision_ops patch it loads and reproduces the reference Python's detections.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/testing.h"
#include "unit/patches/reference_tensors.h"
#include "zoobench/patches/registry.h"

namespace zoobench::patches {
namespace {

constexpr const char* kMakeModel = R"PY(
import torchvision
torch.manual_seed(0)
model = torchvision.models.detection.maskrcnn_resnet50_fpn(
    weights=None, weights_backbone=None, min_size=128, max_size=128,
    rpn_pre_nms_top_n_test=300, rpn_post_nms_top_n_test=100,
    box_score_thresh=0.0, box_detections_per_img=20).eval()
scripted = torch.jit.script(model)
scripted.save(MODEL)
image = torch.rand(3, 128, 128)
with torch.no_grad():
    _, detections = scripted([image])
d = detections[0]
assert d['boxes'].shape[0] > 0
save_tensors(EXPECTED, {'image': image, 'boxes': d['boxes'], 'labels': d['labels'],
                        'scores': d['scores'], 'masks': d['masks']})
)PY";

TEST(MaskRcnn, LoadsAndMatchesPythonOnlyWithTheTorchvisionOpsPatch) {
  testing::ScratchDir dir;
  const std::string model_path = dir.file("maskrcnn.pt");
  const std::string expected_path = dir.file("expected.pt");
  testing::run_python(std::string(testing::kSaveTensorsPython) + "MODEL = '" + model_path +
                      "'\nEXPECTED = '" + expected_path + "'\n" + kMakeModel);
  auto expected = testing::load_tensors(expected_path);

  try {
    torch::jit::load(model_path);
    FAIL() << "a scripted Mask R-CNN loaded without torchvision's operators";
  } catch (const std::exception& e) {  // torch::jit::ErrorReport
    EXPECT_THAT(e.what(), ::testing::HasSubstr("Unknown builtin op: torchvision::nms"));
  }

  PatchScope scope({"torchvision_ops"});
  torch::jit::Module model = torch::jit::load(model_path);
  model.eval();
  at::NoGradGuard no_grad;
  c10::List<at::Tensor> images;
  images.push_back(expected["image"]);
  auto output = model.forward({images}).toTuple();
  auto detections = output->elements()[1].toList().get(0).toGenericDict();
  auto get = [&](const char* key) { return detections.at(key).toTensor(); };

  ASSERT_EQ(get("boxes").sizes(), expected["boxes"].sizes());
  EXPECT_TRUE(get("labels").equal(expected["labels"]));
  for (const char* key : {"boxes", "scores", "masks"}) {
    EXPECT_TRUE(at::allclose(get(key), expected[key], 1e-4, 1e-4))
        << key << ": max abs diff " << (get(key) - expected[key]).abs().max().item<double>();
  }
}

}  // namespace
}  // namespace zoobench::patches
