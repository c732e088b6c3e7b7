// The zip container of torch.save files: data.pkl plus one data/<key> record per storage.
#include "zoobench/serialization/torch_save.h"

#include <ATen/ATen.h>
#include <caffe2/serialize/inline_container.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <stdexcept>

#include "zoobench/serialization/bytes_reader.h"
#include "zoobench/serialization/pickle.h"
#include "zoobench/serialization/zip_directory.h"
#include "zoobench/util/errors.h"

namespace zoobench::serialization {
namespace {

// What a record may hold beyond what it is read for. torch.save writes a storage's bytes
// exactly and its pickle in kilobytes (megabytes for thousands of tensors); the bounds only
// keep a hostile file from making zoobench inflate gigabytes it will not use.
constexpr uint64_t kMaxPickleBytes = uint64_t{256} << 20;
constexpr uint64_t kRecordSlackBytes = uint64_t{64} << 10;

void check_zip_magic(const char* magic, const std::string& path) {
  if (std::memcmp(magic, "PK\x03\x04", 4) != 0) {
    throw std::runtime_error(fmt::format(
        "'{}' is not a torch.save zip file (files written with "
        "_use_new_zipfile_serialization=False, or not by torch.save at all, are not read): "
        "re-save it with a current torch.save",
        path));
  }
}

std::unique_ptr<caffe2::serialize::PyTorchStreamReader> open_archive(const std::string& path) {
  // A FIFO would block the open until a writer comes (forever), a device never end: only a
  // regular file (or a link to one) is an archive.
  struct stat status {};
  if (::stat(path.c_str(), &status) == 0 && !S_ISREG(status.st_mode)) {
    throw std::runtime_error(fmt::format(
        "'{}' is not a regular file (a FIFO, a device or a folder): name a file torch.save wrote",
        path));
  }
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) {
      throw std::runtime_error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
    }
    char magic[4] = {};
    probe.read(magic, 4);
    check_zip_magic(magic, path);
  }
  try {
    return std::make_unique<caffe2::serialize::PyTorchStreamReader>(path);
  } catch (...) {
    throw std::runtime_error(fmt::format("'{}' is not a readable torch.save archive: {}", path,
                                         first_line(current_exception_message())));
  }
}

c10::Device device_of_location(const std::string& location, const std::string& path) {
  try {
    return c10::Device(location);
  } catch (...) {
    throw std::runtime_error(fmt::format(
        "'{}' holds a storage saved on '{}', a device zoobench does not know", path, location));
  }
}

std::unique_ptr<caffe2::serialize::PyTorchStreamReader> open_archive_in_memory(
    const std::string& bytes, const std::string& path) {
  const char empty[4] = {};
  check_zip_magic(bytes.size() >= 4 ? bytes.data() : empty, path);
  try {
    return std::make_unique<caffe2::serialize::PyTorchStreamReader>(read_adapter_over(bytes));
  } catch (...) {
    throw std::runtime_error(fmt::format("'{}' is not a readable torch.save archive: {}", path,
                                         first_line(current_exception_message())));
  }
}

