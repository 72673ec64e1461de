#include "evals/evaluator.h"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "core/data/tokenizer.h"
#include "evals/progress.h"
#include "evals/rolling_windows.h"

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
    if (type == OutputType::LoglikelihoodRolling) {
      out.push_back({task, doc.index, 0, "", doc.text});
      continue;
    }
    for (size_t j = 0; j < doc.requests.size(); ++j) {
      out.push_back({task, doc.index, static_cast<int64_t>(j), doc.requests[j].context,
                     doc.requests[j].continuation});
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

std::optional<double> stderr_or_none(double v) {
  if (std::isnan(v)) return std::nullopt;
  return v;
}

}  // namespace

TaskReport evaluate_docs(LanguageModel& model, const TextEncoder& encode, const std::string& task,
                         OutputType type, const std::vector<std::string>& metrics,
                         const std::vector<Doc>& docs, const EvalOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  TaskReport report;
  report.task = task;
  report.n = static_cast<int64_t>(docs.size());
  if (docs.empty()) throw std::runtime_error("task " + task + " has no documents to score");

  // 1. Requests -> tokens.
  std::vector<TokenRequest> requests;
  std::vector<Origin> origin;
  TextEncoder cached = memoize_last(encode);
  for (size_t d = 0; d < docs.size(); ++d) {
    const Doc& doc = docs[d];
    if (type == OutputType::LoglikelihoodRolling) {
      // HFLM.loglikelihood_rolling: windows over encode(text), prefix = end-of-text, context_len 1.
      std::vector<int64_t> tokens = encode(doc.text);
      auto windows = rolling_token_windows(tokens, kEndOfText, model.max_length(), 1);
      for (size_t w = 0; w < windows.size(); ++w) {
        TokenWindow disjoint = make_disjoint_window(windows[w]);
        requests.push_back({std::move(disjoint.input), std::move(disjoint.predicted)});
        origin.push_back({d, w});
      }
      continue;
    }
    if (doc.requests.empty()) {
      throw std::runtime_error("task " + task + ": document " + std::to_string(doc.index) +
                               " has no requests");
    }
    for (size_t j = 0; j < doc.requests.size(); ++j) {
      TokenPair pair = encode_pair(doc.requests[j].context, doc.requests[j].continuation, cached,
                                   options.bos);
      requests.push_back({std::move(pair.context), std::move(pair.continuation)});
      origin.push_back({d, j});
    }
  }
  report.requests = static_cast<int64_t>(requests.size());

  // 2. The model.
  ProgressBar bar(options.progress, is_terminal(options.progress));
  bar.start(task, report.requests, report.n);
  std::vector<Loglikelihood> lls =
      compute_loglikelihoods(model, requests, options.batch_size, &bar, &report.forward);
  bar.finish();

  // 3. Per-document results, in document order.
  std::vector<std::vector<size_t>> of_doc(docs.size());
  for (size_t r = 0; r < origin.size(); ++r) of_doc[origin[r].doc].push_back(r);

  std::vector<double> acc, acc_norm, greedy, logprob;
  std::vector<WeightedLoglikelihood> per_word, per_byte;
  for (size_t d = 0; d < docs.size(); ++d) {
    const Doc& doc = docs[d];
    switch (type) {
      case OutputType::MultipleChoice: {
        std::vector<double> choice_lls;
        for (size_t r : of_doc[d]) choice_lls.push_back(lls[r].logprob);
        // acc_norm needs the choice strings; tasks reporting only acc (winogrande) may omit them.
        std::vector<std::string> choices = doc.choices;
        if (choices.size() != choice_lls.size()) {
          if (!doc.choices.empty()) {
            throw std::runtime_error("task " + task + ": document " + std::to_string(doc.index) +
                                     " has " + std::to_string(doc.choices.size()) +
                                     " choices but " + std::to_string(choice_lls.size()) +
                                     " requests");
          }
          choices.assign(choice_lls.size(), "x");
        }
        if (doc.gold < 0 || static_cast<size_t>(doc.gold) >= choice_lls.size()) {
          throw std::runtime_error("task " + task + ": document " + std::to_string(doc.index) +
                                   " has gold " + std::to_string(doc.gold) + " outside its " +
                                   std::to_string(choice_lls.size()) + " choices");
        }
        MultipleChoiceOutcome o = score_multiple_choice(choice_lls, choices, doc.gold);
        acc.push_back(o.acc);
        acc_norm.push_back(doc.choices.empty() ? std::nan("") : o.acc_norm);
        break;
      }
      case OutputType::Loglikelihood: {
        const Loglikelihood& ll = lls[of_doc[d].at(0)];
        greedy.push_back(ll.is_greedy ? 1.0 : 0.0);
        logprob.push_back(ll.logprob);
        break;
      }
      case OutputType::LoglikelihoodRolling: {
        // Words and bytes of the original page (Doc::word_count, byte_count), as lm-eval counts.
        if (doc.word_count <= 0 || doc.byte_count <= 0) {
          throw std::runtime_error("task " + task + ": document " + std::to_string(doc.index) +
                                   " lacks its word and byte counts");
        }
        double sum = 0;
        for (size_t r : of_doc[d]) sum += lls[r].logprob;
        per_word.push_back({sum, static_cast<double>(doc.word_count)});
        per_byte.push_back({sum, static_cast<double>(doc.byte_count)});
        break;
      }
    }
    if (options.log_samples) {
      for (size_t r : of_doc[d]) {
        const bool gold = type != OutputType::MultipleChoice ||
                          static_cast<int>(origin[r].request) == doc.gold;
        report.samples.push_back({doc.index, static_cast<int64_t>(origin[r].request),
                                  lls[r].logprob, lls[r].is_greedy, gold,
                                  static_cast<int64_t>(requests[r].continuation.size())});
      }
    }
  }

  // 4. Aggregation, as lm-eval's evaluator does it for each metric.
  for (const std::string& name : metrics) {
    MetricValue m;
    m.name = name;
    if (type == OutputType::MultipleChoice && (name == "acc" || name == "acc_norm")) {
      const auto& items = name == "acc" ? acc : acc_norm;
      if (name == "acc_norm" && std::isnan(items.front())) {
        throw std::runtime_error("task " + task + " reports acc_norm but its documents carry no "
                                 "choice strings");
      }
      m.value = mean(items);
      m.std_error = stderr_or_none(mean_stderr(items));
    } else if (type == OutputType::Loglikelihood && name == "acc") {
      m.value = mean(greedy);
      m.std_error = stderr_or_none(mean_stderr(greedy));
    } else if (type == OutputType::Loglikelihood && name == "perplexity") {
      m.value = perplexity(logprob);
      m.std_error = stderr_or_none(bootstrap_stderr(
          [](const std::vector<double>& xs) { return perplexity(xs); }, logprob,
          options.bootstrap_iters));
    } else if (type == OutputType::LoglikelihoodRolling && name == "word_perplexity") {
      m.value = weighted_perplexity(per_word);  // no stderr: lm-eval has none for weighted ones
    } else if (type == OutputType::LoglikelihoodRolling && name == "byte_perplexity") {
      m.value = weighted_perplexity(per_byte);
    } else if (type == OutputType::LoglikelihoodRolling && name == "bits_per_byte") {
      m.value = bits_per_byte(per_byte);
    } else {
      throw std::logic_error("task " + task + ": metric '" + name +
                             "' is not defined for its output type");
    }
    report.metrics.push_back(m);
  }
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

EvalReport evaluate(LanguageModel& model, const TextEncoder& encode,
                    const std::vector<std::string>& tasks, const EvalOptions& options) {
  EvalReport report;
  report.bos = options.bos;
  report.limit = options.limit;
  for (const std::string& name : tasks) {
    const TaskSpec& spec = find_task(name);
    std::vector<Doc> docs = apply_limit(spec.load(options.data_root), options.limit);
    report.tasks.push_back(
        evaluate_docs(model, encode, spec.name, spec.type, spec.metrics, docs, options));
  }
  return report;
}

TextEncoder text_encoder(const data::Tokenizer& tokenizer) {
  return [&tokenizer](std::string_view text) {
    std::vector<uint32_t> ids = tokenizer.encode(text);
    return std::vector<int64_t>(ids.begin(), ids.end());
  };
}

EvalReport evaluate(LanguageModel& model, const data::Tokenizer& tokenizer,
                    const std::vector<std::string>& tasks, const EvalOptions& options) {
  return evaluate(model, text_encoder(tokenizer), tasks, options);
}

}  // namespace attnbench::evals
