// Whole-file reads and crash-safe writes.
#pragma once

#include <string>
#include <vector>

namespace zoobench {

// The file's bytes; throws std::runtime_error naming the file when it cannot be read.
std::string read_text_file(const std::string& path);
std::vector<char> read_binary_file(const std::string& path);

// Writes to `path + ".tmp"`, flushes, then renames over `path`: a reader (or a process killed
// mid-write) sees either the old file or the new one, never half of it.
void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace zoobench
