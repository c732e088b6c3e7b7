// CSV tables as upstream's harness writes them (comma-separated, RFC 4180 quoting), read by
// header name so that files with extra trailing columns (ours) or fewer (upstream's) both work.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
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

// One record of CSV text as it lies in the text, for checking a file line by line.
struct CsvRecord {
  std::vector<std::string> cells;
  std::size_t line = 0;             // the line it starts on (1-based)
  std::size_t begin = 0, end = 0;   // its bytes in the text, the newline included
  bool complete = false;            // ended by a newline outside quotes
  std::size_t open_quote_line = 0;  // the line of a quote the text ends inside (0: none)
};

// The records of CSV text (blank lines are none). Never throws: a text cut off mid-record ends
// with a record whose `complete` is false.
std::vector<CsvRecord> split_csv_records(const std::string& text);

// Parses CSV text; throws std::runtime_error with the line number on unbalanced quotes.
CsvTable parse_csv(const std::string& text, const std::string& source_name = "<csv>");
CsvTable read_csv(const std::string& path);

std::string csv_escape(const std::string& cell);
std::string csv_line(const std::vector<std::string>& cells);

// A result file could not be written (disk full, quota, I/O error). The file holds what it held
// before the failed write; the run must stop, since every later row would fail alike.
class ResultWriteError : public std::runtime_error {
 public:
  ResultWriteError(const std::string& path, int error_number);
};

// Appends rows to a CSV file, writing the header first when the file is new or empty, and
// syncing after every row so a killed run loses nothing already written. An existing file
// whose header differs is an error (mixing two experiments in one file would corrupt both), and
// so is one that ends mid-row (ResultSink sets such a row aside before appending).
class CsvAppender {
 public:
  CsvAppender(std::string path, std::vector<std::string> header);
  ~CsvAppender();
  CsvAppender(const CsvAppender&) = delete;
  CsvAppender& operator=(const CsvAppender&) = delete;

  // Cells by column name; columns not given are left empty, unknown names are an error. A
  // failed write throws ResultWriteError and leaves no part of the row in the file.
  void append(const std::map<std::string, std::string>& cells);
  // The file's size, and cutting it back to one: undoes the rows appended since.
  std::uintmax_t size() const { return size_; }
  void truncate_to(std::uintmax_t size);
  const std::string& path() const { return path_; }

 private:
  void write_whole(const std::string& bytes);

  std::string path_;
  std::vector<std::string> header_;
  int fd_ = -1;
  std::uintmax_t size_ = 0;
};

}  // namespace zoobench
