// Where each device's gate (util/device_gate.h) is kept.
//
// A GPU's gate belongs to the machine, not to the run: its files are in one folder shared by
// every zoobench run on the machine (ZOOBENCH_DEVICE_GATE_DIR, else
// /tmp/zoobench-device-gates), named after the GPU as CUDA_VISIBLE_DEVICES names it. So a timed
// section has the GPU alone against the models of another zoobench command on the same GPU too:
// a list's inference beside its training, or two users' runs on one machine, would otherwise
// time each other's kernels. A GPU named two ways (its index in one run, its UUID in another)
// has two gates.
//
// The CPU's gate stays the run's (beside its results): CPU timings are kept apart by pinning
// each pipeline to CPUs of its own (--cpu-affinity), and a machine-wide CPU gate would make
// unrelated runs on a CPU machine (a test suite's, say) wait for each other.
#pragma once

#include <string>

namespace zoobench {

// The gate's lock file for `device` ("cpu", "cuda", "cuda:K") of a run writing into
// `run_folder`; `cuda_visible_devices` is the run's CUDA_VISIBLE_DEVICES (nullptr when unset).
// For a GPU, creates the machine's gate folder if it is missing (UsageError, saying what to do,
// when it cannot).
std::string device_gate_path(const std::string& device, const std::string& run_folder,
                             const char* cuda_visible_devices);

}  // namespace zoobench
