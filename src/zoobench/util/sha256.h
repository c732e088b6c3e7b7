// SHA-256 (FIPS 180-4, computed by OpenSSL's libcrypto) of bytes and of files: artifacts are
// verified before they are loaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace zoobench {

// Lower-case hex digest of `size` bytes at `data`.
std::string sha256_hex(const void* data, std::size_t size);

// Lower-case hex digest of a file's contents, read in chunks. Throws std::runtime_error
// naming the file when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace zoobench
