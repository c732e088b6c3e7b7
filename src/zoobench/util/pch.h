// Precompiled header: the expensive, stable headers most components include. Only
// <torch/script.h> (ATen + TorchScript), not <torch/torch.h>: the C++ frontend (nn, optim,
// data) doubles the PCH, and loading it costs more than the few files that need it save.
#pragma once
#include <torch/script.h>

#include <fmt/format.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
