#include "zoobench/util/json_flag.h"

#include "zoobench/util/errors.h"
#include "zoobench/util/json_depth.h"

namespace zoobench {

nlohmann::json parse_json_object_flag(const std::string& flag, const std::string& text,
                                      int max_depth, const std::string& shape,
                                      const std::string& example) {
  nlohmann::json parsed;
  try {
    parsed =
        nlohmann::json::parse(text, json_depth_limit(max_depth, [&] {
                                throw UsageError(flag + " is nested deeper than " +
                                                 std::to_string(max_depth) + " levels; " + shape);
                              }));
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError(flag + " is not JSON: " + first_line(e.what()));
  }
  if (!parsed.is_object()) throw UsageError(flag + " must be a JSON object, " + example);
  return parsed;
}

}  // namespace zoobench
