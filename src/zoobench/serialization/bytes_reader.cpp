#include "zoobench/serialization/bytes_reader.h"

#include <algorithm>
#include <cstring>

namespace zoobench::serialization {
namespace {

class BytesReadAdapter : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit BytesReadAdapter(const std::string& bytes) : bytes_(bytes) {}
  size_t size() const override { return bytes_.size(); }
  // Fewer bytes than asked past the end: the reader reports a truncated archive.
  size_t read(uint64_t pos, void* buf, size_t n, const char* /*what*/) const override {
    if (pos >= bytes_.size()) return 0;
    const size_t count = std::min<uint64_t>(n, bytes_.size() - pos);
    std::memcpy(buf, bytes_.data() + pos, count);
    return count;
  }

 private:
  const std::string& bytes_;
};

}  // namespace

std::shared_ptr<caffe2::serialize::ReadAdapterInterface> read_adapter_over(
    const std::string& bytes) {
  return std::make_shared<BytesReadAdapter>(bytes);
}

}  // namespace zoobench::serialization
