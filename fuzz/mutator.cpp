#include "mutator.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace zoobench::fuzz {
namespace {

// Values at the edges of what readers check: signs, widths, powers of two.
constexpr uint64_t kInterestingIntegers[] = {
    0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff,
    0x7fffffffffffffffULL, 0x8000000000000000ULL, 0xffffffffffffffffULL, 1ULL << 40, 1ULL << 62};

// What a number in a text file may be replaced with: beyond ranges, not numbers at all.
const char* const kExtremeNumbers[] = {
    "-5",  "0",   "-1",  "1e309", "-1e309", "nan", "NaN", "inf", "1180591620717411303424",
    "9223372036854775808", "-9223372036854775809", "4294967296", "1.5", "0x10", "1e-400", "\"7\""};

}  // namespace

std::size_t Mutator::below(std::size_t bound) {
  return static_cast<std::size_t>(rng_() % std::max<std::size_t>(bound, 1));
}

std::string Mutator::mutate(const std::string& input, const std::vector<std::string>& corpus) {
  std::string data = input;
  const std::size_t rounds = 1 + below(4);
  for (std::size_t i = 0; i < rounds; ++i) mutate_once(data, corpus);
  return data;
}

void Mutator::mutate_once(std::string& data, const std::vector<std::string>& corpus) {
  if (data.empty()) {
    data.push_back(static_cast<char>(below(256)));
    return;
  }
  const std::size_t at = below(data.size());
  switch (below(9)) {
    case 0:  // flip a bit
      data[at] = static_cast<char>(data[at] ^ (1 << below(8)));
      break;
    case 1: {  // an interesting integer, 1, 2, 4 or 8 bytes little-endian
      const uint64_t value = kInterestingIntegers[below(std::size(kInterestingIntegers))];
      const std::size_t width = std::size_t{1} << below(4);
      for (std::size_t b = 0; b < width && at + b < data.size(); ++b)
        data[at + b] = static_cast<char>((value >> (8 * b)) & 0xff);
      break;
    }
    case 2: {  // insert random bytes
      std::string bytes(1 + below(16), '\0');
      for (char& c : bytes) c = static_cast<char>(below(256));
      data.insert(at, bytes);
      break;
    }
    case 3:  // delete a range
      data.erase(at, 1 + below(std::min<std::size_t>(64, data.size() - at)));
      break;
    case 4: {  // a chunk repeated: deep nesting, long runs, many records
      const std::string chunk = data.substr(at, 1 + below(32));
      std::string repeated;
      const std::size_t times = 2 + below(below(2) ? 50 : 5000);
      for (std::size_t t = 0; t < times; ++t) repeated += chunk;
      data.insert(at, repeated);
      break;
    }
    case 5: {  // splice a piece of another corpus file
      const std::string& other = corpus[below(corpus.size())];
      if (other.empty()) break;
      const std::size_t from = below(other.size());
      data.insert(at, other.substr(from, 1 + below(256)));
      break;
    }
    case 6:  // truncate
      data.resize(at);
      break;
    case 7: {  // a decimal number in text replaced by an extreme one
      std::size_t start = at;
      while (start < data.size() && !std::isdigit(static_cast<unsigned char>(data[start]))) ++start;
      if (start == data.size()) break;
      std::size_t end = start;
      while (end < data.size() && (std::isdigit(static_cast<unsigned char>(data[end])) ||
                                   data[end] == '.' || data[end] == 'e' || data[end] == '-'))
        ++end;
      data.replace(start, end - start, kExtremeNumbers[below(std::size(kExtremeNumbers))]);
      break;
    }
    default:  // overwrite a byte with anything
      data[at] = static_cast<char>(below(256));
      break;
  }
}

}  // namespace zoobench::fuzz
