#include "results/grid.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/common/error.h"

namespace attnbench::results {

namespace {

std::string scalar_text(const nlohmann::json& v, const char* null_text) {
  if (v.is_null()) return null_text;
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());  // shortest round-trip
  return v.dump();
}

std::string render_text(const Grid& g) {
  std::vector<size_t> width(g.headers.size());
  for (size_t c = 0; c < g.headers.size(); ++c) width[c] = g.headers[c].size();
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : g.rows) {
    std::vector<std::string> line;
    for (size_t c = 0; c < row.size(); ++c) {
      line.push_back(scalar_text(row[c], "NULL"));
      width[c] = std::max(width[c], line.back().size());
    }
    cells.push_back(std::move(line));
  }
  auto emit = [&](const std::vector<std::string>& line) {
    std::string out;
    for (size_t c = 0; c < line.size(); ++c) {
      out += c + 1 < line.size() ? fmt::format("{:<{}}  ", line[c], width[c]) : line[c];
    }
    return out + "\n";
  };
  std::string out = emit(g.headers);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  out += emit(rule);
  for (const auto& line : cells) out += emit(line);
  return out;
}

std::string render_csv(const Grid& g) {
  std::string out;
  for (size_t c = 0; c < g.headers.size(); ++c) out += (c ? "," : "") + csv_field(g.headers[c]);
  out += "\n";
  for (const auto& row : g.rows) {
    for (size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + csv_field(scalar_text(row[c], ""));
    out += "\n";
  }
  return out;
}

std::string render_json(const Grid& g) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& row : g.rows) {
    nlohmann::json obj = nlohmann::json::object();
    for (size_t c = 0; c < row.size(); ++c) obj[g.headers[c]] = row[c];
    arr.push_back(std::move(obj));
  }
  return arr.dump(2) + "\n";
}

}  // namespace

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string render_grid(const Grid& grid, const std::string& format) {
  if (format == "table") return render_text(grid);
  if (format == "csv") return render_csv(grid);
  if (format == "json") return render_json(grid);
  throw UsageError("unknown format '" + format + "'" +
                   did_you_mean(format, {"table", "csv", "json"}) + "; valid: table, csv, json");
}

}  // namespace attnbench::results
