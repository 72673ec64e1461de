// Finding and reading a task's files under <data root>/<folder>/ (docs/tasks.md, "Data layout"):
// the official release file when present, else the Hugging Face hub's JSONL export of the same
// split at <folder>/hf_format/<split>.jsonl. Which layout a JSONL file holds is then read from the
// fields of its rows, so a hub export also loads when saved under the official file's name.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "evals/tasks/task.h"

namespace attnbench::evals {

// lm-eval's default target_delimiter (lm_eval/config/task.py); every task here keeps it.
inline const std::string kTargetDelimiter = " ";

// One row of a task's data, as the hub export's JSONL holds it.
struct JsonRow {
  nlohmann::json value;
  SourceLocation where;  // file:line (or array element), for every error about this row
};

// Reads an official release that is not JSON into rows of the hub export's layout (HellaSwag's text
// form, WikiText's raw file), each row located at its file and line.
using TextLayoutReader = std::vector<JsonRow> (*)(const std::filesystem::path& file);

// Where a task's documents are on disk, and how the official release differs from the hub export
// that lm-eval reads. A task file builds one field by field; read_rows() undoes the differences, so
// the task's prompt code sees hub rows only.
struct TaskFiles {
  std::string folder;                 // <data root>/<folder>
  std::string official;               // the official release file, relative to the folder
  std::string official_layout;        // one line: what the official file holds
  std::vector<std::string> hub;       // hub-export candidates, relative to the folder
  std::string hub_layout;             // one line: the hub row's fields
  // The official file's reader when it is neither JSONL nor one JSON array; nullptr when it is.
  TextLayoutReader official_text = nullptr;
  // lm-eval's process_docs where the task's YAML has one (HellaSwag's utils.process_docs), applied
  // to every JSON row; an official_text reader returns rows already in its output layout.
  void (*process_docs)(JsonRow& row) = nullptr;
  // Fields the official release spells as a boolean ("true"/"True"/"false"/"False", true/false)
  // where the hub export has 0/1 (BoolQ's label); read_rows() makes them 0/1.
  std::vector<std::string> boolean_fields;
};

struct LocatedFile {
  std::filesystem::path path;
  bool official = true;  // false: found at a hub-export location
};

// The official file if it exists, else the first existing hub candidate; otherwise a UsageError
// naming every path it looked for and the layout each should have.
LocatedFile locate(const std::filesystem::path& data_root, const TaskFiles& files);

// <data root>/<folder>/<relative> or a UsageError naming it (a companion file such as labels).
std::filesystem::path require_file(const std::filesystem::path& data_root, const std::string& folder,
                                   const std::string& relative, const std::string& layout);

// One JSON value per line. A malformed line -> InputError file:line:col; an empty line before the
// last non-empty one -> InputError (it would shift the alignment with a labels file).
std::vector<JsonRow> read_jsonl(const std::filesystem::path& file);

// The task's rows in the hub export's layout (the one lm-eval reads), whichever file locate() finds.
// The layout is read from the content, so either file loads under either name: a first non-space
// character '{' is JSONL, '[' one JSON array of objects (SciQ's release), anything else the task's official_text
// layout (InputError when it has none). Then JSON rows go through process_docs, and every
// boolean_fields field becomes 0/1.
std::vector<JsonRow> read_rows(const std::filesystem::path& data_root, const TaskFiles& files);

// A whole text file, bytes unchanged.
std::string read_text(const std::filesystem::path& file);

// One integer per line (PIQA, WinoGrande, SIQA label files); must hold exactly `expected` labels.
std::vector<int> read_labels(const std::filesystem::path& file, size_t expected);

// An official release that keeps its gold labels in a companion file, one per line (PIQA, SIQA,
// WinoGrande), where the hub export has them in a field of each row.
struct LabelsFile {
  std::string file;            // relative to the task folder: "valid-labels.lst"
  std::string layout;          // one line: what the file holds
  std::string field;           // the hub row's label field: "label"
  // A field only the official rows have; "" when the official rows are those without `field`.
  std::string official_field;
};

// The task's rows in the hub export's layout (the one lm-eval reads): a hub export as it is; the
// official file's rows with line i of the labels file put into row i's `labels.field` (an official
// row that has that field already must agree with the file). The layout is read from the first
// row's fields, so either file loads under either name.
std::vector<JsonRow> read_labelled_rows(const std::filesystem::path& data_root, const TaskFiles& files,
                                        const LabelsFile& labels);

bool has_field(const JsonRow& row, const char* name);
const nlohmann::json& field(const JsonRow& row, const char* name);      // InputError if absent
std::string string_field(const JsonRow& row, const char* name);         // must be a string
std::vector<std::string> string_list(const JsonRow& row, const nlohmann::json& value,
                                     const char* what);                 // a list of strings
int int_field(const JsonRow& row, const char* name);                   // int, or digits in a string

// A multiple-choice Doc exactly as lm-eval's construct_requests builds it: one request per choice,
// (context, target_delimiter + choice) with target_delimiter " ". `gold` is checked against the
// number of choices (InputError at `where`).
Doc multiple_choice_doc(int64_t index, const std::string& context, std::vector<std::string> choices,
                        int gold, const SourceLocation& where);

}  // namespace attnbench::evals
