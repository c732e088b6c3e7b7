// Declaration and registration of torchvision's detection operators, and roi_align's autograd.
#include "zoobench/patches/torchvision_ops.h"

#include <torch/autograd.h>

#include "zoobench/util/compat.h"
#include "zoobench/util/log.h"

namespace zoobench::patches {
namespace {

// Exactly as torchvision declares them (csrc/ops/nms.cpp, roi_align.cpp); the size arguments
// are `int` in torchvision 0.14 and `SymInt` in current releases (see compat.h).
constexpr const char* kNmsSchema = "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor";
constexpr const char* kRoiAlignSchema =
    "roi_align(Tensor input, Tensor rois, float spatial_scale, " ZOOBENCH_SCHEMA_SYMINT
    " pooled_height, " ZOOBENCH_SCHEMA_SYMINT
    " pooled_width, int sampling_ratio, bool aligned) -> Tensor";
constexpr const char* kRoiAlignBackwardSchema =
    "_roi_align_backward(Tensor grad, Tensor rois, float spatial_scale, " ZOOBENCH_SCHEMA_SYMINT
    " pooled_height, " ZOOBENCH_SCHEMA_SYMINT " pooled_width, " ZOOBENCH_SCHEMA_SYMINT
    " batch_size, " ZOOBENCH_SCHEMA_SYMINT " channels, " ZOOBENCH_SCHEMA_SYMINT
    " height, " ZOOBENCH_SCHEMA_SYMINT " width, int sampling_ratio, bool aligned) -> Tensor";

using RoiAlignBackwardFn = at::Tensor(const at::Tensor&, const at::Tensor&, double, int64_t,
                                      int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool);
using RoiAlignFn = at::Tensor(const at::Tensor&, const at::Tensor&, double, int64_t, int64_t,
                              int64_t, bool);

// Looked up per call: the operator exists only while the patch is active, so a cached handle
// could outlive it.
c10::OperatorHandle find_op(const char* name) {
  auto op = c10::Dispatcher::singleton().findSchema({name, ""});
  TORCH_CHECK(op.has_value(), name, " is not registered: apply the torchvision_ops patch");
  return *op;
}

at::Tensor call_roi_align(const at::Tensor& input, const at::Tensor& rois, double spatial_scale,
                          int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio,
                          bool aligned) {
  return find_op("torchvision::roi_align")
      .typed<RoiAlignFn>()
      .call(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned);
}

at::Tensor call_roi_align_backward(const at::Tensor& grad, const at::Tensor& rois,
                                   double spatial_scale, int64_t pooled_height,
                                   int64_t pooled_width, int64_t batch_size, int64_t channels,
                                   int64_t height, int64_t width, int64_t sampling_ratio,
                                   bool aligned) {
  return find_op("torchvision::_roi_align_backward")
      .typed<RoiAlignBackwardFn>()
      .call(grad, rois, spatial_scale, pooled_height, pooled_width, batch_size, channels, height,
            width, sampling_ratio, aligned);
}

at::Tensor call_nms(const at::Tensor& dets, const at::Tensor& scores, double iou_threshold) {
  return find_op("torchvision::nms")
      .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double)>()
      .call(dets, scores, iou_threshold);
}

class RoiAlignFunction : public torch::autograd::Function<RoiAlignFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const at::Tensor& input, const at::Tensor& rois,
                                                double spatial_scale, int64_t pooled_height,
                                                int64_t pooled_width, int64_t sampling_ratio,
                                                bool aligned) {
    ctx->saved_data["spatial_scale"] = spatial_scale;
    ctx->saved_data["pooled_height"] = pooled_height;
    ctx->saved_data["pooled_width"] = pooled_width;
    ctx->saved_data["sampling_ratio"] = sampling_ratio;
    ctx->saved_data["aligned"] = aligned;
    ctx->saved_data["input_shape"] = input.sizes();
    ctx->save_for_backward({rois});
    at::AutoDispatchBelowADInplaceOrView guard;
    return {call_roi_align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                           aligned)};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_output) {
    const at::Tensor rois = ctx->get_saved_variables()[0];
    const auto shape = ctx->saved_data["input_shape"].toIntVector();
    at::Tensor grad_input = call_roi_align_backward(
        grad_output[0], rois, ctx->saved_data["spatial_scale"].toDouble(),
        ctx->saved_data["pooled_height"].toInt(), ctx->saved_data["pooled_width"].toInt(), shape[0],
        shape[1], shape[2], shape[3], ctx->saved_data["sampling_ratio"].toInt(),
        ctx->saved_data["aligned"].toBool());
    // No gradient for the boxes, as in torchvision.
    return {grad_input,   at::Tensor(), at::Tensor(), at::Tensor(),
            at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

class RoiAlignBackwardFunction : public torch::autograd::Function<RoiAlignBackwardFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const at::Tensor& grad, const at::Tensor& rois,
                                                double spatial_scale, int64_t pooled_height,
                                                int64_t pooled_width, int64_t batch_size,
                                                int64_t channels, int64_t height, int64_t width,
                                                int64_t sampling_ratio, bool aligned) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return {call_roi_align_backward(grad, rois, spatial_scale, pooled_height, pooled_width,
                                    batch_size, channels, height, width, sampling_ratio, aligned)};
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext*,
                                                 torch::autograd::variable_list) {
    TORCH_CHECK(false, "double backward of torchvision::roi_align is not supported");
  }
};

