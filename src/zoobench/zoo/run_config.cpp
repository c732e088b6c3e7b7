// Names and parsing for modes, precisions and devices.
#include "zoobench/zoo/run_config.h"

#include "zoobench/util/compat.h"
#include "zoobench/util/errors.h"

namespace zoobench {

std::string mode_name(Mode mode) { return mode == Mode::kTraining ? "training" : "inference"; }

std::string precision_name(Precision precision) {
  switch (precision) {
    case Precision::kFloat32: return "float32";
    case Precision::kFloat16: return "float16";
    case Precision::kBFloat16: return "bfloat16";
    case Precision::kAmp: return "amp";
  }
  return "float32";
}

c10::ScalarType parameter_dtype(Precision precision) {
  switch (precision) {
    case Precision::kFloat16: return c10::kHalf;
    case Precision::kBFloat16: return c10::kBFloat16;
    default: return c10::kFloat;
  }
}

c10::Device parse_device(const std::string& name) {
  c10::Device device(c10::kCPU);
  try {
    device = c10::Device(name);
  } catch (const std::exception&) {
    throw UsageError("unknown device '" + name + "': use cpu, cuda or cuda:N");
  }
  if (!device.is_cpu() && !device.is_cuda()) {
    throw UsageError("device '" + name + "' is not supported: use cpu, cuda or cuda:N");
  }
  if (device.is_cuda() && !compat::kHasCuda) {
    throw UsageError("device '" + name + "' needs a zoobench built against a CUDA LibTorch; this one (torch " +
                     compat::torch_version() + ") is CPU-only");
  }
  return device;
}

std::string device_name(const c10::Device& device) {
  if (device.is_cpu()) return "cpu";
  return device.has_index() ? "cuda:" + std::to_string(device.index()) : "cuda";
}

}  // namespace zoobench
