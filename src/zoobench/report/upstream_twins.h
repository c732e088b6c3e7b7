// Result files and their upstream-format twins. `zoobench run --output-format upstream` writes,
// beside each of zoobench's result files, the same rows in upstream's columns under upstream's
// file name (results/upstream_format.h). A reader given the folder (or `results/*.csv`) gets
// both, and would count each model twice: report and merge read zoobench's own file, which has
// every column, and leave the twin out.
#pragma once

#include <string>
#include <vector>

#include "zoobench/results/result_files.h"

namespace zoobench::report {

struct TwinSelection {
  std::vector<ResultFile> files;  // the inputs in their order, less the twins left out
  // One line per twin left out (or per twin of which rows were kept: those of models that
  // zoobench's files lack), saying which file it is the twin of.
  std::vector<std::string> notes;
};

// A file is the twin of zoobench's files in its folder when its name is the one
// upstream_file_name() gives their rows and its rows are upstream's (no backend column, or an
// empty one: as upstream's file, or one merged from upstream's files). Its rows of models that
// those files have (same device and name) are left out; a twin left with no row is dropped.
// Files in other folders, and upstream files with no zoobench file beside them, are kept whole.
TwinSelection leave_out_upstream_twins(std::vector<ResultFile> files);

// load_result_file() of each path, then leave_out_upstream_twins(); each note goes to the log
// as `<command>: <note>`.
std::vector<ResultFile> load_results_without_twins(const std::vector<std::string>& paths,
                                                   const std::string& command);

}  // namespace zoobench::report