bool declared(const char* name) {
  return c10::Dispatcher::singleton().findSchema({name, ""}).has_value();
}

bool has_kernel(const char* name, c10::DispatchKey key) {
  auto op = c10::Dispatcher::singleton().findSchema({name, ""});
  return op.has_value() && op->hasKernelForDispatchKey(key);
}

}  // namespace

namespace torchvision_kernels {

at::Tensor roi_align_autograd(const at::Tensor& input, const at::Tensor& rois, double spatial_scale,
                              int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio,
                              bool aligned) {
  return RoiAlignFunction::apply(input, rois, spatial_scale, pooled_height, pooled_width,
                                 sampling_ratio, aligned)[0];
}

at::Tensor roi_align_backward_autograd(const at::Tensor& grad, const at::Tensor& rois,
                                       double spatial_scale, int64_t pooled_height,
                                       int64_t pooled_width, int64_t batch_size, int64_t channels,
                                       int64_t height, int64_t width, int64_t sampling_ratio,
                                       bool aligned) {
  return RoiAlignBackwardFunction::apply(grad, rois, spatial_scale, pooled_height, pooled_width,
                                         batch_size, channels, height, width, sampling_ratio,
                                         aligned)[0];
}

// Under autocast the detection ops run in float32 whatever the autocast dtype (features come
// in half while boxes stay float), as torchvision's own autocast kernels do; roi_align's result
// goes back to the input's dtype.
at::Tensor nms_autocast(const at::Tensor& dets, const at::Tensor& scores, double iou_threshold) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(
      c10::DispatchKeySet({c10::DispatchKey::AutocastCPU, c10::DispatchKey::AutocastCUDA}));
  return call_nms(dets.to(at::kFloat), scores.to(at::kFloat), iou_threshold);
}

at::Tensor roi_align_autocast(const at::Tensor& input, const at::Tensor& rois, double spatial_scale,
                              int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio,
                              bool aligned) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(
      c10::DispatchKeySet({c10::DispatchKey::AutocastCPU, c10::DispatchKey::AutocastCUDA}));
  return call_roi_align(input.to(at::kFloat), rois.to(at::kFloat), spatial_scale, pooled_height,
                        pooled_width, sampling_ratio, aligned)
      .to(input.scalar_type());
}

}  // namespace torchvision_kernels

Registrations register_torchvision_ops() {
  namespace k = torchvision_kernels;
  Registrations handles;
  const bool nms_declared = declared("torchvision::nms");
  const bool roi_declared = declared("torchvision::roi_align");
  const bool roi_backward_declared = declared("torchvision::_roi_align_backward");
  if (!nms_declared || !roi_declared || !roi_backward_declared) {
    // FRAGMENT, not DEF: torchvision itself declares its namespace in fragments, and a DEF
    // library would claim the whole namespace.
    auto lib = std::make_unique<torch::Library>(torch::Library::FRAGMENT, "torchvision",
                                                c10::nullopt, __FILE__, __LINE__);
    if (!nms_declared) lib->def(kNmsSchema);
    if (!roi_declared) lib->def(kRoiAlignSchema);
    if (!roi_backward_declared) lib->def(kRoiAlignBackwardSchema);
    handles.push_back(std::move(lib));
  }
  if (nms_declared || roi_declared || roi_backward_declared) {
    log::info(
        "torchvision's own operators are already registered in this process; patch "
        "torchvision_ops only adds kernels for dispatch keys that have none");
  }

  // A null kernel: nothing for that operator and key.
  auto add_kernels = [&](c10::DispatchKey key, auto nms, auto roi, auto roi_backward) {
    auto lib = std::make_unique<torch::Library>(torch::Library::IMPL, "torchvision", key, __FILE__,
                                                __LINE__);
    int added = 0;
    if (nms != nullptr && !has_kernel("torchvision::nms", key)) {
      lib->impl("nms", nms);
      ++added;
    }
    if (roi != nullptr && !has_kernel("torchvision::roi_align", key)) {
      lib->impl("roi_align", roi);
      ++added;
    }
    if (roi_backward != nullptr && !has_kernel("torchvision::_roi_align_backward", key)) {
      lib->impl("_roi_align_backward", roi_backward);
      ++added;
    }
    if (added > 0) handles.push_back(std::move(lib));
  };
  add_kernels(c10::DispatchKey::CPU, &k::nms_cpu, &k::roi_align_forward_cpu,
              &k::roi_align_backward_cpu);
#if ZOOBENCH_WITH_CUDA
  add_kernels(c10::DispatchKey::CUDA, &k::nms_cuda, &k::roi_align_forward_cuda,
              &k::roi_align_backward_cuda);
#endif
  // nms has no autograd kernel (its output is integer indices), as in torchvision.
  add_kernels(c10::DispatchKey::Autograd, static_cast<decltype(&k::nms_cpu)>(nullptr),
              &k::roi_align_autograd, &k::roi_align_backward_autograd);
  for (auto key : {c10::DispatchKey::AutocastCPU, c10::DispatchKey::AutocastCUDA}) {
    add_kernels(key, &k::nms_autocast, &k::roi_align_autocast,
                static_cast<decltype(&k::roi_align_backward_cpu)>(nullptr));
  }
  return handles;
}

}  // namespace zoobench::patches
