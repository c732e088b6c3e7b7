// CSV tables as upstream's harness writes them (comma-separated, RFC 4180 quoting), read by
// header name so that files with extra trailing columns (ours) or fewer (upstream's) both work.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace zoobench {

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  // Index of a column, or -1.
  int column(const std::string& name) const;
  // The cell of `row` in column `name`; "" when the column or cell is absent.
  const std::string& get(std::size_t row, const std::string& name) const;
  // One row as column -> value.
  std::map<std::string, std::string> row_map(std::size_t row) const;
};

// Parses CSV text; throws std::runtime_error with the line number on unbalanced quotes.
CsvTable parse_csv(const std::string& text, const std::string& source_name = "<csv>");
CsvTable read_csv(const std::string& path);

std::string csv_escape(const std::string& cell);
std::string csv_line(const std::vector<std::string>& cells);

// Appends rows to a CSV file, writing the header first when the file is new or empty, and
// flushing after every row so a killed run loses nothing already written. An existing file
// whose header differs is an error (mixing two experiments in one file would corrupt both).
class CsvAppender {
 public:
  CsvAppender(std::string path, std::vector<std::string> header);
  ~CsvAppender();
  CsvAppender(const CsvAppender&) = delete;
  CsvAppender& operator=(const CsvAppender&) = delete;

  // Cells by column name; columns not given are left empty, unknown names are an error.
  void append(const std::map<std::string, std::string>& cells);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> header_;
  std::FILE* file_ = nullptr;
};

}  // namespace zoobench
