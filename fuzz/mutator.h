// Seeded mutations of a reader's input: the same seed gives the same mutants, so a run's
// failures can be regenerated from its command line. Byte-level changes (flips, interesting
// values, inserts, deletes, a chunk repeated many times to build deep nesting, a splice from
// another corpus file, truncation) and, for text formats, numbers replaced by extreme ones.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace zoobench::fuzz {

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  // One to four stacked mutations of `input`; `corpus` supplies splice material.
  std::string mutate(const std::string& input, const std::vector<std::string>& corpus);

  // A number in [0, bound) (bound > 0).
  std::size_t below(std::size_t bound);

 private:
  void mutate_once(std::string& data, const std::vector<std::string>& corpus);

  std::mt19937_64 rng_;
};

}  // namespace zoobench::fuzz