// Reads an opened archive; `read_declared_sizes` gives what its zip directory declares of each
// record, checked before a record is read: getRecord inflates a record whole, and a 2.6 MB file
// can declare 2.5 GB. `path` names the file in errors.
c10::IValue load_archive(
    caffe2::serialize::PyTorchStreamReader* archive,
    const std::function<std::map<std::string, uint64_t>()>& read_declared_sizes,
    const std::string& path, std::optional<c10::Device> map_location) {
  if (!archive->hasRecord("data.pkl")) {
    throw std::runtime_error(
        fmt::format("'{}' has no data.pkl record: not a torch.save file", path));
  }
  if (archive->hasRecord("constants.pkl")) {
    throw std::runtime_error(fmt::format(
        "'{}' is a TorchScript module (torch.jit.save), not data saved with torch.save", path));
  }
  const std::map<std::string, uint64_t> declared = read_declared_sizes();
  auto declared_size = [&](const std::string& record) {
    auto it = declared.find(record);
    return it == declared.end() ? uint64_t{0} : it->second;
  };
  if (declared_size("data.pkl") > kMaxPickleBytes) {
    throw std::runtime_error(fmt::format(
        "'{}': data.pkl declares {} bytes, more than the {} a pickle of tensors and containers "
        "needs: refusing to read it",
        path, declared_size("data.pkl"), kMaxPickleBytes));
  }
  auto [pickle_data, pickle_size] = archive->getRecord("data.pkl");

  std::map<std::string, std::pair<c10::Storage, c10::ScalarType>> loaded;
  detail::StorageResolver resolve = [&](const detail::PersistentStorage& request) {
    auto found = loaded.find(request.key);
    if (found != loaded.end()) {
      if (found->second.second != request.dtype) {
        throw std::runtime_error(
            fmt::format("'{}': storage {} is used with two dtypes, which torch.load rejects too",
                        path, request.key));
      }
      return found->second.first;
    }
    const std::string record = "data/" + request.key;
    if (!archive->hasRecord(record)) {
      throw std::runtime_error(fmt::format(
          "'{}' lacks the record {} that data.pkl refers to (truncated file?)", path, record));
    }
    const size_t expected = static_cast<size_t>(request.numel) *
                            (request.untyped ? 1 : c10::elementSize(request.dtype));
    if (declared_size(record) > expected + kRecordSlackBytes) {
      throw std::runtime_error(fmt::format(
          "'{}': record {} declares {} bytes, its storage needs {}: refusing to read it", path,
          record, declared_size(record), expected));
    }
    auto [bytes, size] = archive->getRecord(record);
    if (size < expected) {
      throw std::runtime_error(fmt::format("'{}': record {} has {} bytes, its storage needs {}",
                                           path, record, size, expected));
    }
    c10::Storage storage(c10::Storage::use_byte_size_t(), static_cast<int64_t>(size),
                         std::move(bytes), /*allocator=*/nullptr, /*resizable=*/false);
    c10::Device target = map_location ? *map_location : device_of_location(request.location, path);
    if (!target.is_cpu()) {
      if (target.is_cuda() && !at::hasCUDA()) {
        throw std::runtime_error(fmt::format(
            "'{}' holds tensors saved on {}, and this zoobench build has no CUDA: load it with a "
            "map_location of cpu",
            path, request.location));
      }
      // Move the whole storage once, so the views into it stay views of one storage.
      at::Tensor flat = at::empty({0}, at::TensorOptions().dtype(at::kByte))
                            .set_(storage, 0, {static_cast<int64_t>(size)}, {1});
      storage = flat.to(target).storage();
    }
    loaded.emplace(request.key, std::make_pair(storage, request.dtype));
    return storage;
  };

  std::string_view program(static_cast<const char*>(pickle_data.get()), pickle_size);
  return detail::unpickle(program, resolve, "'" + path + "'");
}

}  // namespace

c10::IValue load_torch_save(const std::string& path, std::optional<c10::Device> map_location) {
  auto archive = open_archive(path);
  return load_archive(
      archive.get(), [&] { return detail::zip_uncompressed_sizes(path); }, path, map_location);
}

c10::IValue load_torch_save_bytes(const std::string& bytes, const std::string& path,
                                  std::optional<c10::Device> map_location) {
  auto archive = open_archive_in_memory(bytes, path);
  return load_archive(
      archive.get(), [&] { return detail::zip_uncompressed_sizes_of_bytes(bytes, path); }, path,
      map_location);
}

void save_for_python(const c10::IValue& value, const std::string& path) {
  std::vector<detail::StorageRecord> storages;
  const std::string program = detail::pickle(value, storages);

  std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  const std::string temporary = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw std::runtime_error(
          fmt::format("cannot write '{}': {}", temporary, std::strerror(errno)));
    }
    caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t size) -> size_t {
      out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
      return out ? size : 0;
    });
    writer.writeRecord("data.pkl", program.data(), program.size());
    writer.writeRecord("byteorder", "little", 6);
    for (const auto& record : storages) {
      const size_t nbytes = record.storage.nbytes();
      if (record.storage.device().is_cpu()) {
        writer.writeRecord("data/" + record.key, record.storage.data_ptr().get(), nbytes);
      } else {
        at::Tensor bytes =
            at::empty({0}, at::TensorOptions().dtype(at::kByte).device(record.storage.device()))
                .set_(record.storage, 0, {static_cast<int64_t>(nbytes)}, {1})
                .cpu();
        writer.writeRecord("data/" + record.key, bytes.data_ptr(), nbytes);
      }
    }
    writer.writeEndOfFile();
    out.close();
    if (!out) {
      throw std::runtime_error(fmt::format("cannot write '{}' (disk full?)", temporary));
    }
  }
  std::filesystem::rename(temporary, target);
}

}  // namespace zoobench::serialization
