// Where zoobench's parts are. An installed zoobench (`make install PREFIX=P`) is P/bin/zoobench
// with its parts beside it: P/lib/zoobench/libzoobench_python.so (the Python plugin) and
// P/share/zoobench/{suites,tools}; the prefix can move as a whole. A zoobench run from its build
// folder finds them in that build and its source tree. A copy of the binary elsewhere finds
// neither, and the error names the path it looked at, rather than silently using the parts of
// the clone it was built in. The environment overrides each part: ZOOBENCH_PYTHON_PLUGIN,
// ZOOBENCH_SUITES, ZOOBENCH_TOOLS_DIR.
#pragma once

#include <string>

namespace zoobench {

struct PartLocation {
  const char* environment;  // the variable that overrides it
  std::string installed;    // relative to the executable's folder ("../share/zoobench/suites")
  std::string in_build;     // the build's own path (a build-tree or source-tree path)
};

// The part's path: the environment's; else the installed one when it exists; else the build's,
// when `executable` is one of the build's own programs (zoobench in `build_dir`, or under its
// tests/, bench/ or fuzz/); else the installed one, which does not exist (the caller's error
// names it).
std::string locate_part(const PartLocation& part, const std::string& executable,
                        const std::string& build_dir);

// The same for this process (/proc/self/exe) and the build that compiled it.
std::string locate_part(const PartLocation& part);

}  // namespace zoobench
