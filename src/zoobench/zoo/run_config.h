// The vocabulary of what a run is asked to do: mode, precision, device. Shared by the zoo,
// the backends and the experiments.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <optional>
#include <string>

namespace zoobench {

enum class Mode { kInference, kTraining };
enum class Precision { kFloat32, kFloat16, kBFloat16, kAmp };

std::string mode_name(Mode mode);  // "inference" / "training"
std::string precision_name(Precision precision);  // "float32", "float16", "bfloat16", "amp"

// The dtype a model's parameters and float inputs are cast to (amp keeps float32 and autocasts).
c10::ScalarType parameter_dtype(Precision precision);

// "cpu", "cuda", "cuda:1" -> c10::Device; throws UsageError with a hint when unknown or
// when CUDA is asked for in a build without it.
c10::Device parse_device(const std::string& name);
std::string device_name(const c10::Device& device);  // "cpu", "cuda", "cuda:1" (index only if set)

}  // namespace zoobench
