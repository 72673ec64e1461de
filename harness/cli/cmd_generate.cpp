// `attnbench generate`: greedy text generation from a checkpoint, one prompt, with lm-evaluation-
// harness's generate_until rules (evals/generate.h, docs/generation.md). The generated text goes to
// stdout, a line of token counts to stderr.
#include <torch/torch.h>

#include <algorithm>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/common/error.h"
#include "evals/decoder_lm_adapter.h"
#include "evals/generate.h"
#include "evals/scored_model.h"
#include "harness/cli/command.h"
#include "harness/cli/runtime.h"

namespace attnbench::cli::cmd_generate {
namespace {

struct Options {
  std::string checkpoint;
  std::string prompt;
  int64_t max_gen_toks = 0;  // 0: not given (default_max_gen_toks)
  std::vector<std::string> until;
  int threads = 0;
  std::string device;  // "" = the checkpoint config's train.device
  std::string data_dir;
};

// The token counts, on stderr; lm-eval keeps only the last `kept` tokens of the prompt
// (context_length - max_gen_toks).
void print_counts(size_t prompt, int64_t kept, size_t generated) {
  const bool truncated = static_cast<int64_t>(prompt) > kept;
  fmt::print(stderr, "{} prompt tokens{}, {} generated\n", prompt,
             truncated ? fmt::format(" (left-truncated to the last {})", kept) : "", generated);
}

// Without --max-gen-toks: lm-eval's 256, but no more than the room the prompt leaves in the
// context, so that the default works on every model (a 256-token default cannot run on a model of
// context 256: lm-eval's max_ctx_len = max_length - max_gen_toks must stay positive). A prompt that
// fills the context leaves half of it to generation, the prompt left-truncated to the rest. A
// default below lm-eval's is said on stderr.
int64_t default_max_gen_toks(int64_t context_length, int64_t prompt_tokens) {
  const int64_t room = context_length - prompt_tokens;
  const int64_t n = std::min(evals::kDefaultMaxGenToks, room >= 1 ? room : context_length / 2);
  if (n < evals::kDefaultMaxGenToks) {
    fmt::print(stderr,
               "note: generating at most {} tokens, {} (lm-eval's default is {}; --max-gen-toks "
               "sets it)\n",
               n,
               room >= 1 ? fmt::format("the room the {}-token prompt leaves in the model's context "
                                       "of {}", prompt_tokens, context_length)
                         : fmt::format("half the model's context of {}, since the {}-token prompt "
                                       "fills it", context_length, prompt_tokens),
               evals::kDefaultMaxGenToks);
  }
  return std::max<int64_t>(n, 1);
}

int run(const Options& o) {
  init_threads(o.threads);
  const evals::ScoredModel scored = evals::load_scored_model(o.checkpoint, o.device, "--device", o.data_dir);
  evals::require_text(scored, "generate");
  const int64_t context_length = scored.model->shape().context_length;
  // lm-eval's max_ctx_len = max_length - max_gen_toks > 0 (generate_until checks it too), named
  // here by the option that sets it, before the tokenizer is read.
  if (o.max_gen_toks > 0 && o.max_gen_toks >= context_length) {
    throw UsageError(fmt::format(
        "--max-gen-toks {}: must be less than the checkpoint's context_length {}, which holds the "
        "context and the generated tokens together",
        o.max_gen_toks, context_length));
  }
  const data::TextTokenizer& tokenizer = scored.tokenizer();

  evals::DecoderLMAdapter lm(scored.model);
  // The prompt is encoded as lm-eval's Hugging Face tokenizer encodes a context: BOS first when
  // the tokenizer adds one (tok_batch_encode with the tokenizer's default).
  std::vector<int64_t> context;
  if (scored.options.bos == evals::BosPolicy::Prepend) context.push_back(scored.options.prefix_token);
  for (uint32_t id : tokenizer.encode(o.prompt)) context.push_back(id);
  const int64_t max_gen_toks = o.max_gen_toks > 0
                                   ? o.max_gen_toks
                                   : default_max_gen_toks(context_length, static_cast<int64_t>(context.size()));
  const evals::GenerationRequest request{context, o.until, max_gen_toks};
  const evals::Generation g = evals::generate_until(lm, tokenizer, request);
  std::cout << g.text << "\n" << std::flush;
  print_counts(request.context.size(), context_length - max_gen_toks, g.tokens.size());
  return 0;
}

RegisterCommand reg(
    "generate", "Greedy text generation from a checkpoint (lm-evaluation-harness's generate_until)",
    [](CLI::App& app) {
      auto o = std::make_shared<Options>();
      app.add_option("--checkpoint", o->checkpoint,
                     "run folder, checkpoint folder or Hugging Face model folder")
          ->required();
      app.add_option("--prompt", o->prompt, "the text to continue")->required();
      app.add_option("--max-gen-toks", o->max_gen_toks,
                     "tokens to generate at most; must be less than the model's context length "
                     "(default: lm-eval's 256, or less: the room the prompt leaves in the context)")
          ->check(int_in(1));
      app.add_option("--until", o->until,
                     "stop string (repeatable); generation also stops at the tokenizer's EOS")
          ->expected(1)
          ->allow_extra_args(false)  // one string per --until: "--until a b" leaves b unexpected
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      app.add_option("--threads", o->threads,
                     "intra-op threads (default: $OMP_NUM_THREADS, else all)")
          ->check(int_in(0, std::numeric_limits<int>::max()));
      app.add_option("--device", o->device,
                     "auto | cpu | cuda (default: the checkpoint config's train.device; cpu for a "
                     "Hugging Face folder)");
      app.add_option("--data-dir", o->data_dir,
                     "data root holding gpt2_tokenizer/, for attnbench's checkpoints (default: "
                     "$ATTNBENCH_DATA)");
      refuse_empty_values(app);
      return [o] { return run(*o); };
    });

}  // namespace
}  // namespace attnbench::cli::cmd_generate
