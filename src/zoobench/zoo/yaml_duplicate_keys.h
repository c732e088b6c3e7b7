// Duplicate keys in a suite yaml. YAML says a mapping's keys are unique, but readers differ on a
// file that repeats one: yaml-cpp (zoobench) reads the first, PyYAML (the exporter) the last, so
// the harness and the exporter would each follow a different line of one file. Both refuse it.
#pragma once

#include <string>

namespace zoobench {

// Throws UsageError `<path>:<line>:<col>: duplicate key 'K' ...` naming the key, where it is
// repeated and where it was first, for the first mapping of `text` (the yaml's first document)
// that repeats a key. Reads the parser's events, so aliases are not expanded (an alias bomb costs
// nothing here; SuiteConfig bounds its own walk).
void refuse_duplicate_yaml_keys(const std::string& text, const std::string& path);

}  // namespace zoobench
