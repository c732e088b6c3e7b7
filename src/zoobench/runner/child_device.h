// The device a suite worker's child process is told to use, and the environment that makes it
// so. A CUDA device is pinned: the child sees only that GPU, through CUDA_VISIBLE_DEVICES, and
// addresses it as cuda:0. TorchScript files traced on a GPU keep that GPU's index in their
// constants (transformers' attention masks call torch.arange(..., device="cuda:0")), so a model
// loaded onto cuda:1 in the same process mixes two devices and fails; pinned, it runs wherever
// the worker's GPU is. Rows still name the device the user asked for.
#pragma once

#include <string>
#include <vector>

namespace zoobench {

struct ChildDevice {
  std::string device;                    // what the child is told (--devices)
  std::vector<std::string> environment;  // NAME=value assignments for the child
  bool pinned() const { return !environment.empty(); }
};

// `device` as given to --devices ("cpu", "cuda", "cuda:1"); `cuda_visible_devices` is the
// parent's CUDA_VISIBLE_DEVICES (nullptr when unset): cuda:K then means its K-th entry, which
// may be an index, a GPU UUID or a MIG name. Only "cuda:K" is pinned. Throws UsageError when
// K is beyond the GPUs that CUDA_VISIBLE_DEVICES lists.
ChildDevice child_device_for(const std::string& device, const char* cuda_visible_devices);

// The GPU "cuda:K" is, as CUDA_VISIBLE_DEVICES names it (its K-th entry), or "K" when that
// variable is unset or empty. The same UsageError as child_device_for beyond the list.
std::string visible_gpu(const std::string& device, const char* cuda_visible_devices);

// Refuses (UsageError, before any model starts) a --devices list that names a device this
// machine does not have or one device twice:
// - `cpu:N` with N > 0: torch has one CPU device; particular CPUs are --cpu-affinity's job.
// - `cuda:N` beyond the GPUs there are (`cuda_device_count`, or CUDA_VISIBLE_DEVICES' list).
// - a GPU twice (`cuda,cuda:0` too): two workers would time each other's kernels.
// - the CPU twice without --cpu-affinity (`cpu_affinity_given`): each worker's timings would
//   include the other's work. With --cpu-affinity each worker gets its own share of the CPUs
//   (worker_cpu_share refuses too few), which is what `--devices cpu,cpu` is for.
void check_device_list(const std::vector<std::string>& devices, bool cpu_affinity_given,
                       const char* cuda_visible_devices, int cuda_device_count);

}  // namespace zoobench
