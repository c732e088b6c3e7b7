// Whole-file reads and crash-safe writes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zoobench {

// What read_text_file reads at most unless told otherwise (results, logs).
inline constexpr std::uintmax_t kReadLimitBytes = std::uintmax_t{1} << 30;
// Files zoobench writes small (a manifest, a zoo's index.json): a 60 MB one is hostile, and
// every model process would parse it.
inline constexpr std::uintmax_t kSmallFileLimitBytes = std::uintmax_t{16} << 20;
// A model's artifact (TorchScript, inputs, an AOTInductor package), read whole to be hashed and
// loaded from the same bytes: the zoo's largest are a few GB; the cap keeps a hostile sparse
// file from claiming all of the host's memory.
inline constexpr std::uintmax_t kArtifactLimitBytes = std::uintmax_t{64} << 30;

// The file's bytes; throws std::runtime_error naming the file when it cannot be read, is not a
// regular file (a FIFO would block the run, /dev/zero never end) or holds more than
// `max_bytes`. Symbolic links are followed to what they name, which must be regular.
std::string read_text_file(const std::string& path, std::uintmax_t max_bytes = kReadLimitBytes);

// Writes to `path + ".tmp<pid>"`, syncs, then renames over `path`: a reader (or a process killed
// mid-write) sees either the old file or the new one, never half of it. On a failure (a full
// disk) the temporary file is removed and the error names `path`.
void write_file_atomically(const std::string& path, const std::string& contents);
// The same without the exception: 0, or the errno of the step that failed, `failed_path` then
// naming the file it is about (the temporary file when it could not be created, else `path`).
int try_write_file_atomically(const std::string& path, const std::string& contents,
                              std::string& failed_path);

// Writes all of `bytes` to `fd` (retrying short and interrupted writes); 0, or the errno of the
// failure.
int write_fully(int fd, const std::string& bytes);

// `bytes` written as `file_name` in a new folder only this user can enter (mkdtemp, mode 0700,
// under $TMPDIR or /tmp), removed with the object. For a loader that takes only a path
// (AOTInductor's package loader): it reads the bytes that were verified, where no one else can
// replace them. Throws std::runtime_error naming the file when it cannot be written.
class PrivateFileCopy {
 public:
  PrivateFileCopy(const std::string& bytes, const std::string& file_name);
  ~PrivateFileCopy();
  PrivateFileCopy(const PrivateFileCopy&) = delete;
  PrivateFileCopy& operator=(const PrivateFileCopy&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string folder_;
  std::string path_;
};

// Removes `path` and everything under it (symlinks are removed, not followed); a missing path
// is not an error. Returns false, with the reason in *error if given, when something stays.
// Use this, never std::filesystem::remove_all: PyTorch's pip wheels export their own statically
// linked copies of libstdc++'s std::filesystem directory iterators (pytorch/pytorch#133437),
// which interpose on the system's and crash remove_all on a non-empty folder (seen with
// PyTorch 2.11 on the GPU machine).
bool remove_tree(const std::string& path, std::string* error = nullptr);

}  // namespace zoobench
