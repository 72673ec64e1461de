// hellaswag (lm_eval/tasks/hellaswag/hellaswag.yaml + utils.py): Rowan/hellaswag, validation split,
// 10042 contexts. Template "{{query}}", choices = [preprocess(e) for e in endings], gold int(label),
// with query = preprocess(activity_label + ": " + ctx_a + " " + ctx_b.capitalize()).
//
// Data here (hellaswag/SOURCE.md): hellaswag_val_full.txt, llama.cpp's 6-line text form produced by
// klosax/hellaswag_text_data's extract_hellaswag.cpp from the official hellaswag_val.jsonl:
//   line 1  preprocess_k(activity_label) + ": " + preprocess_k(ctx)   (ctx = ctx_a + " " + ctx_b)
//   line 2  label (0-3)
//   3..6    preprocess_k(ending) for the four endings
// where preprocess_k removes only [header], [step], [substeps] and [title] tags and never
// capitalises ctx_b. hellaswag_query_from_text_form() undoes both differences (docs/tasks.md).
// The hub export (hf_format/validation.jsonl, Rowan/hellaswag rows {"ind","activity_label","ctx_a",
// "ctx_b","ctx","endings","label",...}) goes through lm-eval's process_docs exactly; the text form is
// read straight into process_docs' output rows {"query", "choices", "label"}.
#include "evals/tasks/hellaswag.h"

#include <filesystem>

#include "evals/tasks/py_text.h"
#include "evals/tasks/task_data.h"

namespace attnbench::evals {

namespace {
// re.sub(r"\[.*?\]", "", s): from each '[' to the first ']' after it, unless a newline comes first
// (then this '[' stays and the scan moves on, as the regex would).
std::string remove_bracket_spans(const std::string& s) {
  std::string out;
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t open = s.find('[', pos);
    if (open == std::string::npos) break;
    const size_t close = s.find(']', open + 1);
    const size_t newline = s.find('\n', open + 1);
    out.append(s, pos, open - pos);
    if (close == std::string::npos || (newline != std::string::npos && newline < close)) {
      out += '[';
      pos = open + 1;
    } else {
      pos = close + 1;
    }
  }
  out.append(s, pos, std::string::npos);
  return out;
}

bool is_sentence_end(char c) { return c == '.' || c == '!' || c == '?'; }
}  // namespace

std::string hellaswag_preprocess(const std::string& text) {
  std::string t = py_strip(text);
  t = py_replace(t, " [title]", ". ");
  t = remove_bracket_spans(t);
  return py_replace(t, "  ", " ");
}

std::string hellaswag_query(const std::string& activity_label, const std::string& ctx_a,
                            const std::string& ctx_b) {
  return hellaswag_preprocess(activity_label + ": " + ctx_a + " " + py_capitalize_ascii(ctx_b));
}

std::string hellaswag_query_from_text_form(const std::string& line) {
  std::string query = line;
  const size_t label_end = line.find(": ");
  const size_t ctx_start = label_end == std::string::npos ? 0 : label_end + 2;
  size_t n = query.size();
  const bool ends_sentence =
      n > 0 && (is_sentence_end(query[n - 1]) ||
                (query[n - 1] == '"' && n > 1 && is_sentence_end(query[n - 2])));
  if (!ends_sentence) {
    // The last "[.!?]\"? " inside ctx: ctx_b starts right after it.
    for (size_t i = n; i-- > ctx_start;) {
      if (query[i] != ' ' || i == 0) continue;
      size_t p = i - 1;
      if (query[p] == '"' && p > 0) --p;
      if (p >= ctx_start && is_sentence_end(query[p])) {
        query = query.substr(0, i + 1) + py_capitalize_ascii(query.substr(i + 1));
        break;
      }
    }
  }
  if (query.find('[') != std::string::npos) query = hellaswag_preprocess(query);
  return query;
}

std::string hellaswag_ending_from_text_form(const std::string& line) {
  return line.find('[') != std::string::npos ? hellaswag_preprocess(line) : line;
}

