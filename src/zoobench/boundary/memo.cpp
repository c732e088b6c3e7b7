// NarrowingMemo: narrowed copies reused while their source is alive and unmodified.
#include <c10/util/intrusive_ptr.h>

#include <mutex>
#include <unordered_map>

#include "zoobench/boundary/boundary.h"

namespace zoobench::boundary {
namespace {

struct Key {
  const c10::TensorImpl* source;
  at::ScalarType dtype;
  bool operator==(const Key& other) const { return source == other.source && dtype == other.dtype; }
};

struct KeyHash {
  size_t operator()(const Key& key) const {
    return std::hash<const void*>()(key.source) ^ (static_cast<size_t>(key.dtype) << 1);
  }
};

using WeakImpl = c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>;

// What identifies the source's state without looking at its values. The weak reference also
// keeps the TensorImpl's address from being reused by another tensor while the entry exists.
struct Entry {
  WeakImpl source;
  uint32_t source_version;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t storage_offset;
  const void* data;
  at::Tensor narrowed;
  std::optional<uint32_t> narrowed_version;  // nullopt: an inference tensor, no counter
};

uint32_t version_of(const at::Tensor& t) {
  return t.unsafeGetTensorImpl()->version_counter().current_version();
}

// The storage's allocation, read without materializing anything (Torch 2's copy-on-write
// storages copy on a mutable data_ptr() access).
const void* data_of(const at::Tensor& t) {
  const c10::Storage& storage = t.unsafeGetTensorImpl()->storage();
  return storage.data_ptr().get();
}

// Sources whose narrowed copy must not be reused: no version counter to notice in-place writes
// (inference tensors), or an autograd graph each call must build afresh (which would also keep
// the source alive through the graph's leaf).
bool cacheable(const at::Tensor& src) {
  return src.layout() == at::kStrided && !src.is_inference() && !src.requires_grad();
}

Entry make_entry(const at::Tensor& src, const at::Tensor& narrowed) {
  Entry entry{WeakImpl(src.getIntrusivePtr()),
              version_of(src),
              src.sizes().vec(),
              src.strides().vec(),
              src.storage_offset(),
              data_of(src),
              narrowed,
              std::nullopt};
  if (!narrowed.is_inference()) entry.narrowed_version = version_of(narrowed);
  return entry;
}

bool still_valid(const Entry& entry, const at::Tensor& src) {
  if (entry.source.expired()) return false;
  if (version_of(src) != entry.source_version) return false;
  // In-place metadata changes (transpose_, resize_, set_, as_strided_) bump no version.
  if (src.sizes() != c10::IntArrayRef(entry.sizes) ||
      src.strides() != c10::IntArrayRef(entry.strides) ||
      src.storage_offset() != entry.storage_offset || data_of(src) != entry.data) {
    return false;
  }
  // A callee that wrote into a copy it promised to only read.
  return !entry.narrowed_version || version_of(entry.narrowed) == *entry.narrowed_version;
}

}  // namespace

struct NarrowingMemo::Table {
  mutable std::mutex mutex;
  bool enabled = true;
  std::unordered_map<Key, Entry, KeyHash> entries;
  Stats stats;

  int64_t sweep_locked() {
    int64_t removed = 0;
    for (auto it = entries.begin(); it != entries.end();) {
      if (it->second.source.expired()) {
        it = entries.erase(it);
        ++removed;
      } else {
        ++it;
      }
    }
    stats.dropped += removed;
    return removed;
  }
};

NarrowingMemo::NarrowingMemo(bool enabled) : table_(std::make_unique<Table>()) {
  table_->enabled = enabled;
}

NarrowingMemo::~NarrowingMemo() = default;

at::Tensor NarrowingMemo::narrow(const at::Tensor& src, at::ScalarType dtype) {
  if (src.scalar_type() == dtype) return src;
  if (!cacheable(src)) {
    {
      std::lock_guard<std::mutex> lock(table_->mutex);
      ++table_->stats.uncacheable;
    }
    return to_dtype_preserving_layout(src, dtype);
  }
  const Key key{src.unsafeGetTensorImpl(), dtype};
  {
    std::lock_guard<std::mutex> lock(table_->mutex);
    if (table_->enabled) {
      auto it = table_->entries.find(key);
      if (it != table_->entries.end()) {
        if (still_valid(it->second, src)) {
          ++table_->stats.hits;
          return it->second.narrowed;
        }
        table_->entries.erase(it);
        ++table_->stats.dropped;
      }
    }
    ++table_->stats.misses;
  }
  // The cast runs unlocked: other threads' hits need not wait for it.
  at::Tensor narrowed = to_dtype_preserving_layout(src, dtype);
  std::lock_guard<std::mutex> lock(table_->mutex);
  if (table_->enabled) {
    table_->sweep_locked();
    table_->entries.insert_or_assign(key, make_entry(src, narrowed));
  }
  return narrowed;
}

void NarrowingMemo::set_enabled(bool enabled) {
  std::lock_guard<std::mutex> lock(table_->mutex);
  table_->enabled = enabled;
  if (!enabled) table_->entries.clear();
}

bool NarrowingMemo::enabled() const {
  std::lock_guard<std::mutex> lock(table_->mutex);
  return table_->enabled;
}

void NarrowingMemo::clear() {
  std::lock_guard<std::mutex> lock(table_->mutex);
  table_->entries.clear();
}

int64_t NarrowingMemo::sweep() {
  std::lock_guard<std::mutex> lock(table_->mutex);
  return table_->sweep_locked();
}

int64_t NarrowingMemo::size() const {
  std::lock_guard<std::mutex> lock(table_->mutex);
  return static_cast<int64_t>(table_->entries.size());
}

NarrowingMemo::Stats NarrowingMemo::stats() const {
  std::lock_guard<std::mutex> lock(table_->mutex);
  return table_->stats;
}

void NarrowingMemo::reset_stats() {
  std::lock_guard<std::mutex> lock(table_->mutex);
  table_->stats = Stats{};
}

}  // namespace zoobench::boundary
