// The loglikelihood_rolling output type (WikiText): the whole document in rolling windows.
#include "evals/metrics.h"
#include "evals/rolling_windows.h"
#include "evals/scorer.h"

namespace attnbench::evals {

std::vector<TokenRequest> rolling_requests(const std::string& text, const TextEncoder& encode,
                                           int64_t max_length, int64_t prefix_token) {
  std::vector<int64_t> tokens = encode(text);
  std::vector<TokenRequest> out;
  for (const TokenWindow& window : rolling_token_windows(tokens, prefix_token, max_length, 1)) {
    TokenWindow disjoint = make_disjoint_window(window);
    out.push_back({std::move(disjoint.input), std::move(disjoint.predicted)});
  }
  return out;
}

std::vector<MetricValue> score_rolling_task(const ScoringInput& in) {
  // process_results: the document's log-likelihood (the sum over its windows) weighted by its
  // words and bytes, counted on the original page (Doc::word_count, byte_count) as lm-eval does.
  std::vector<WeightedLoglikelihood> per_word, per_byte;
  for (size_t d = 0; d < in.docs.size(); ++d) {
    const Doc& doc = in.docs[d];
    if (doc.word_count <= 0 || doc.byte_count <= 0) {
      throw document_error(in.task, doc, "lacks its word and byte counts");
    }
    double sum = 0;
    for (const Loglikelihood& ll : in.doc_lls[d]) sum += ll.logprob;
    per_word.push_back({sum, static_cast<double>(doc.word_count)});
    per_byte.push_back({sum, static_cast<double>(doc.byte_count)});
  }
  // No stderr: lm-eval has none for the weighted aggregations.
  std::vector<MetricValue> out;
  for (const std::string& name : in.metrics) {
    if (name == "word_perplexity") {
      out.push_back({name, weighted_perplexity(per_word), std::nullopt});
    } else if (name == "byte_perplexity") {
      out.push_back({name, weighted_perplexity(per_byte), std::nullopt});
    } else if (name == "bits_per_byte") {
      out.push_back({name, bits_per_byte(per_byte), std::nullopt});
    } else {
      throw_undefined_metric(in.task, name);
    }
  }
  return out;
}

}  // namespace attnbench::evals