namespace {

// utils.process_docs: a hub row -> {"query", "choices", "label"}, the fields the YAML's doc_to_text
// ("{{query}}"), doc_to_choice ("choices") and doc_to_target ("{{label}}") read.
void process_doc(JsonRow& row) {
  const std::string query = hellaswag_query(string_field(row, "activity_label"),
                                            string_field(row, "ctx_a"), string_field(row, "ctx_b"));
  std::vector<std::string> choices;
  for (const auto& e : string_list(row, field(row, "endings"), "endings")) {
    choices.push_back(hellaswag_preprocess(e));
  }
  const int label = int_field(row, "label");
  row.value = {{"query", query}, {"choices", choices}, {"label", label}};
}

// The text form, 6 lines per item, as process_docs' output rows (its repairs: hellaswag.h).
std::vector<JsonRow> text_form_rows(const std::filesystem::path& path) {
  const std::string text = read_text(path);
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    pos = nl + 1;
  }
  if (lines.size() % 6 != 0) {
    throw InputError({path.string(), static_cast<int>(lines.size())},
                     "expected 6 lines per item (context, label, 4 endings); the file has " +
                         std::to_string(lines.size()) + " lines");
  }
  std::vector<JsonRow> rows;
  for (size_t i = 0; i + 6 <= lines.size(); i += 6) {
    const SourceLocation where{path.string(), static_cast<int>(i + 2)};
    const std::string& label = lines[i + 1];
    if (label.size() != 1 || label[0] < '0' || label[0] > '3') {
      throw InputError(where, "expected the gold label 0-3, got '" + label + "'");
    }
    std::vector<std::string> choices;
    for (size_t k = 2; k < 6; ++k) choices.push_back(hellaswag_ending_from_text_form(lines[i + k]));
    nlohmann::json row = {{"query", hellaswag_query_from_text_form(lines[i])},
                          {"choices", choices},
                          {"label", label[0] - '0'}};
    rows.push_back({std::move(row), where});
  }
  return rows;
}

TaskFiles hellaswag_files() {
  TaskFiles f;
  f.folder = "hellaswag";
  f.official = "hellaswag_val_full.txt";
  f.official_layout = "llama.cpp text form, 6 lines per item: activity_label: ctx / label / 4 endings";
  f.hub = {"hf_format/validation.jsonl"};
  f.hub_layout =
      "Rowan/hellaswag JSONL: {\"ind\", \"activity_label\", \"ctx_a\", \"ctx_b\", \"endings\", "
      "\"label\", ...}";
  f.official_text = text_form_rows;
  f.process_docs = process_doc;
  return f;
}

const TaskFiles kFiles = hellaswag_files();

std::vector<Doc> load_hellaswag(const std::filesystem::path& root) {
  std::vector<Doc> docs;
  for (const auto& row : read_rows(root, kFiles)) {
    docs.push_back(multiple_choice_doc(static_cast<int64_t>(docs.size()), string_field(row, "query"),
                                       string_list(row, field(row, "choices"), "choices"),
                                       int_field(row, "label"), row.where));
  }
  return docs;
}

// The text form cannot say where lm-eval's strip-then-remove order leaves a space (docs/tasks.md).
std::string hellaswag_note(const std::filesystem::path& root) {
  if (!locate(root, kFiles).official) return "";
  return "hellaswag: prompts rebuilt from llama.cpp's text form (hellaswag_val_full.txt): ctx_b "
         "capitalisation restored by rule, and WikiHow endings that began or ended with a [tag] "
         "lack the leading/trailing space lm-eval keeps; use the hub export "
         "(hellaswag/hf_format/validation.jsonl) for exact prompts (docs/tasks.md)";
}

TaskSpec hellaswag_task() {
  TaskSpec t;
  t.name = "hellaswag";
  t.description = "HellaSwag sentence completion (validation, 10042)";
  t.source.folder = kFiles.folder;
  t.source.dataset = "Rowan/hellaswag";
  t.source.config = "default";
  t.source.split = "validation";
  t.type = OutputType::MultipleChoice;
  t.metrics = {"acc", "acc_norm"};
  t.paper_metric = "acc_norm";
  t.load = load_hellaswag;
  t.data_note = hellaswag_note;
  return t;
}

const RegisterTask kHellaswag(hellaswag_task());

}  // namespace
}  // namespace attnbench::evals
