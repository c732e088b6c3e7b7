// What a zip's central directory declares about its records, read before any record is
// inflated: a file of a few megabytes can declare, and inflate to, gigabytes. Internal to the
// serialization component (torch_save.cpp checks every record against what it needs).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace zoobench::serialization::detail {

// Each record's uncompressed size by its name below the archive's top folder ("data.pkl",
// "data/0"), as torch's reader names them; zip64 sizes included. Throws std::runtime_error
// naming the file when the directory is not where or what a zip says it is.
std::map<std::string, uint64_t> zip_uncompressed_sizes(const std::string& path);
// The same of an archive in memory; `name` (its file) names it in errors.
std::map<std::string, uint64_t> zip_uncompressed_sizes_of_bytes(const std::string& bytes,
                                                                const std::string& name);

}  // namespace zoobench::serialization::detail
