// An output that would be written over one of the command's inputs is refused before anything is
// written: `report R.csv --markdown R.csv` would otherwise replace the results with the report.
#pragma once

#include <string>
#include <vector>

namespace zoobench {

// Throws UsageError naming `flag` when `output` is the same file (device and inode, so links and
// other spellings count) as one of `inputs`, or as the JSON/CSV twin beside an input (a result
// file's detail is read from it). An output that does not exist yet is no input; "-" (standard
// output) is never a file.
void refuse_output_over_inputs(const std::string& output, const std::vector<std::string>& inputs,
                               const std::string& flag);

}  // namespace zoobench
