#include "evals/tasks/task_data.h"

#include <algorithm>
#include <sstream>

#include "core/common/regular_file.h"

namespace attnbench::evals {

namespace fs = std::filesystem;

namespace {
std::string how_to_get(const fs::path& data_root) {
  return "  (data root = --data-dir, else $ATTNBENCH_DATA, else ./data; see docs/tasks.md)\n"
         "  get it with: attnbench data fetch --out " +
         data_root.string();
}
}  // namespace

LocatedFile locate(const fs::path& data_root, const TaskFiles& files) {
  const fs::path dir = data_root / files.folder;
  if (fs::exists(dir / files.official)) return {dir / files.official, true};
  for (const auto& h : files.hub) {
    if (fs::exists(dir / h)) return {dir / h, false};
  }
  std::string msg = "missing data file " + (dir / files.official).string() +
                    "\n  expected layout: <data root>/" + files.folder + "/" + files.official + " (" +
                    files.official_layout + ")";
  for (const auto& h : files.hub) {
    msg += "\n  or the Hugging Face hub export <data root>/" + files.folder + "/" + h + " (" +
           files.hub_layout + ")";
  }
  throw UsageError(msg + "\n" + how_to_get(data_root));
}

fs::path require_file(const fs::path& data_root, const std::string& folder,
                      const std::string& relative, const std::string& layout) {
  const fs::path p = data_root / folder / relative;
  if (!fs::exists(p)) {
    throw UsageError("missing data file " + p.string() + "\n  expected layout: <data root>/" +
                     folder + "/" + relative + " (" + layout + ")\n" + how_to_get(data_root));
  }
  return p;
}

// Every task file is opened without blocking and must be a regular file (a FIFO would hang).
std::string read_text(const fs::path& file) { return read_regular_file(file, "task file"); }

namespace {
std::vector<JsonRow> parse_jsonl(const fs::path& file, const std::string& text) {
  std::istringstream in(text);
  std::vector<JsonRow> rows;
  std::string line;
  int line_no = 0, first_empty = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF exports
    if (line.find_first_not_of(" \t") == std::string::npos) {
      if (first_empty == 0) first_empty = line_no;
      continue;
    }
    if (first_empty != 0) {
      throw InputError({file.string(), first_empty},
                       "empty line inside a JSONL file (one JSON object per line expected)");
    }
    JsonRow row;
    row.where = {file.string(), line_no};
    try {
      row.value = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError({file.string(), line_no, static_cast<int>(e.byte)},
                       std::string("malformed JSON: ") + e.what());
    } catch (const nlohmann::json::exception& e) {  // a number too large for a double: no position
      throw InputError(row.where, std::string("malformed JSON: ") + e.what());
    }
    if (!row.value.is_object()) throw InputError(row.where, "expected a JSON object per line");
    rows.push_back(std::move(row));
  }
  return rows;
}

// One JSON array of objects (SciQ's release); InputError at the line of a malformed byte, or at the
// element that is not an object (an array has no line per row: the element's index names it).
std::vector<JsonRow> read_json_array(const fs::path& file, const std::string& text) {
  nlohmann::json all;
  try {
    all = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    size_t upto = std::min(text.size(), static_cast<size_t>(e.byte));
    int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + upto, '\n'));
    throw InputError({file.string(), line}, std::string("malformed JSON: ") + e.what());
  } catch (const nlohmann::json::exception& e) {  // a number too large for a double: no position
    throw InputError({file.string()}, std::string("malformed JSON: ") + e.what());
  }
  if (!all.is_array()) throw InputError({file.string()}, "expected one JSON array of objects");
  std::vector<JsonRow> rows;
  for (size_t i = 0; i < all.size(); ++i) {
    JsonRow row{std::move(all[i]), {file.string() + " [element " + std::to_string(i) + "]"}};
    if (!row.value.is_object()) throw InputError(row.where, "expected a JSON object");
    rows.push_back(std::move(row));
  }
  return rows;
}

// "true"/"True"/true -> 1, "false"/"False"/false -> 0; 0 and 1 stay (the hub's spelling).
void boolean_to_int(JsonRow& row, const std::string& name) {
  nlohmann::json& v = row.value[name];
  if (v.is_boolean()) {
    v = v.get<bool>() ? 1 : 0;
  } else if (v.is_string() && (v == "true" || v == "True" || v == "false" || v == "False")) {
    v = (v == "true" || v == "True") ? 1 : 0;
  } else if (!(v.is_number_integer() && (v == 0 || v == 1))) {
    throw InputError(row.where, "field '" + name + "' must be \"true\"/\"false\", true/false or 0/1");
  }
}

}  // namespace

