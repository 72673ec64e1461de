// The evaluation driver: tasks -> lm-eval requests -> log-likelihoods -> metrics, for `attnbench
// eval` and the sweep runner. Protocol: docs/evaluation.md.
#pragma once
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config/run_config.h"
#include "evals/encode_pair.h"
#include "evals/language_model.h"
#include "evals/loglikelihood.h"
#include "evals/metrics.h"
#include "evals/tasks/task.h"
#include "results/rows.h"

namespace attnbench::data {
class TextTokenizer;
}

namespace attnbench::evals {

// Stored with every result: which lm-eval version's zero-shot protocol, and which revision of our
// implementation of it. Bump the attnbench-N suffix whenever a number could change.
constexpr const char* kProtocolVersion = "lm-eval-0.4.13-zeroshot/attnbench-3";

// How tasks are scored (the item limit is a property of the loaded task: LoadedTask::limit).
struct EvalOptions {
  int64_t batch_size = 32;  // model rows per forward pass
  BosPolicy bos = BosPolicy::None;
  int64_t prefix_token = kEndOfText;  // lm-eval's prefix_token_id: the tokenizer's BOS, else EOS
                                      // (TextTokenizer::prefix_id); BOS under BosPolicy::Prepend
  int64_t bootstrap_iters = kDefaultBootstrapIters;  // perplexity stderr; <= 0 = none
  bool log_samples = false;                          // keep per-request results in the report
  bool reuse_prefixes = true;  // a shared context computed once (loglikelihood.h); false: lm-eval's
                               // full rows, for comparison
  std::FILE* progress = nullptr;  // progress lines go here (nullptr = silent)
};

struct MetricValue {
  std::string name;                  // acc, acc_norm, perplexity, word_perplexity, ...
  double value = 0;
  std::optional<double> std_error;   // lm-eval's <metric>_stderr; nullopt where it reports none
};

// One scored request (--log-samples).
struct SampleResult {
  int64_t doc = 0;      // Doc::index
  int64_t request = 0;  // choice index, or rolling window index
  double loglikelihood = 0;
  bool is_greedy = false;
  bool is_gold = false;
  int64_t tokens = 0;   // continuation tokens scored
  // Multiple choice: len(choice) in code points, lm-eval's acc_norm denominator (what a paired
  // test of acc_norm needs); unset for other requests.
  std::optional<int64_t> choice_chars;
};

struct TaskReport {
  std::string task;
  int64_t n = 0;         // documents scored
  int64_t requests = 0;  // log-likelihood requests (choices, windows)
  std::vector<MetricValue> metrics;  // reported_metrics (scorer.h): TaskSpec::metrics' order, then
                                     // the gold signals logprob and bits_per_byte
  std::vector<SampleResult> samples;  // only with log_samples
  double seconds = 0;                 // wall time of the task (encoding, model, scoring)
  ForwardStats forward;               // of which in the model's forward pass
  const MetricValue* find(const std::string& metric) const;
};

struct EvalReport {
  std::string protocol = kProtocolVersion;
  BosPolicy bos = BosPolicy::None;
  int64_t limit = 0;
  std::vector<TaskReport> tasks;
};

// One request as lm-eval's Instance.arguments (for --dump-requests): rolling requests have an empty
// context and the whole scored document (Doc::text) as continuation.
struct RequestRecord {
  std::string task;
  int64_t doc = 0;
  int64_t request = 0;
  std::string context;
  std::string continuation;
};

// The first `limit` documents (all when limit <= 0).
std::vector<Doc> apply_limit(std::vector<Doc> docs, int64_t limit);

std::vector<RequestRecord> request_records(const std::string& task, OutputType type,
                                           const std::vector<Doc>& docs);

// Scores already loaded documents of one task (tests use this with hand-made docs): `metrics`,
// then the gold signals a multiple_choice or loglikelihood task adds (reported_metrics, scorer.h).
TaskReport evaluate_docs(LanguageModel& model, const TextEncoder& encode, const std::string& task,
                         OutputType type, const std::vector<std::string>& metrics,
                         const std::vector<Doc>& docs, const EvalOptions& options);

// A task ready to score: its registration and its documents, the item limit applied.
struct LoadedTask {
  const TaskSpec* spec = nullptr;
  std::vector<Doc> docs;
  int64_t limit = 0;  // the item limit applied (0 = every item), stored with the task's rows
};

// Every task of `names` loaded from `data_root`, its limit applied (`task_limits` replaces `limit`
// for the tasks it names): an unknown task or a missing or malformed file is a UsageError before
// any model work starts.
std::vector<LoadedTask> load_tasks(const std::vector<std::string>& names,
                                   const std::filesystem::path& data_root, int64_t limit,
                                   const std::map<std::string, int64_t>& task_limits = {});

// UsageError naming the task, the document and both lengths when one of `task`'s answers is
// longer than `max_length` tokens, as `encode` and `options` encode it: lm-eval never truncates a
// continuation, so the model cannot score the task. A sweep checks this before any training
// (harness/sweep/runner.cpp); evaluation checks it again before the first forward pass.
void require_answers_fit(const LoadedTask& task, const TextEncoder& encode, const EvalOptions& options,
                         int64_t max_length);

// Receives each task's report as soon as it is scored.
using TaskDone = std::function<void(const LoadedTask& task, TaskReport report)>;

// The name a task's results are reported and stored under: the task's own at the model's training
// context, "task@N" when it is scored at another length N (length extrapolation: the paper's Fig. 6
// scores WikiText and LAMBADA at 2x and 4x the training context; docs/evaluation.md).
std::string scored_task_name(const std::string& task, const LanguageModel& model);
// The same name for a task scored at `length` tokens by a model trained at `trained_length`.
std::string task_at_length(const std::string& task, int64_t length, int64_t trained_length);
// Its inverse: "wikitext@1024" -> {"wikitext", 1024}; a plain name -> {name, 0} (the model's own).
struct TaskAtLength {
  std::string task;
  int64_t length = 0;
};
TaskAtLength parse_task_at_length(const std::string& name);

// The evaluation driver of `attnbench eval` and of a sweep's cells: scores `tasks` in order on
// `model` (each under scored_task_name) and hands each report to `done` (callers store it as one transaction, so a kill loses
// at most the task in progress). `stop` is polled between tasks; returns false when it stopped
// early.
bool evaluate_tasks(LanguageModel& model, const TextEncoder& encode,
                    const std::vector<LoadedTask>& tasks, const EvalOptions& options,
                    const TaskDone& done, const std::function<bool()>& stop = {});

// The options a trained model's own config asks for (its [eval] section): batch size and BOS
// policy.
EvalOptions eval_options(const config::EvalConfig& eval);

// A scored task as results-store rows (one per metric), stamped with kProtocolVersion, the item
// limit and the BOS policy it was scored under.
std::vector<results::EvalRow> eval_rows(const TaskReport& task, int64_t limit, BosPolicy bos);

// Its per-request results (EvalOptions::log_samples) as samples-table rows.
std::vector<results::Sample> sample_rows(const TaskReport& task);

// A tokenizer as a TextEncoder (TextTokenizer::encode, as lm-eval's Hugging Face tokenizer).
TextEncoder text_encoder(const data::TextTokenizer& tokenizer);

}  // namespace attnbench::evals
