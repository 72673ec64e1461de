#include "evals/encode_pair.h"

#include <algorithm>
#include <stdexcept>

#include "core/common/error.h"
#include "evals/text_units.h"

namespace attnbench::evals {

BosPolicy parse_bos_policy(const std::string& text) {
  if (text == "none") return BosPolicy::None;
  if (text == "prepend") return BosPolicy::Prepend;
  throw UsageError("unknown BOS policy '" + text + "': expected none or prepend" +
                   did_you_mean(text, {"none", "prepend"}));
}

const char* to_string(BosPolicy policy) {
  return policy == BosPolicy::Prepend ? "prepend" : "none";
}

TokenPair encode_pair(const std::string& context, const std::string& continuation,
                      const TextEncoder& encode, BosPolicy bos, int64_t prefix_token) {
  TokenPair out;
  if (context.empty()) {
    // TemplateLM.loglikelihood: an empty context is replaced by the prefix token, unless the
    // continuation already begins with it (then that token is the context).
    out.continuation = encode(continuation);
    if (!out.continuation.empty() && out.continuation.front() == prefix_token) {
      out.context = {prefix_token};
      out.continuation.erase(out.continuation.begin());
    } else {
      out.context = {prefix_token};
    }
    return out;
  }
  // n_spaces = len(context) - len(context.rstrip()): Python strips Unicode whitespace.
  size_t end = rstrip_length(context);
  std::string ctx = context.substr(0, end);
  std::string cont = context.substr(end) + continuation;

  std::vector<int64_t> whole = encode(ctx + cont);
  std::vector<int64_t> ctx_enc = encode(ctx);
  if (ctx_enc.size() > whole.size()) {
    throw std::runtime_error("encode_pair: the context alone encodes to more tokens than context + "
                             "continuation; the tokenizer is not prefix-stable here");
  }
  out.continuation.assign(whole.begin() + static_cast<std::ptrdiff_t>(ctx_enc.size()), whole.end());
  if (bos == BosPolicy::Prepend) out.context.push_back(prefix_token);
  out.context.insert(out.context.end(), ctx_enc.begin(), ctx_enc.end());
  return out;
}

}  // namespace attnbench::evals
