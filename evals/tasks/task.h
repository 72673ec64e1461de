// A zero-shot task as lm-evaluation-harness defines it: data plus a prompt (docs/tasks.md).
// One file per task under evals/tasks builds a TaskSpec field by field and registers it; the
// protocol core (evals/) turns its documents into log-likelihood requests, runs the model and
// scores them.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace attnbench::evals {

enum class OutputType {
  MultipleChoice,        // one request per choice; acc, acc_norm
  Loglikelihood,         // one request; acc (= greedy) and perplexity (LAMBADA)
  LoglikelihoodRolling,  // the whole document; word/byte perplexity, bits per byte (WikiText)
};

// One loglikelihood request: score `continuation` given `context`, exactly the strings lm-eval
// builds (target delimiter already included in the continuation).
struct Request {
  std::string context;
  std::string continuation;
};

struct Doc {
  int64_t index = 0;              // position in the scored split
  std::vector<Request> requests;  // MultipleChoice: one per choice; otherwise one
  // MultipleChoice: the choice strings as lm-eval's doc_to_choice returns them, WITHOUT the target
  // delimiter (acc_norm divides by their length in Unicode code points, Python's len()).
  std::vector<std::string> choices;
  int gold = -1;                  // MultipleChoice: index of the correct choice
  std::string text;               // LoglikelihoodRolling: the document as scored (detokenised)
  // LoglikelihoodRolling: the denominators of lm-eval's process_results, counted on the ORIGINAL
  // document before detokenisation (wikitext/preprocess_wikitext.py): words =
  // len(re.split(r"\s+", page)), bytes = len(page.encode("utf-8")). Not derivable from `text`.
  int64_t word_count = 0;
  int64_t byte_count = 0;
};

// Where a task's documents come from, as lm-eval's task YAML says (dataset_path, dataset_name and
// the scored split), and the folder of the data root that holds them. `attnbench data fetch`
// downloads each registered task's source into <data root>/<folder>/hf_format/<split>.jsonl.
struct DataSource {
  std::string folder;   // <data root>/<folder>, e.g. "arc_easy"
  std::string dataset;  // the hub dataset, e.g. "allenai/ai2_arc"
  std::string config;   // its configuration (dataset_name), e.g. "ARC-Easy"; "default" for none
  std::string split;    // the scored split, e.g. "test"
};

struct TaskSpec {
  std::string name;         // lm-eval's task name, e.g. "arc_easy"
  std::string description;  // one line
  DataSource source;        // every field set (RegisterTask refuses an incomplete source)
  OutputType type = OutputType::MultipleChoice;
  std::vector<std::string> metrics;  // as lm-eval reports them: acc, acc_norm, perplexity, ...
  std::string paper_metric;          // the metric a paper table reports (acc_norm where it exists)
  // Loads the scored split from <data root>/<folder>: the official file format or the Hugging Face
  // hub's JSONL export, detected automatically. Throws UsageError naming the missing/bad file.
  std::function<std::vector<Doc>(const std::filesystem::path& data_root)> load;
  // Where the files found under data_root force a departure from lm-eval's exact prompts: one line
  // for the evaluator to print and record with the results, "" when the prompts are exact. Unset
  // (empty std::function) means always exact. docs/tasks.md lists every case.
  std::function<std::string(const std::filesystem::path& data_root)> data_note;
};

struct RegisterTask {
  explicit RegisterTask(TaskSpec spec);
};

const TaskSpec& find_task(const std::string& name);  // throws UsageError with the nearest name
std::vector<std::string> task_names();               // sorted
// "all" -> every task; "paper" -> the nine of the paper's tables; else a comma-separated list.
std::vector<std::string> expand_task_list(const std::string& spec);

}  // namespace attnbench::evals
