// A nesting limit for JSON documents, checked while parsing. nlohmann's parser is iterative,
// but its dump and zoobench's readers recurse: a document nested thousands deep would crash
// them, so it is refused before anything recurses.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <utility>

namespace zoobench {

// A parser callback that calls `refuse` (which throws) at the first object or array nested
// `max_depth` containers deep (the document's own container is at depth 0).
inline nlohmann::json::parser_callback_t json_depth_limit(int max_depth,
                                                          std::function<void()> refuse) {
  return [max_depth, refuse = std::move(refuse)](int depth, nlohmann::json::parse_event_t event,
                                                 nlohmann::json&) {
    const bool opens = event == nlohmann::json::parse_event_t::object_start ||
                       event == nlohmann::json::parse_event_t::array_start;
    if (opens && depth >= max_depth) refuse();
    return true;
  };
}

}  // namespace zoobench
