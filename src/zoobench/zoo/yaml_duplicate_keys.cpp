#include "zoobench/zoo/yaml_duplicate_keys.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "zoobench/util/errors.h"

namespace zoobench {
namespace {

// Follows the nesting of mappings and sequences; in a mapping, events alternate key, value.
class DuplicateKeyFinder : public YAML::EventHandler {
 public:
  explicit DuplicateKeyFinder(std::string path) : path_(std::move(path)) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, std::nullopt); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, std::nullopt); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string& value) override {
    node(mark, value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(mark, std::nullopt);
    frames_.push_back(Frame{false});
  }
  void OnSequenceEnd() override { frames_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(mark, std::nullopt);
    frames_.push_back(Frame{true});
  }
  void OnMapEnd() override { frames_.pop_back(); }

 private:
  struct Frame {
    bool mapping = false;
    bool at_key = true;
    std::map<std::string, int> first_line;  // key -> the line it first appears on (1-based)
  };

  // A node starts: in a mapping, a key (checked when it is a scalar) or the value after one.
  void node(const YAML::Mark& mark, const std::optional<std::string>& scalar) {
    if (frames_.empty() || !frames_.back().mapping) return;
    Frame& frame = frames_.back();
    frame.at_key = !frame.at_key;
    if (frame.at_key || !scalar) return;  // it was a value, or a key that is not a scalar
    const auto [it, first] = frame.first_line.emplace(*scalar, mark.line + 1);
    if (first) return;
    throw UsageError(path_ + ":" + std::to_string(mark.line + 1) + ":" +
                     std::to_string(mark.column + 1) + ": duplicate key '" + *scalar +
                     "' (first on line " + std::to_string(it->second) +
                     "): readers differ on which one counts (zoobench took the first, the "
                     "exporter the last); keep one");
  }

  std::string path_;
  std::vector<Frame> frames_;
};

}  // namespace

void refuse_duplicate_yaml_keys(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DuplicateKeyFinder finder(path);
  parser.HandleNextDocument(finder);
}

}  // namespace zoobench
