// The C++ side of torch_save_cases.py, shared by the serialization tests: running its
// functions with the reference python, and describe(), which prints an IValue one line per node
// exactly as the Python describe() prints what torch.load returns.
#pragma once

#include <ATen/core/ivalue.h>

#include <string>

namespace zoobench::serialization::torch_save_cases {

// tests/unit/serialization/torch_save_cases.py.
std::string cases_script();

// Runs torch_save_cases.<function>(<args>) with the reference python.
void run_cases_function(const std::string& function, const std::string& args);

// One line per node: type, value (floats as their bits, tensors with sizes, strides, offset,
// requires_grad, which storage they share and their bytes).
std::string describe(const c10::IValue& value);

}  // namespace zoobench::serialization::torch_save_cases
