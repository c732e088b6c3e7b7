// A zip reader's view of bytes already in memory: what torch::jit::load and torch's
// PyTorchStreamReader read a verified artifact through, so that the bytes loaded are the bytes
// whose sha256 was checked (opening the path again would read whatever replaced the file since).
#pragma once

#include <caffe2/serialize/read_adapter_interface.h>

#include <memory>
#include <string>

namespace zoobench::serialization {

// Reads from `bytes`, which must outlive the adapter and whatever reads through it.
std::shared_ptr<caffe2::serialize::ReadAdapterInterface> read_adapter_over(
    const std::string& bytes);

}  // namespace zoobench::serialization
