#include "zoobench/serialization/zip_directory.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>

namespace zoobench::serialization::detail {
namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50, kZip64EndLocator = 0x07064b50,
                   kZip64End = 0x06064b50, kDirectoryEntry = 0x02014b50;
constexpr std::size_t kEndRecordSize = 22, kMaxComment = 0xffff;

// Little-endian reads that fail, naming the file, past the end of what was read.
class Bytes {
 public:
  Bytes(std::string data, std::string path) : data_(std::move(data)), path_(std::move(path)) {}

  uint64_t le(std::size_t at, std::size_t width) const {
    if (at > data_.size() || width > data_.size() - at) broken("a field past its end");
    uint64_t value = 0;
    for (std::size_t i = 0; i < width; ++i)
      value |= static_cast<uint64_t>(static_cast<unsigned char>(data_[at + i])) << (8 * i);
    return value;
  }
  std::string text(std::size_t at, std::size_t size) const {
    if (at > data_.size() || size > data_.size() - at) broken("a name past its end");
    return data_.substr(at, size);
  }
  std::size_t size() const { return data_.size(); }
  [[noreturn]] void broken(const std::string& what) const {
    throw std::runtime_error(
        fmt::format("'{}' is not a readable torch.save archive: its zip directory has {}", path_, what));
  }

 private:
  std::string data_;
  std::string path_;
};

[[noreturn]] void points_past_its_end(const std::string& path) {
  throw std::runtime_error(fmt::format(
      "'{}' is not a readable torch.save archive: its zip directory points past its end", path));
}

// `size` bytes at `offset` of the archive, from a file or from memory.
class Archive {
 public:
  Archive(std::ifstream* file, uint64_t size, std::string path)
      : file_(file), size_(size), path_(std::move(path)) {}
  Archive(const std::string& bytes, std::string path)
      : bytes_(&bytes), size_(bytes.size()), path_(std::move(path)) {}

  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  std::string range(uint64_t offset, uint64_t size) const {
    if (offset > size_ || size > size_ - offset) points_past_its_end(path_);
    if (bytes_ != nullptr) return bytes_->substr(offset, size);
    std::string out(size, '\0');
    file_->clear();
    file_->seekg(static_cast<std::streamoff>(offset));
    file_->read(out.data(), static_cast<std::streamsize>(size));
    if (!*file_) points_past_its_end(path_);
    return out;
  }

 private:
  std::ifstream* file_ = nullptr;
  const std::string* bytes_ = nullptr;
  uint64_t size_;
  std::string path_;
};

struct Directory {
  uint64_t offset = 0, size = 0, entries = 0;
};

// The end-of-directory record is the last thing in a zip, before a comment of at most 64 KiB.
Directory find_directory(const Archive& in) {
  const uint64_t file_size = in.size();
  const std::string& path = in.path();
  const uint64_t tail_size = std::min<uint64_t>(file_size, kEndRecordSize + kMaxComment);
  const Bytes tail(in.range(file_size - tail_size, tail_size), path);
  for (std::size_t at = tail.size() >= kEndRecordSize ? tail.size() - kEndRecordSize + 1 : 0; at-- > 0;) {
    if (tail.le(at, 4) != kEndOfDirectory) continue;
    Directory d{tail.le(at + 16, 4), tail.le(at + 12, 4), tail.le(at + 10, 2)};
    if (d.offset != 0xffffffff && d.size != 0xffffffff && d.entries != 0xffff) return d;
    // zip64: a locator just before the record points at the zip64 end record.
    const uint64_t end_at = file_size - tail_size + at;
    if (end_at < 20) tail.broken("a zip64 marker without its locator");
    const Bytes locator(in.range(end_at - 20, 20), path);
    if (locator.le(0, 4) != kZip64EndLocator) tail.broken("a zip64 marker without its locator");
    const Bytes end64(in.range(locator.le(8, 8), 56), path);
    if (end64.le(0, 4) != kZip64End) tail.broken("a zip64 locator that points nowhere");
    return Directory{end64.le(48, 8), end64.le(40, 8), end64.le(32, 8)};
  }
  throw std::runtime_error(
      fmt::format("'{}' is not a readable torch.save archive: no zip directory at its end", path));
}

std::map<std::string, uint64_t> uncompressed_sizes(const Archive& in) {
  const Directory directory = find_directory(in);
  const std::string& path = in.path();
  const Bytes entries(in.range(directory.offset, directory.size), path);
  std::map<std::string, uint64_t> sizes;
  std::size_t at = 0;
  for (uint64_t i = 0; i < directory.entries; ++i) {
    if (entries.le(at, 4) != kDirectoryEntry) entries.broken("an entry without its signature");
    uint64_t uncompressed = entries.le(at + 24, 4);
    const std::size_t name_size = entries.le(at + 28, 2), extra_size = entries.le(at + 30, 2),
                      comment_size = entries.le(at + 32, 2);
    std::string name = entries.text(at + 46, name_size);
    // zip64: the 8-byte sizes are in the extra field 0x0001, uncompressed first.
    if (uncompressed == 0xffffffff) {
      bool found = false;
      for (std::size_t e = at + 46 + name_size; e + 4 <= at + 46 + name_size + extra_size;) {
        const uint64_t id = entries.le(e, 2), size = entries.le(e + 2, 2);
        if (id == 0x0001) {
          uncompressed = entries.le(e + 4, 8);
          found = true;
          break;
        }
        e += 4 + size;
      }
      if (!found) entries.broken("a zip64 size without its extra field");
    }
    // torch's reader names records below the archive's top folder.
    const auto slash = name.find('/');
    sizes[slash == std::string::npos ? name : name.substr(slash + 1)] = uncompressed;
    at += 46 + name_size + extra_size + comment_size;
  }
  return sizes;
}

}  // namespace

std::map<std::string, uint64_t> zip_uncompressed_sizes(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error(fmt::format("cannot open '{}'", path));
  const uint64_t file_size = static_cast<uint64_t>(in.tellg());
  return uncompressed_sizes(Archive(&in, file_size, path));
}

std::map<std::string, uint64_t> zip_uncompressed_sizes_of_bytes(const std::string& bytes,
                                                                const std::string& name) {
  return uncompressed_sizes(Archive(bytes, name));
}

}  // namespace zoobench::serialization::detail