std::vector<JsonRow> read_jsonl(const fs::path& file) { return parse_jsonl(file, read_text(file)); }

std::vector<JsonRow> read_rows(const fs::path& data_root, const TaskFiles& files) {
  const fs::path path = locate(data_root, files).path;
  const std::string text = read_text(path);
  const size_t first = text.find_first_not_of(" \t\r\n");
  const char lead = first == std::string::npos ? '{' : text[first];  // an empty file: no rows
  std::vector<JsonRow> rows;
  if (lead == '{' || lead == '[') {
    rows = lead == '{' ? parse_jsonl(path, text) : read_json_array(path, text);
    if (files.process_docs != nullptr) {
      for (JsonRow& row : rows) files.process_docs(row);
    }
  } else if (files.official_text != nullptr) {
    rows = files.official_text(path);
  } else {
    throw InputError({path.string(), 1}, "expected JSONL, one JSON object per line (" +
                                             files.hub_layout + ")");
  }
  for (JsonRow& row : rows) {
    for (const std::string& name : files.boolean_fields) {
      if (!has_field(row, name.c_str())) throw InputError(row.where, "missing field '" + name + "'");
      boolean_to_int(row, name);
    }
  }
  return rows;
}

std::vector<int> read_labels(const fs::path& file, size_t expected) {
  std::istringstream in(read_text(file));
  std::vector<int> labels;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() && in.peek() == EOF) break;
    size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(line, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != line.size()) {
      throw InputError({file.string(), line_no}, "expected one integer label per line, got '" + line + "'");
    }
    labels.push_back(v);
  }
  if (labels.size() != expected) {
    throw InputError({file.string()}, "holds " + std::to_string(labels.size()) +
                                          " labels but the questions file has " +
                                          std::to_string(expected) + " rows (one label per row)");
  }
  return labels;
}

std::vector<JsonRow> read_labelled_rows(const fs::path& data_root, const TaskFiles& files,
                                        const LabelsFile& labels) {
  std::vector<JsonRow> rows = read_rows(data_root, files);
  if (rows.empty()) return rows;
  const bool official = labels.official_field.empty() ? !has_field(rows[0], labels.field.c_str())
                                                      : has_field(rows[0], labels.official_field.c_str());
  if (!official) return rows;
  const std::vector<int> gold =
      read_labels(require_file(data_root, files.folder, labels.file, labels.layout), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    JsonRow& row = rows[i];
    if (has_field(row, labels.field.c_str()) && int_field(row, labels.field.c_str()) != gold[i]) {
      throw InputError(row.where, "\"" + labels.field + "\" disagrees with line " + std::to_string(i + 1) +
                                      " of " + labels.file);
    }
    row.value[labels.field] = gold[i];
  }
  return rows;
}

bool has_field(const JsonRow& row, const char* name) { return row.value.contains(name); }

const nlohmann::json& field(const JsonRow& row, const char* name) {
  auto it = row.value.find(name);
  if (it == row.value.end()) {
    throw InputError(row.where, std::string("missing field '") + name + "'");
  }
  return *it;
}

std::string string_field(const JsonRow& row, const char* name) {
  const auto& v = field(row, name);
  if (!v.is_string()) throw InputError(row.where, std::string("field '") + name + "' must be a string");
  return v.get<std::string>();
}

std::vector<std::string> string_list(const JsonRow& row, const nlohmann::json& value,
                                     const char* what) {
  if (!value.is_array()) throw InputError(row.where, std::string(what) + " must be a list of strings");
  std::vector<std::string> out;
  for (const auto& v : value) {
    if (!v.is_string()) throw InputError(row.where, std::string(what) + " must be a list of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

int int_field(const JsonRow& row, const char* name) {
  const auto& v = field(row, name);
  if (v.is_number_integer()) return v.get<int>();
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (!s.empty() && s.size() < 10 && s.find_first_not_of("0123456789") == std::string::npos) {
      return std::stoi(s);
    }
  }
  throw InputError(row.where, std::string("field '") + name + "' must be an integer");
}

Doc multiple_choice_doc(int64_t index, const std::string& context, std::vector<std::string> choices,
                        int gold, const SourceLocation& where) {
  if (gold < 0 || gold >= static_cast<int>(choices.size())) {
    throw InputError(where, "gold index " + std::to_string(gold) + " outside the " +
                                std::to_string(choices.size()) + " choices");
  }
  Doc doc;
  doc.index = index;
  doc.gold = gold;
  for (const auto& c : choices) doc.requests.push_back({context, kTargetDelimiter + c});
  doc.choices = std::move(choices);
  return doc;
}

}  // namespace attnbench::evals
