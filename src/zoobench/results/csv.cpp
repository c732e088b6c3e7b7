// CSV parsing and crash-safe appending: a row is in the file whole or not at all.
#include "zoobench/results/csv.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "zoobench/util/files.h"
#include "zoobench/util/text.h"

namespace zoobench {

int CsvTable::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

const std::string& CsvTable::get(std::size_t row, const std::string& name) const {
  static const std::string kEmpty;
  int index = column(name);
  if (index < 0 || row >= rows.size() || static_cast<std::size_t>(index) >= rows[row].size())
    return kEmpty;
  return rows[row][static_cast<std::size_t>(index)];
}

std::map<std::string, std::string> CsvTable::row_map(std::size_t row) const {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < header.size(); ++i) {
    out[header[i]] = i < rows[row].size() ? rows[row][i] : "";
  }
  return out;
}

std::vector<CsvRecord> split_csv_records(const std::string& text) {
  std::vector<CsvRecord> records;
  CsvRecord record;
  std::string cell;
  bool in_quotes = false, cell_started = false;
  std::size_t line = 1;
  record.line = 1;
  auto end_record = [&](std::size_t end, bool complete) {
    record.cells.push_back(cell);
    cell.clear();
    record.end = end;
    record.complete = complete;
    // A blank line is not a record.
    bool blank = record.cells.size() == 1 && record.cells[0].empty() && !cell_started;
    if (!blank) records.push_back(std::move(record));
    record = CsvRecord{};
    record.begin = end;
    record.line = line + (complete ? 1 : 0);
    cell_started = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          cell.push_back('"');
          ++i;
        } else {
          in_quotes = false;
          record.open_quote_line = 0;
        }
      } else {
        if (c == '\n') ++line;
        cell.push_back(c);
      }
    } else if (c == '"') {
      in_quotes = true;
      cell_started = true;
      record.open_quote_line = line;
    } else if (c == ',') {
      record.cells.push_back(cell);
      cell.clear();
      cell_started = true;
    } else if (c == '\n') {
      end_record(i + 1, true);
      ++line;
    } else if (c != '\r') {
      cell.push_back(c);
      cell_started = true;
    }
  }
  if (cell_started || !cell.empty() || !record.cells.empty()) end_record(text.size(), false);
  return records;
}

CsvTable parse_csv(const std::string& text, const std::string& source_name) {
  // A spreadsheet's "CSV UTF-8" starts with a byte-order mark, which would become part of the
  // first column's name (`dev` then read as missing).
  static const std::string kByteOrderMark = "\xEF\xBB\xBF";
  std::vector<CsvRecord> records = split_csv_records(
      text.compare(0, kByteOrderMark.size(), kByteOrderMark) == 0 ? text.substr(kByteOrderMark.size())
                                                                   : text);
  if (!records.empty() && records.back().open_quote_line != 0) {
    throw std::runtime_error(source_name + ":" + std::to_string(records.back().open_quote_line) +
                             ": unterminated quoted cell");
  }
  CsvTable table;
  if (records.empty()) return table;
  table.header = records.front().cells;
  for (auto& name : table.header) name = trim(name);
  for (std::size_t i = 1; i < records.size(); ++i)
    table.rows.push_back(std::move(records[i].cells));
  return table;
}

CsvTable read_csv(const std::string& path) { return parse_csv(read_text_file(path), path); }

std::string csv_escape(const std::string& cell) {
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i) out += ',';
    out += csv_escape(cells[i]);
  }
  return out + "\n";
}

ResultWriteError::ResultWriteError(const std::string& path, int error_number)
    : std::runtime_error("cannot write " + path + ": " + std::strerror(error_number)) {}

CsvAppender::CsvAppender(std::string path, std::vector<std::string> header)
    : path_(std::move(path)), header_(std::move(header)) {
  std::filesystem::path target(path_);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw ResultWriteError(path_, errno);
  struct stat info {};
  if (::fstat(fd_, &info) != 0) throw ResultWriteError(path_, errno);
  size_ = static_cast<std::uintmax_t>(info.st_size);
  if (size_ == 0) {
    write_whole(csv_line(header_));
    return;
  }
  const std::string text = read_text_file(path_);
  CsvTable existing = parse_csv(text, path_);
  if (existing.header != header_) {
    throw std::runtime_error(path_ + " exists with different columns (" +
                             join(existing.header, ",") +
                             "); write to another --output or move the old file away");
  }
  // The next row would be glued onto the cut-off one: a row with the wrong number of fields.
  if (text.back() != '\n') {
    throw std::logic_error(path_ + " ends mid-row; ResultSink sets such a row aside first");
  }
}

CsvAppender::~CsvAppender() {
  if (fd_ >= 0) ::close(fd_);
}

void CsvAppender::append(const std::map<std::string, std::string>& cells) {
  std::vector<std::string> row(header_.size());
  std::size_t used = 0;
  for (std::size_t i = 0; i < header_.size(); ++i) {
    auto it = cells.find(header_[i]);
    if (it != cells.end()) {
      row[i] = it->second;
      ++used;
    }
  }
  if (used != cells.size()) {
    for (const auto& [name, value] : cells) {
      bool known = false;
      for (const auto& column : header_) known = known || column == name;
      if (!known) throw std::logic_error("column '" + name + "' is not in " + path_ + "'s header");
    }
  }
  write_whole(csv_line(row));
}

// Raw write(2) rather than stdio: a FILE that failed to flush keeps the rest of the row in its
// buffer and writes it at fclose, after the file was cut back.
void CsvAppender::write_whole(const std::string& bytes) {
  int error = write_fully(fd_, bytes);
  // EINVAL: a file that cannot be synced (a pipe, a character device); nothing was lost.
  if (error == 0 && ::fsync(fd_) != 0 && errno != EINVAL) error = errno;
  if (error != 0) {
    truncate_to(size_);
    throw ResultWriteError(path_, error);
  }
  size_ += bytes.size();
}

void CsvAppender::truncate_to(std::uintmax_t size) {
  // Shrinking needs no space, so this succeeds on a full disk too.
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) throw ResultWriteError(path_, errno);
  size_ = size;
}

}  // namespace zoobench
