// lm-evaluation-harness's token boundary between context and continuation (docs/evaluation.md,
// "The protocol as implemented": TemplateLM._encode_pair and TemplateLM.loglikelihood), plus
// attnbench's BOS policy (docs/evaluation.md, "BOS policy").
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace attnbench::evals {

// GPT-2's end-of-text token: lm-eval's prefix_token_id for GPT-2 (no BOS, so EOS is used).
constexpr int64_t kEndOfText = 50256;

// Text -> token ids (the GPT-2 tokenizer in production, a stub in tests).
using TextEncoder = std::function<std::vector<int64_t>(std::string_view)>;

// What precedes every context. lm-eval <= 0.4.8 never added BOS for GPT-2; since 0.4.9.2 it uses
// the tokenizer's default, which for GPT-2 is still no BOS. `Prepend` models a BOS-adding
// tokenizer by putting kEndOfText in front of every context. Recorded with every result.
enum class BosPolicy { None, Prepend };
BosPolicy parse_bos_policy(const std::string& text);  // "none" | "prepend"; UsageError otherwise
const char* to_string(BosPolicy policy);

struct TokenPair {
  std::vector<int64_t> context;
  std::vector<int64_t> continuation;
};

// lm-eval's encoding of one (context, continuation) request:
//   - empty context: context = [prefix token], continuation = encode(cont); when the continuation
//     already starts with the prefix token, that token becomes the context instead;
//   - otherwise trailing whitespace of the context moves to the front of the continuation, then
//     whole = encode(ctx + cont), ctx_enc = encode(ctx), cont_enc = whole[len(ctx_enc):],
//     so a BPE merge across the boundary lands in the continuation.
// With BosPolicy::Prepend the prefix token is put in front of every non-empty context too.
TokenPair encode_pair(const std::string& context, const std::string& continuation,
                      const TextEncoder& encode, BosPolicy bos = BosPolicy::None,
                      int64_t prefix_token = kEndOfText);

}  // namespace attnbench::evals
