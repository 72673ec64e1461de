// The rows a run records (docs/results.md, "Schema"): its flattened config, training metrics,
// evaluation metrics, attention statistics and scored requests. What training and evaluation
// produce, apart from the store that keeps them (results/store.h), so that their producers need
// not include it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace attnbench::results {

// One entry of the flattened resolved config (config::flatten): "attention.variant" = "lazy".
struct Param {
  std::string key;
  std::string value;  // TOML spelling without quotes: true, 3, 0.5, lazy (config::to_string)
  std::string type;   // bool | int | float | string (config::type_name)
};

// A training-curve point: loss, val_loss, lr, tokens_per_s, grad_norm, ...
struct Metric {
  std::string key;
  int64_t step = 0;
  double value = 0;
  double time = 0;  // wall clock, Unix seconds; 0 = now
};

// One eval metric of one task, as lm-evaluation-harness reports it (docs/evaluation.md).
struct EvalRow {
  std::string task;    // piqa, hellaswag, ..., lambada_openai, wikitext
  std::string metric;  // acc, acc_norm, perplexity, word_perplexity, byte_perplexity, bits_per_byte
  double value = 0;    // accuracies as fractions in [0, 1], as lm-eval stores them
  std::optional<double> std_error;  // lm-eval's *_stderr; nullopt where it reports none
  int64_t n = 0;                    // items scored
  int64_t limit = 0;                // --limit used (0 = every item)
  std::string protocol_version;     // version of our lm-eval protocol implementation
  std::string bos;                  // BOS policy: none | prepend
};

// A diagnostic of one layer and head (evals/diagnostics).
struct AttnStat {
  int64_t layer = 0;
  int64_t head = -1;   // -1 = the layer as a whole
  std::string stat;    // sink_mass, sparsity, entropy, tau, distance_bias, ...
  int64_t index = -1;  // position in a profile (distance_bias[r]); -1 for scalars
  double value = 0;
  // A variant's learned statistic (variants/variant.h, learned()); false for what diagnostics
  // measure on the attention weights and hidden states. The report draws each kind apart.
  bool learned = false;
};

// How a run's measured attention statistics were measured (schema version 4): two runs' sink masses
// compare only when they were measured alike. The identity is (window, tokens, text); `detail`
// says more for people (which part of the text, in whose tokens).
struct AttnMeasurement {
  int64_t window = 0;  // tokens per window
  int64_t tokens = 0;  // tokens measured (whole windows)
  std::string text;    // the text read: a shard's or a text file's name ("val.bin", "essay.txt")
  std::string detail;  // e.g. "val.bin (first 8192 of 120000 tokens)"
  bool same_as(const AttnMeasurement& o) const {
    return window == o.window && tokens == o.tokens && text == o.text;
  }
  // "windows of 128 tokens, 8192 tokens of val.bin"
  std::string describe() const;
};
// How statistics stored before schema version 4 (which recorded no measurement) were measured.
constexpr const char* kUnrecordedMeasurement = "an unrecorded measurement";

// An evaluation's item limit for people: "limit 50", or "every item" for 0.
std::string item_limit_text(int64_t limit);
// What an evaluation row measured, beside its value (the task name carries its context, task@N):
// "limit 50, protocol P, bos none". Two rows of one (run, task, metric) with another identity are
// two measurements, not a correction of one.
std::string eval_identity(int64_t limit, const std::string& protocol, const std::string& bos);

// One scored request of one eval item (--log-samples).
struct Sample {
  std::string task;
  int64_t doc = 0;      // item index in the task's file
  int64_t request = 0;  // choice index (multiple choice) or window index (rolling perplexity)
  double loglikelihood = 0;
  bool is_greedy = false;  // continuation is the argmax at every token
  bool is_gold = false;    // this choice is the correct answer
  int64_t tokens = 0;      // continuation tokens scored
  // Multiple choice: the choice's length in code points, lm-eval's acc_norm denominator, so that
  // acc_norm can be tested over items (results/compare.h); unset otherwise and in rows stored
  // before schema version 3.
  std::optional<int64_t> choice_chars = std::nullopt;
};

}  // namespace attnbench::results
