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

// Removes `path` and everything under it (symlinks are removed, not followed); a missing path
// is not an error. Returns false, with the reason in *error if given, when something stays.
// Use this, never std::filesystem::remove_all: PyTorch's pip wheels export their own statically
// linked copies of libstdc++'s std::filesystem directory iterators (pytorch/pytorch#133437),
// which interpose on the system's and crash remove_all on a non-empty folder (seen with
// PyTorch 2.11 on the GPU machine).
bool remove_tree(const std::string& path, std::string* error = nullptr);

}  // namespace zoobench
