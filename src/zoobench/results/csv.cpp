// CSV parsing and crash-safe appending.
#include "zoobench/results/csv.h"

#include <filesystem>
#include <stdexcept>
#include <unistd.h>

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
  if (index < 0 || row >= rows.size() || static_cast<std::size_t>(index) >= rows[row].size()) return kEmpty;
  return rows[row][static_cast<std::size_t>(index)];
}

std::map<std::string, std::string> CsvTable::row_map(std::size_t row) const {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < header.size(); ++i) {
    out[header[i]] = i < rows[row].size() ? rows[row][i] : "";
  }
  return out;
}

CsvTable parse_csv(const std::string& text, const std::string& source_name) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string cell;
  bool in_quotes = false, cell_started = false;
  std::size_t line = 1, quote_line = 0;
  auto end_record = [&] {
    record.push_back(cell);
    cell.clear();
    // A blank line is not a record.
    if (!(record.size() == 1 && record[0].empty() && !cell_started)) records.push_back(record);
    record.clear();
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
        }
      } else {
        if (c == '\n') ++line;
        cell.push_back(c);
      }
    } else if (c == '"') {
      in_quotes = true;
      cell_started = true;
      quote_line = line;
    } else if (c == ',') {
      record.push_back(cell);
      cell.clear();
      cell_started = true;
    } else if (c == '\n') {
      end_record();
      ++line;
    } else if (c != '\r') {
      cell.push_back(c);
      cell_started = true;
    }
  }
  if (in_quotes) {
    throw std::runtime_error(source_name + ":" + std::to_string(quote_line) + ": unterminated quoted cell");
  }
  if (cell_started || !cell.empty() || !record.empty()) end_record();
  CsvTable table;
  if (records.empty()) return table;
  table.header = records.front();
  for (auto& name : table.header) name = trim(name);
  table.rows.assign(records.begin() + 1, records.end());
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

CsvAppender::CsvAppender(std::string path, std::vector<std::string> header)
    : path_(std::move(path)), header_(std::move(header)) {
  std::filesystem::path target(path_);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  bool has_content = std::filesystem::exists(target) && std::filesystem::file_size(target) > 0;
  if (has_content) {
    CsvTable existing = read_csv(path_);
    if (existing.header != header_) {
      throw std::runtime_error(path_ + " exists with different columns (" + join(existing.header, ",") +
                               "); write to another --output or move the old file away");
    }
  }
  file_ = std::fopen(path_.c_str(), "ab");
  if (file_ == nullptr) throw std::runtime_error("cannot open " + path_ + " for appending");
  if (!has_content) {
    std::string line = csv_line(header_);
    std::fwrite(line.data(), 1, line.size(), file_);
    std::fflush(file_);
  }
}

CsvAppender::~CsvAppender() {
  if (file_ != nullptr) std::fclose(file_);
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
  std::string line = csv_line(row);
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    throw std::runtime_error("cannot append to " + path_ + " (disk full?)");
  }
  ::fsync(fileno(file_));
}

}  // namespace zoobench
