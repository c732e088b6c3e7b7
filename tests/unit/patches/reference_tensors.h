// Moving tensors from the reference Python to the tests: Python stores named tensors as
// buffers of a scripted module (torch.jit.save), which LibTorch reads in every version without
// zoobench's own torch.save reader. Shared by the CPU and GPU tests of the patches.
#pragma once

#include <torch/script.h>

#include <map>
#include <string>

namespace zoobench::testing {

// Python prelude: save_tensors(path, {name: tensor}) writes a file load_tensors() reads.
inline const char* kSaveTensorsPython = R"PY(
import torch

class _TensorHolder(torch.nn.Module):
    def __init__(self, tensors):
        super().__init__()
        for name, value in tensors.items():
            self.register_buffer(name, value.detach().contiguous())

    def forward(self) -> int:
        return 0

def save_tensors(path, tensors):
    torch.jit.script(_TensorHolder(tensors)).save(path)
)PY";

inline std::map<std::string, at::Tensor> load_tensors(const std::string& path) {
  std::map<std::string, at::Tensor> out;
  torch::jit::Module holder = torch::jit::load(path);
  for (const auto& buffer : holder.named_buffers(/*recurse=*/false)) {
    out[buffer.name] = buffer.value;
  }
  return out;
}

}  // namespace zoobench::testing
