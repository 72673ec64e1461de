// lambada_openai (lm_eval/tasks/lambada/lambada_openai.yaml): OpenAI's LAMBADA test split, 5153
// passages, output_type loglikelihood:
//   context = text.split(' ')[:-1] | join(' ')   (everything before the last single space)
//   target  = ' ' + text.split(' ')[-1]          (the last word, with its space; NO delimiter added)
// Metrics perplexity (exp of minus the mean per-passage target log-likelihood) and acc (greedy).
// Official file lambada_test.jsonl and the hub export (EleutherAI/lambada_openai) are both {"text"}.
#include "evals/tasks/task_data.h"

namespace attnbench::evals {
namespace {

TaskFiles lambada_files() {
  TaskFiles f;
  f.folder = "lambada_openai";
  f.official = "lambada_test.jsonl";
  f.official_layout = "OpenAI LAMBADA JSONL {\"text\"}";
  f.hub = {"hf_format/test.jsonl"};
  f.hub_layout = "EleutherAI/lambada_openai JSONL: {\"text\"}";
  return f;
}

const TaskFiles kFiles = lambada_files();

std::vector<Doc> load_lambada(const std::filesystem::path& root) {
  std::vector<Doc> docs;
  for (const auto& row : read_rows(root, kFiles)) {
    const std::string text = string_field(row, "text");
    // split(' ') then join(' ') of all but the last piece = the text before the last ' '; with no
    // ' ' at all the context is empty and the target is ' ' + the whole text.
    const size_t last = text.rfind(' ');
    Doc doc;
    doc.index = static_cast<int64_t>(docs.size());
    if (last == std::string::npos) {
      doc.requests.push_back({"", " " + text});
    } else {
      doc.requests.push_back({text.substr(0, last), " " + text.substr(last + 1)});
    }
    docs.push_back(std::move(doc));
  }
  return docs;
}

TaskSpec lambada_openai_task() {
  TaskSpec t;
  t.name = "lambada_openai";
  t.description = "LAMBADA last-word prediction, OpenAI variant (test, 5153)";
  t.source.folder = kFiles.folder;
  t.source.dataset = "EleutherAI/lambada_openai";
  t.source.config = "default";
  t.source.split = "test";
  t.type = OutputType::Loglikelihood;
  t.metrics = {"perplexity", "acc"};
  t.paper_metric = "perplexity";
  t.load = load_lambada;
  return t;
}

const RegisterTask kLambada(lambada_openai_task());

}  // namespace
}  // namespace attnbench::evals
