#include "evals/generate.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "core/common/error.h"
#include "evals/decoding.h"

namespace attnbench::evals {

namespace {

std::string decode(const data::TextTokenizer& tokenizer, std::vector<int64_t>::const_iterator begin,
                   std::vector<int64_t>::const_iterator end) {
  return tokenizer.decode(std::vector<uint32_t>(begin, end));
}


// lm-eval's max_ctx_len = max_length - max_gen_toks, asserted > 0 (HFLM.generate_until).
int64_t max_context_length(int64_t max_length, int64_t max_gen_toks) {
  if (max_gen_toks < 1 || max_gen_toks >= max_length) {
    throw UsageError(fmt::format(
        "max_gen_toks = {}: expected at least 1 and less than the model's max_length {} (its "
        "context_length), to leave room for the context (lm-eval: max_ctx_len = max_length - "
        "max_gen_toks > 0)",
        max_gen_toks, max_length));
  }
  return max_length - max_gen_toks;
}

// tokens as one row [1, S] and the position of its last token, (0, S - 1).
std::pair<torch::Tensor, torch::Tensor> last_of_row(const std::vector<int64_t>& tokens) {
  const auto n = static_cast<int64_t>(tokens.size());
  return {torch::tensor(tokens, torch::kInt64).view({1, n}),
          torch::tensor({int64_t{0}, n - 1}, torch::kInt64).view({1, 2})};
}

torch::Tensor feed_row(DecodingState& state, const std::vector<int64_t>& tokens) {
  auto [row, last] = last_of_row(tokens);
  return state.feed(row, last);
}

// Greedy search's torch.argmax, over the real vocabulary only (padding columns never win); it
// returns the first of equal maxima.
int64_t greedy_token(const torch::Tensor& logits, int64_t vocab_size) {
  return logits.narrow(-1, 0, vocab_size).argmax(-1).item<int64_t>();
}
}  // namespace

std::vector<int64_t> greedy_tokens(LanguageModel& model, DecodingState& state,
                                   std::vector<int64_t> context, const GenerationTokens& special,
                                   int64_t max_gen_toks, const StopCriterion& stop) {
  const int64_t max_ctx_len = max_context_length(model.max_length(), max_gen_toks);
  if (state.length() != 0) {
    throw std::invalid_argument(fmt::format(
        "greedy_tokens: the decoding state already holds {} tokens; generation starts fresh",
        state.length()));
  }
  // lm-eval has no rule for an empty context; its log-likelihoods use the prefix token then.
  if (context.empty()) context.push_back(special.prefix);
  // tok_batch_encode(left_truncate_len = max_ctx_len): input_ids[:, -max_ctx_len:].
  if (static_cast<int64_t>(context.size()) > max_ctx_len) {
    context.erase(context.begin(), context.end() - max_ctx_len);
  }
  std::vector<int64_t> generated;
  torch::Tensor logits = feed_row(state, context);
  // transformers stops after the token that reaches max_length (= context + max_gen_toks), is the
  // model's eos_token_id, or satisfies a stopping criterion; that token is kept.
  while (true) {
    generated.push_back(greedy_token(logits, model.vocab_size()));
    if (static_cast<int64_t>(generated.size()) == max_gen_toks || generated.back() == special.eos ||
        stop(generated)) {
      return generated;
    }
    logits = feed_row(state, {generated.back()});
  }
}

GenerationTokens generation_tokens(const data::TextTokenizer& tokenizer) {
  GenerationTokens t;
  t.prefix = tokenizer.prefix_id();
  const auto eos = tokenizer.eos_id();
  if (!eos) throw UsageError("generate: the tokenizer has no EOS token to stop at");
  t.eos = *eos;
  return t;
}

std::vector<std::string> stop_sequences(std::vector<std::string> until,
                                        const data::TextTokenizer& tokenizer) {
  const auto eos_id = tokenizer.eos_id();
  const std::string eos = eos_id ? tokenizer.decode({*eos_id}) : std::string();
  if (eos_id && std::find(until.begin(), until.end(), eos) == until.end()) until.push_back(eos);
  return until;
}

StopCriterion stop_criterion(const data::TextTokenizer& tokenizer,
                             const std::vector<std::string>& stop) {
  // MultiTokenEOSCriteria: sequence_id_len = len(tokenizer.encode(sequence)) + 2, and the window
  // never reaches back into the context. batch_decode keeps special tokens: end-of-text decodes
  // to "<|endoftext|>". An empty stop string is in every window: it stops after one token.
  std::vector<std::pair<std::string, size_t>> windows;
  for (const auto& term : stop) windows.emplace_back(term, tokenizer.encode(term).size() + 2);
  return [&tokenizer, windows](const std::vector<int64_t>& generated) {
    for (const auto& [term, lookback] : windows) {
      const size_t n = std::min(lookback, generated.size());
      if (decode(tokenizer, generated.end() - n, generated.end()).find(term) != std::string::npos) {
        return true;
      }
    }
    return false;
  };
}

std::string cut_at_stop_sequences(std::string text, const std::vector<std::string>& stop) {
  // In order, each on what the previous ones left (postprocess_generated_text).
  for (const auto& term : stop) {
    if (!term.empty()) text.resize(std::min(text.find(term), text.size()));
  }
  return text;
}

Generation generate_until(LanguageModel& model, DecodingState& state,
                          const data::TextTokenizer& tokenizer, const GenerationRequest& request) {
  if (model.vocab_size() > static_cast<int64_t>(tokenizer.vocab_size()) &&
      !tokenizer.decodes_every_id()) {
    throw UsageError(fmt::format("generate: the model's vocabulary ({} tokens) is larger than the "
                                 "tokenizer's ({}); its extra tokens could not be decoded",
                                 model.vocab_size(), tokenizer.vocab_size()));
  }
  const std::vector<std::string> stop = stop_sequences(request.until, tokenizer);
  Generation out;
  out.tokens = greedy_tokens(model, state, request.context, generation_tokens(tokenizer),
                             request.max_gen_toks, stop_criterion(tokenizer, stop));
  // HFLM.tok_decode skips special tokens: the end-of-text token adds no text.
  out.text = cut_at_stop_sequences(
      tokenizer.decode_text(std::vector<uint32_t>(out.tokens.begin(), out.tokens.end())), stop);
  return out;
}

Generation generate_until(LanguageModel& model, const data::TextTokenizer& tokenizer,
                          const GenerationRequest& request) {
  std::unique_ptr<DecodingState> state = start_decoding(model);
  return generate_until(model, *state, tokenizer, request);
}

}  // namespace attnbench::evals
