// A JSON object given on the command line (--compile-options): parsed with a nesting limit,
// checked while parsing, so that a document nested thousands deep is refused before anything
// recurses over it (a recursive dump crashed zoobench at 60,000 levels).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace zoobench {

// The object `text` holds. Throws UsageError naming `flag`: not JSON; nested `max_depth`
// containers deep (`shape` says what is expected); not an object (`example` shows one).
nlohmann::json parse_json_object_flag(const std::string& flag, const std::string& text,
                                      int max_depth, const std::string& shape,
                                      const std::string& example);

}  // namespace zoobench
