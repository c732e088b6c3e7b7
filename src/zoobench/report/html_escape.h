// Text that goes into HTML or SVG markup: escaped, so a model name or an error message such as
// "expected <Tensor>" can never become markup or script.
#pragma once

#include <string>
#include <string_view>

namespace zoobench::report {

// Escapes & < > " ' for element content and quoted attribute values alike.
std::string escape_html(std::string_view text);

// A string usable inside a class name: letters, digits, '-' and '_' kept, anything else '_'.
std::string css_token(std::string_view text);

}  // namespace zoobench::report
