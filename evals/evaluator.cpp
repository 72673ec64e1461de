#include "evals/evaluator.h"

#include <chrono>
#include <memory>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/common/json_input.h"
#include "evals/text_units.h"
#include "core/data/text_tokenizer.h"
#include "evals/progress.h"
#include "evals/scorer.h"

namespace attnbench::evals {

const MetricValue* TaskReport::find(const std::string& metric) const {
  for (const auto& m : metrics) {
    if (m.name == metric) return &m;
  }
  return nullptr;
}

std::vector<Doc> apply_limit(std::vector<Doc> docs, int64_t limit) {
  if (limit > 0 && static_cast<size_t>(limit) < docs.size()) docs.resize(static_cast<size_t>(limit));
  return docs;
}

std::vector<RequestRecord> request_records(const std::string& task, OutputType type,
                                           const std::vector<Doc>& docs) {
  std::vector<RequestRecord> out;
  for (const Doc& doc : docs) {
    switch (type) {
      case OutputType::MultipleChoice:
      case OutputType::Loglikelihood:
        for (size_t j = 0; j < doc.requests.size(); ++j) {
          out.push_back({task, doc.index, static_cast<int64_t>(j), doc.requests[j].context,
                         doc.requests[j].continuation});
        }
        break;
      case OutputType::LoglikelihoodRolling:
        out.push_back({task, doc.index, 0, "", doc.text});
        break;
    }
  }
  return out;
}

namespace {

// Where each token request came from.
struct Origin {
  size_t doc;
  size_t request;  // choice index or window index
};

// The token requests of a task, in document order, each with its origin.
struct TaskRequests {
  std::vector<TokenRequest> tokens;
  std::vector<Origin> origin;
};

// encode() of the contexts repeats for every choice of a document: remember the last one.
TextEncoder memoize_last(const TextEncoder& encode) {
  auto last_text = std::make_shared<std::string>();
  auto last_tokens = std::make_shared<std::vector<int64_t>>();
  auto valid = std::make_shared<bool>(false);
  return [=](std::string_view text) {
    if (!*valid || text != *last_text) {
      *last_tokens = encode(text);
      *last_text = std::string(text);
      *valid = true;
    }
    return *last_tokens;
  };
}

// multiple_choice and loglikelihood: each (context, continuation) of Doc::requests split into
// tokens as TemplateLM._encode_pair does (encode_pair.h).
void add_pair_requests(const std::string& task, const Doc& doc, size_t d, const TextEncoder& encode,
                       const EvalOptions& options, TaskRequests& out) {
  if (doc.requests.empty()) throw document_error(task, doc, "has no requests");
  for (size_t j = 0; j < doc.requests.size(); ++j) {
    TokenPair pair = encode_pair(doc.requests[j].context, doc.requests[j].continuation, encode,
                                 options.bos, options.prefix_token);
    // A continuation of no tokens has no log-likelihood (it would score as a certain, greedy
    // answer): lm-eval stops on it (HFLM._loglikelihood_tokens asserts len(continuation_enc) > 0).
    if (pair.continuation.empty()) {
      throw UsageError("task " + task + ": document " + std::to_string(doc.index) + ", request " +
                       std::to_string(j) + ": the continuation " +
                       quoted_excerpt(doc.requests[j].continuation) +
                       " encodes to no tokens with this model's tokenizer (lm-eval stops on an "
                       "empty continuation too)");
    }
    out.tokens.push_back({std::move(pair.context), std::move(pair.continuation)});
    out.origin.push_back({d, j});
  }
}

// loglikelihood_rolling: the windows of Doc::text (scorer_rolling.cpp).
// Under BosPolicy::Prepend the document's tokens start with the prefix token, as lm-eval's
// tok_encode(string) gives them for a BOS-adding tokenizer (its first window then predicts BOS).
void add_rolling_requests(const std::string& task, const Doc& doc, size_t d,
                          const TextEncoder& encode, int64_t max_length,
                          const EvalOptions& options, TaskRequests& out) {
  const int64_t prefix = options.prefix_token;
  const TextEncoder tokens = options.bos == BosPolicy::Prepend
                                 ? TextEncoder([&](std::string_view text) {
                                     std::vector<int64_t> ids = encode(text);
                                     ids.insert(ids.begin(), prefix);
                                     return ids;
                                   })
                                 : encode;
  std::vector<TokenRequest> windows = rolling_requests(doc.text, tokens, max_length, prefix);
  // Text of no tokens: the tokenizer cannot read it (its perplexity would be 1).
  if (windows.empty() && !doc.text.empty()) {
    throw UsageError("task " + task + ": document " + std::to_string(doc.index) + ": its text " +
                     quoted_excerpt(doc.text) + " encodes to no tokens with this model's tokenizer");
  }
  for (size_t w = 0; w < windows.size(); ++w) {
    out.tokens.push_back(std::move(windows[w]));
    out.origin.push_back({d, w});
  }
}

TaskRequests build_requests(const std::string& task, OutputType type, const std::vector<Doc>& docs,
                            const TextEncoder& encode, const EvalOptions& options,
                            int64_t max_length) {
  TaskRequests out;
  TextEncoder cached = memoize_last(encode);
  for (size_t d = 0; d < docs.size(); ++d) {
    switch (type) {
      case OutputType::MultipleChoice:
      case OutputType::Loglikelihood:
        add_pair_requests(task, docs[d], d, cached, options, out);
        break;
      case OutputType::LoglikelihoodRolling:
        add_rolling_requests(task, docs[d], d, encode, max_length, options, out);
        break;
    }
  }
  return out;
}

// The indices of each document's requests, in request order.
std::vector<std::vector<size_t>> requests_of_docs(const std::vector<Origin>& origin, size_t n_docs) {
  std::vector<std::vector<size_t>> of_doc(n_docs);
  for (size_t r = 0; r < origin.size(); ++r) of_doc[origin[r].doc].push_back(r);
  return of_doc;
}

std::vector<std::vector<Loglikelihood>> group_by_doc(const std::vector<Loglikelihood>& lls,
                                                     const std::vector<std::vector<size_t>>& of_doc) {
  std::vector<std::vector<Loglikelihood>> out(of_doc.size());
  for (size_t d = 0; d < of_doc.size(); ++d) {
    for (size_t r : of_doc[d]) out[d].push_back(lls[r]);
  }
  return out;
}

// The scorer of the output type (scorer.h).
std::vector<MetricValue> score_task(OutputType type, const ScoringInput& in) {
  switch (type) {
    case OutputType::MultipleChoice: return score_multiple_choice_task(in);
    case OutputType::Loglikelihood: return score_loglikelihood_task(in);
    case OutputType::LoglikelihoodRolling: return score_rolling_task(in);
  }
  throw std::logic_error("output type " + std::to_string(static_cast<int>(type)) + " has no scorer");
}

// lm-eval logs a multiple-choice request as gold when it is the gold choice; a target and the
// windows of a document are all the document's answer.
bool is_gold_request(OutputType type, const Doc& doc, size_t request) {
  switch (type) {
    case OutputType::MultipleChoice: return static_cast<int>(request) == doc.gold;
    case OutputType::Loglikelihood:
    case OutputType::LoglikelihoodRolling: return true;
  }
  return true;
}

// --log-samples: every scored request, in document order.
std::vector<SampleResult> sample_results(OutputType type, const std::vector<Doc>& docs,
                                         const TaskRequests& requests,
                                         const std::vector<Loglikelihood>& lls,
                                         const std::vector<std::vector<size_t>>& of_doc) {
  std::vector<SampleResult> out;
  for (size_t d = 0; d < docs.size(); ++d) {
    for (size_t r : of_doc[d]) {
      const size_t request = requests.origin[r].request;
      SampleResult s;
      s.doc = docs[d].index;
      s.request = static_cast<int64_t>(request);
      s.loglikelihood = lls[r].logprob;
      s.is_greedy = lls[r].is_greedy;
      s.is_gold = is_gold_request(type, docs[d], request);
      s.tokens = static_cast<int64_t>(requests.tokens[r].continuation.size());
      if (type == OutputType::MultipleChoice && request < docs[d].choices.size()) {
        s.choice_chars = static_cast<int64_t>(codepoint_length(docs[d].choices[request]));
      }
      out.push_back(s);
    }
  }
  return out;
}

// lm-eval never truncates an answer: a task with one longer than the model's context cannot be
// scored. Refused naming the longest such answer and how many documents have one, before any
// forward pass (the sweep's and eval's preflights call this through require_answers_fit).
void refuse_long_answers(const std::string& task, const TaskRequests& requests,
                         const std::vector<Doc>& docs, int64_t max_length) {
  int64_t longest = 0;
  size_t longest_doc = 0;
  std::set<size_t> over;  // documents with an answer that does not fit
  for (size_t r = 0; r < requests.tokens.size(); ++r) {
    const auto n = static_cast<int64_t>(requests.tokens[r].continuation.size());
    if (n <= max_length) continue;
    over.insert(requests.origin[r].doc);
    if (n > longest) {
      longest = n;
      longest_doc = requests.origin[r].doc;
    }
  }
  if (over.empty()) return;
  throw UsageError(fmt::format(
      "task {}: document {} has an answer of {} tokens, longer than the model's context of {} tokens "
      "(documents with such an answer: {} of {}); lm-eval never truncates an answer, so the task "
      "cannot be scored (raise model.context_length or leave the task out)",
      task, docs[longest_doc].index, longest, max_length, over.size(), docs.size()));
}

}  // namespace

void require_answers_fit(const LoadedTask& task, const TextEncoder& encode, const EvalOptions& options,
                         int64_t max_length) {
  const TaskSpec& spec = *task.spec;
  if (spec.type == OutputType::LoglikelihoodRolling) return;  // windows of any document fit
  const TaskRequests requests = build_requests(spec.name, spec.type, task.docs, encode, options, max_length);
  refuse_long_answers(spec.name, requests, task.docs, max_length);
}

TaskReport evaluate_docs(LanguageModel& model, const TextEncoder& encode, const std::string& task,
                         OutputType type, const std::vector<std::string>& metrics,
                         const std::vector<Doc>& docs, const EvalOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  TaskReport report;
  report.task = task;
  report.n = static_cast<int64_t>(docs.size());
  if (docs.empty()) throw std::runtime_error("task " + task + " has no documents to score");

  const TaskRequests requests =
      build_requests(task, type, docs, encode, options, model.max_length());
  refuse_long_answers(task, requests, docs, model.max_length());
  report.requests = static_cast<int64_t>(requests.tokens.size());

  ProgressBar bar(options.progress, is_terminal(options.progress));
  bar.start(task, report.requests, report.n);
  std::vector<Loglikelihood> lls =
      compute_loglikelihoods(model, requests.tokens, options.batch_size, &bar, &report.forward,
                             options.reuse_prefixes);
  bar.finish();

  const std::vector<std::vector<size_t>> of_doc = requests_of_docs(requests.origin, docs.size());
  const std::vector<std::vector<Loglikelihood>> doc_lls = group_by_doc(lls, of_doc);
  const std::vector<std::string> scored = reported_metrics(type, metrics);
  report.metrics = score_task(type, {task, docs, doc_lls, scored, options.bootstrap_iters});
  if (options.log_samples) report.samples = sample_results(type, docs, requests, lls, of_doc);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

std::vector<results::EvalRow> eval_rows(const TaskReport& task, int64_t limit, BosPolicy bos) {
  std::vector<results::EvalRow> rows;
  for (const MetricValue& m : task.metrics) {
    rows.push_back({task.task, m.name, m.value, m.std_error, task.n, limit, kProtocolVersion,
                    to_string(bos)});
  }
  return rows;
}

std::vector<results::Sample> sample_rows(const TaskReport& task) {
  std::vector<results::Sample> rows;
  for (const SampleResult& s : task.samples) {
    results::Sample row;
    row.task = task.task;
    row.doc = s.doc;
    row.request = s.request;
    row.loglikelihood = s.loglikelihood;
    row.is_greedy = s.is_greedy;
    row.is_gold = s.is_gold;
    row.tokens = s.tokens;
    row.choice_chars = s.choice_chars;
    rows.push_back(row);
  }
  return rows;
}

std::vector<LoadedTask> load_tasks(const std::vector<std::string>& names,
                                   const std::filesystem::path& data_root, int64_t limit,
                                   const std::map<std::string, int64_t>& task_limits) {
  std::vector<LoadedTask> out;
  for (const std::string& name : names) {
    const TaskSpec& spec = find_task(name);
    const auto own = task_limits.find(name);
    const int64_t task_limit = own == task_limits.end() ? limit : own->second;
    out.push_back({&spec, apply_limit(spec.load(data_root), task_limit), task_limit});
  }
  return out;
}

std::string task_at_length(const std::string& task, int64_t length, int64_t trained_length) {
  return length == trained_length ? task : task + "@" + std::to_string(length);
}

std::string scored_task_name(const std::string& task, const LanguageModel& model) {
  return task_at_length(task, model.max_length(), model.trained_length());
}

TaskAtLength parse_task_at_length(const std::string& name) {
  const size_t at = name.rfind('@');
  if (at == std::string::npos) return {name, 0};
  const std::string digits = name.substr(at + 1);
  if (digits.empty() || digits.size() > 12 || digits.find_first_not_of("0123456789") != std::string::npos) {
    throw UsageError("'" + name + "': expected a task name, or task@N for N tokens");
  }
  return {name.substr(0, at), std::stoll(digits)};
}

bool evaluate_tasks(LanguageModel& model, const TextEncoder& encode,
                    const std::vector<LoadedTask>& tasks, const EvalOptions& options,
                    const TaskDone& done, const std::function<bool()>& stop) {
  for (const LoadedTask& task : tasks) {
    if (stop && stop()) return false;
    const TaskSpec& spec = *task.spec;
    done(task, evaluate_docs(model, encode, scored_task_name(spec.name, model), spec.type,
                             spec.metrics, task.docs, options));
  }
  return true;
}

EvalOptions eval_options(const config::EvalConfig& eval) {
  EvalOptions o;
  o.batch_size = eval.batch_size;
  o.bos = parse_bos_policy(eval.bos);
  return o;
}

TextEncoder text_encoder(const data::TextTokenizer& tokenizer) {
  return [&tokenizer](std::string_view text) {
    std::vector<uint32_t> ids = tokenizer.encode(text);
    return std::vector<int64_t>(ids.begin(), ids.end());
  };
}

}  // namespace attnbench::evals
