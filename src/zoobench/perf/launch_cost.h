// What one small op costs the host on a device: a one-element tensor updated in place a few
// hundred times, synchronized at the end, per op. A launch-bound eager side (a Python loop of
// small kernels) is no faster than this, and virtual machines of one kind need not have the
// same cost. Each performance row keeps the cost measured at its timing, so that a slow eager
// side can be told from a slow machine (when the eager sides of the torchbench list's
// launch-bound models ran twice as slow, this cost had not changed: the cause was cuBLAS's
// workspace variable, util/compat.h).
#pragma once

#include <c10/core/Device.h>

namespace zoobench {

// Microseconds per op (median of five batches of `ops`), on `device`.
double op_launch_cost_us(const c10::Device& device, int ops = 200);

}  // namespace zoobench
