// The readers zoobench exposes to files people exchange, as fuzz targets: each writes a mutant
// where its reader looks for it and reads it. Reading may succeed or throw; anything else (a
// signal, a hang, memory beyond the limit) is what the fuzzer looks for.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "mutator.h"

namespace zoobench::fuzz {

struct Target {
  std::string name;           // also the corpus folder: fuzz/corpus/<name>
  std::string what;           // one line for --help and the summary
  std::string file_name;      // the mutant's name in the scratch folder (readers check suffixes)
  // Reads the file at `path` (in a scratch folder of its own); throws when it refuses it.
  std::function<void(const std::string& path)> read;
  // A mutant of `seed`; the default mutates the bytes. torch.save files mutate inside the zip.
  std::function<std::string(const std::string& seed, const std::vector<std::string>& corpus,
                            Mutator& mutator)>
      mutate;
  // What a clear refusal names: the file, or for text the command line hands over (a -k
  // pattern, --compile-options) the flag.
  std::string refusal_names = "";
  const std::string& named_in_refusals() const {
    return refusal_names.empty() ? file_name : refusal_names;
  }
};

const std::vector<Target>& all_targets();
const Target* find_target(const std::string& name);

}  // namespace zoobench::fuzz
