// A plain grid of query results (headers + rows of JSON scalars) and its three renderings, shared
// by `results runs`, `results curves` and `results sql`.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnbench::results {

struct Grid {
  std::vector<std::string> headers;
  std::vector<std::vector<nlohmann::json>> rows;  // null, number or string
};

// format: "table" (aligned text, NULL for null), "csv" (RFC 4180, empty for null) or "json" (an
// array of objects keyed by header). UsageError for any other name.
std::string render_grid(const Grid& grid, const std::string& format);

// RFC 4180 quoting: fields with a comma, quote or line break are quoted, quotes doubled.
std::string csv_field(const std::string& s);

}  // namespace attnbench::results
