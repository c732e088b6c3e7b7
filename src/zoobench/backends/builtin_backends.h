// Factories of the backends zoobench ships (internal to backends/; the registry lists them).
#pragma once

#include <memory>

#include "zoobench/backends/backend.h"

namespace zoobench {

std::unique_ptr<Backend> make_eager_backend();
std::unique_ptr<Backend> make_jit_backend();
std::unique_ptr<Backend> make_cudagraphs_backend();
std::unique_ptr<Backend> make_aot_inductor_backend();

}  // namespace zoobench
