// SHA-256 against Python's hashlib (an independent implementation) and the FIPS test vectors.
#include "zoobench/util/sha256.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing/testing.h"

namespace zoobench {
namespace {

TEST(Sha256, MatchesFipsVectors) {
  EXPECT_EQ(sha256_hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(sha256_hex(two_blocks.data(), two_blocks.size()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, FileMatchesPythonHashlibAcrossBlockBoundaries) {
  testing::ScratchDir dir;
  // Sizes around the 64-byte block and the 56-byte padding boundary, and a multi-chunk file.
  for (std::size_t size : {55u, 56u, 63u, 64u, 65u, 1000u, (1u << 20) + 17u}) {
    std::string path = dir.file("data" + std::to_string(size));
    {
      std::ofstream out(path, std::ios::binary);
      for (std::size_t i = 0; i < size; ++i) out.put(static_cast<char>((i * 131 + 7) % 251));
    }
    auto result = testing::run_python("import hashlib\nprint(hashlib.sha256(open('" + path +
                                      "','rb').read()).hexdigest())\n");
    EXPECT_EQ(sha256_file(path) + "\n", result.output) << "size " << size;
  }
}

TEST(Sha256, MissingFileNamesThePath) {
  try {
    sha256_file("/nonexistent/zoobench/artifact.pt");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/zoobench/artifact.pt"), std::string::npos);
  }
}

}  // namespace
}  // namespace zoobench
