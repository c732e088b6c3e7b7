// What the integration tests share: the zoobench binary and shell quoting, files, an
// independent CSV reader, and small zoos made by the exporter (make_zoo.py).
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "testing/testing.h"

namespace zoobench::integration {

namespace fs = std::filesystem;
namespace zt = zoobench::testing;
using ::testing::HasSubstr;

using Row = std::map<std::string, std::string>;
using Models = std::vector<std::pair<std::string, std::string>>;  // name, make_zoo.py kind

inline std::string quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string zoobench_command(const std::string& arguments) {
  return quote(ZOOBENCH_EXECUTABLE) + " " + arguments;
}

inline void write_text(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// RFC 4180 with a header row; an independent reader, not zoobench's own.
inline std::vector<Row> read_csv(const std::string& path) {
  const std::string text = read_text(path);
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string cell;
  bool quoted = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      record.push_back(cell);
      cell.clear();
      any = true;
    } else if (c == '\n') {
      record.push_back(cell);
      records.push_back(record);
      record.clear();
      cell.clear();
      any = false;
    } else if (c != '\r') {
      cell += c;
      any = true;
    }
  }
  if (any) {
    record.push_back(cell);
    records.push_back(record);
  }
  std::vector<Row> rows;
  for (std::size_t r = 1; r < records.size(); ++r) {
    Row row;
    for (std::size_t c = 0; c < records[0].size() && c < records[r].size(); ++c) {
      row[records[0][c]] = records[r][c];
    }
    rows.push_back(row);
  }
  return rows;
}

// The lines of `text` that contain `word`.
inline std::string lines_with(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.find(word) != std::string::npos) out += line + "\n";
  }
  return out;
}

inline std::map<std::string, int> count_names(const std::vector<Row>& rows) {
  std::map<std::string, int> counts;
  for (const auto& row : rows) ++counts[row.at("name")];
  return counts;
}

inline std::multiset<std::pair<std::string, std::string>> names_and_statuses(
    const std::vector<Row>& rows, const std::string& status_column = "accuracy") {
  std::multiset<std::pair<std::string, std::string>> out;
  for (const auto& row : rows) out.insert({row.at("name"), row.at(status_column)});
  return out;
}

// Adds `models` to <zoo>/<suite>/ with the exporter (tests/integration/make_zoo.py). The suites
// folder is made too: `zoobench run --suites-dir` refuses one that does not exist.
inline void make_zoo(const std::string& zoo, const std::string& suites_dir,
                     const std::string& suite, const Models& models) {
  fs::create_directories(suites_dir);
  std::string dict;
  for (const auto& [name, kind] : models) dict += "'" + name + "': '" + kind + "', ";
  zt::run_python("import sys\nsys.path.insert(0, '" ZOOBENCH_INTEGRATION_DIR
                 "')\nimport make_zoo\nmake_zoo.build('" +
                 zoo + "', '" + suites_dir + "', '" + suite + "', {" + dict + "})\n");
  for (const auto& [name, kind] : models) {
    ASSERT_TRUE(fs::exists(zoo + "/" + suite + "/" + name + "/manifest.json")) << name;
  }
}

// Whether `zoobench list --backends` says `backend` can run here (torch.compile's need a torch
// with it: not Debian's 1.13).
inline bool listed_as_available(const std::string& backend) {
  auto listing = zt::run_command(zoobench_command("list --backends"));
  EXPECT_EQ(listing.exit_code, 0) << listing.output;
  std::istringstream lines(listing.output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name, state;
    if (words >> name >> state && name == backend) return state == "available";
  }
  return false;
}

// A backend's result files of a CPU inference run (':' in a backend's name becomes '-').
inline std::string accuracy_csv(const std::string& out, const std::string& suite,
                                const std::string& backend = "jit") {
  return out + "/" + suite + "_" + backend + "_inference_float32_cpu_accuracy.csv";
}

inline std::string performance_csv(const std::string& out, const std::string& suite,
                                   const std::string& backend = "jit") {
  return out + "/" + suite + "_" + backend + "_inference_float32_cpu_performance.csv";
}

// The timed sections of a performance file's passing rows (its JSON twin's
// detail.timed_section: when each held the device alone), sorted by their start; a passing row
// without one is a test failure.
inline std::vector<std::pair<double, double>> timed_sections(const std::string& performance_csv) {
  fs::path json = performance_csv;
  json.replace_extension(".json");
  std::vector<std::pair<double, double>> out;
  const nlohmann::json results = nlohmann::json::parse(read_text(json.string()));
  for (const auto& record : results.at("records")) {
    if (record.at("cells").value("status", "") != "pass") continue;
    const auto& detail = record.at("detail");
    EXPECT_TRUE(detail.contains("timed_section")) << record.at("cells").dump();
    if (!detail.contains("timed_section")) continue;
    out.emplace_back(detail["timed_section"].at("from").get<double>(),
                     detail["timed_section"].at("to").get<double>());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// What a performance file's timed sections found beside them: for each passing row, the other
// model processes at work when the section began and those it paused (util/pipeline_pause.h),
// as "" when all is as it should be, else what is not: a paused process that is no other model's
// of the run, or one mid-work (checking, loading, timing) that was left running.
inline std::string pause_problems(const std::string& performance_csv,
                                  const std::vector<std::string>& models) {
  fs::path json = performance_csv;
  json.replace_extension(".json");
  std::string problems;
  const nlohmann::json results = nlohmann::json::parse(read_text(json.string()));
  for (const auto& record : results.at("records")) {
    const auto& section = record.at("detail").value("timed_section", nlohmann::json::object());
    const std::string model = record.at("cells").value("name", "");
    const auto paused = section.value("paused", std::vector<std::string>{});
    auto model_of = [&](const std::string& stem) {
      for (const auto& name : models)
        if (stem.rfind(name + ".", 0) == 0) return name;
      return std::string();
    };
    for (const auto& stem : paused) {
      const std::string other = model_of(stem);
      if (other.empty() || other == model) problems += model + " paused " + stem + "; ";
    }
    for (const auto& entry : section.value("beside", std::vector<std::string>{})) {
      const auto colon = entry.find(": ");
      const std::string stem = entry.substr(0, colon), phase = entry.substr(colon + 2);
      const bool mid_work = phase.rfind("accuracy:", 0) == 0 ||
                            phase.rfind("performance:", 0) == 0 || phase == "loading";
      if (mid_work && std::find(paused.begin(), paused.end(), stem) == paused.end())
        problems += model + " was timed beside " + entry + ", not paused; ";
    }
  }
  return problems;
}

// "" when no two of `sections` (sorted by start) overlap in time, else which two do.
inline std::string overlapping(const std::vector<std::pair<double, double>>& sections) {
  for (std::size_t i = 1; i < sections.size(); ++i) {
    if (sections[i].first < sections[i - 1].second) {
      return "a timed section from " + std::to_string(sections[i].first) +
             " began before the one from " + std::to_string(sections[i - 1].first) + " ended at " +
             std::to_string(sections[i - 1].second);
    }
  }
  return "";
}

}  // namespace zoobench::integration
