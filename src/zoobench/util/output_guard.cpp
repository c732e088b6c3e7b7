#include "zoobench/util/output_guard.h"

#include <sys/stat.h>

#include <filesystem>

#include "zoobench/util/errors.h"

namespace zoobench {
namespace {

bool same_file(const struct stat& a, const std::string& path) {
  struct stat b {};
  return ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The input and the twin a result file's reader opens beside it.
std::vector<std::string> with_twins(const std::string& input) {
  std::filesystem::path path(input);
  const std::string extension = path.extension().string();
  if (extension != ".csv" && extension != ".json") return {input};
  std::filesystem::path twin = path;
  twin.replace_extension(extension == ".csv" ? ".json" : ".csv");
  return {input, twin.string()};
}

}  // namespace

void refuse_output_over_inputs(const std::string& output, const std::vector<std::string>& inputs,
                               const std::string& flag) {
  if (output.empty() || output == "-") return;
  struct stat target {};
  if (::stat(output.c_str(), &target) != 0) return;  // not there yet: nothing to lose
  for (const auto& input : inputs) {
    for (const auto& path : with_twins(input)) {
      if (!same_file(target, path)) continue;
      throw UsageError(flag + " " + output + " is " +
                       (path == input ? "one of the inputs" : "the twin of input " + input) +
                       " (" + path + "): writing it would destroy what this command reads; "
                       "name another file");
    }
  }
}

}  // namespace zoobench
