// The pickle subset that torch.save writes (protocol 2, plus the opcodes of protocols 3-5 that
// CPython's pickler may also emit), read into IValues and written back. Storage bytes live
// outside the pickle, in the zip's data/<key> records: callers resolve and write them.
// Internal to the serialization component; torch_save.h is its interface.
#pragma once

#include <ATen/core/ivalue.h>
#include <c10/core/Storage.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zoobench::serialization::detail {

// What a storage's persistent id says: ('storage', torch.<Type>Storage, key, location, numel).
struct PersistentStorage {
  std::string key;
  c10::ScalarType dtype = c10::ScalarType::Byte;  // element type; Byte for UntypedStorage
  bool untyped = false;                           // torch.UntypedStorage: numel counts bytes
  std::string location;                           // "cpu", "cuda:0", ...
  int64_t numel = 0;
};

// Returns the storage a persistent id names; called once per occurrence (callers cache by key
// so that views keep sharing their storage).
using StorageResolver = std::function<c10::Storage(const PersistentStorage&)>;

// Runs the pickle program `data`; `source` names the file in error messages.
c10::IValue unpickle(std::string_view data, const StorageResolver& resolve,
                     const std::string& source);

struct StorageRecord {
  std::string key;  // record name is "data/" + key
  c10::Storage storage;
  c10::ScalarType dtype;
};

// Pickles `value` as torch.save would; every distinct storage is appended to `storages` once.
std::string pickle(const c10::IValue& value, std::vector<StorageRecord>& storages);

// torch.<Name>Storage <-> element dtype ("FloatStorage" <-> Float).
std::optional<c10::ScalarType> dtype_of_storage_type(const std::string& name);
std::string storage_type_of_dtype(c10::ScalarType dtype);

// torch.<name> dtype attributes ("float32", "half", ...) <-> dtype; the writer uses canonical
// names.
std::optional<c10::ScalarType> dtype_of_python_name(const std::string& name);
std::string python_name_of_dtype(c10::ScalarType dtype);

}  // namespace zoobench::serialization::detail
