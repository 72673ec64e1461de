// Greedy generation as lm-evaluation-harness 0.4.x runs a generate_until request on a Hugging Face
// causal model with do_sample = false (HFLM.generate_until and _model_generate, transformers'
// greedy search, lm-eval's MultiTokenEOSCriteria): docs/generation.md. One request at a time, over
// any DecodingState, so that the model's cache and RecomputeDecoding run the very same loop.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/data/text_tokenizer.h"
#include "evals/language_model.h"

namespace attnbench::evals {

// HFLM.max_gen_toks: the tokens generated when a request names no max_gen_toks.
inline constexpr int64_t kDefaultMaxGenToks = 256;

struct GenerationRequest {
  std::vector<int64_t> context;    // the prompt's tokens (lm-eval: the encoded context string)
  std::vector<std::string> until;  // stop strings; the decoded EOS is added (stop_sequences)
  int64_t max_gen_toks = kDefaultMaxGenToks;
};

struct Generation {
  std::vector<int64_t> tokens;  // every generated token, a final end-of-text included
  std::string text;             // the generation decoded and cut before the stop strings
};

// Asked after each generated token with all tokens generated so far; true stops the generation
// (transformers' StoppingCriteria).
using StopCriterion = std::function<bool(const std::vector<int64_t>& generated)>;

// The tokenizer's tokens generation needs: lm-eval's prefix_token_id (an empty context) and the
// EOS token greedy search stops at (GPT-2: end-of-text for both).
struct GenerationTokens {
  int64_t prefix = 0;
  int64_t eos = 0;
};
GenerationTokens generation_tokens(const data::TextTokenizer& tokenizer);  // UsageError: no EOS

// The token loop of transformers' greedy search: `context` left-truncated to max_length -
// max_gen_toks tokens (an empty one becomes the prefix token) and fed once to the fresh `state`,
// then one token per step, the first argmax over the first vocab_size() logits, until
// max_gen_toks tokens, the EOS token or `stop`. UsageError unless 0 < max_gen_toks <
// model.max_length(); std::invalid_argument when `state` has already been fed.
std::vector<int64_t> greedy_tokens(LanguageModel& model, DecodingState& state,
                                   std::vector<int64_t> context, const GenerationTokens& special,
                                   int64_t max_gen_toks, const StopCriterion& stop);

// lm-eval's handle_stop_sequences: `until` with the decoded EOS appended unless present.
std::vector<std::string> stop_sequences(std::vector<std::string> until,
                                        const data::TextTokenizer& tokenizer);

// lm-eval's MultiTokenEOSCriteria for every stop string: stop once the decoded last
// len(encode(term)) + 2 generated tokens contain any of them. `tokenizer` must outlive it.
StopCriterion stop_criterion(const data::TextTokenizer& tokenizer,
                             const std::vector<std::string>& stop);

// lm-eval's post-processing: `for term in until: if term: text = text.split(term)[0]`.
std::string cut_at_stop_sequences(std::string text, const std::vector<std::string>& stop);

// One generate_until request on `state` (fresh; see greedy_tokens), decoded with `tokenizer`.
// UsageError when the model's vocabulary is larger than the tokenizer's, unless the tokenizer
// decodes every id (an imported model's padded vocabulary: transformers generates over it too).
Generation generate_until(LanguageModel& model, DecodingState& state,
                          const data::TextTokenizer& tokenizer, const GenerationRequest& request);

// The same on start_decoding(model): the model's cache, else RecomputeDecoding.
Generation generate_until(LanguageModel& model, const data::TextTokenizer& tokenizer,
                          const GenerationRequest& request);

}  // namespace attnbench::evals
