// Files written by Python's torch.save (the zip format of torch >= 1.6) read into IValues, and
// IValues written so that Python's torch.load reads them back.
//
// What a file may hold: tensors (every dense dtype, views that share storage keep their strides
// and their sharing, nn.Parameter), None, bool, int, float (-> double), complex, str, tuple,
// list, dict (str or int keys), OrderedDict (-> dict), torch.Size (-> tuple of ints),
// torch.device and torch dtypes (-> int ScalarType). Anything else is an error that names the
// Python global and the file.
#pragma once

#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>

#include <optional>
#include <string>

namespace zoobench::serialization {

// Reads `path` as torch.load would. Tensors land on `map_location` when given; otherwise on
// the device they were saved from (an error names the device when this build lacks it).
// Throws std::runtime_error naming the file and what is wrong with it.
c10::IValue load_torch_save(const std::string& path,
                            std::optional<c10::Device> map_location = std::nullopt);

// The same of a file's bytes already in memory (an artifact whose sha256 was checked on these
// bytes); `path` names the file in errors.
c10::IValue load_torch_save_bytes(const std::string& bytes, const std::string& path,
                                  std::optional<c10::Device> map_location = std::nullopt);

// Writes `value` (the kinds listed above; tensors on CPU or CUDA) to `path` so that
// torch.load(path) in Python (1.13 and 2.x, also with weights_only=True) returns the same
// structure; tuples stay tuples, storages shared between tensors stay shared. The file is
// replaced atomically.
void save_for_python(const c10::IValue& value, const std::string& path);

}  // namespace zoobench::serialization
