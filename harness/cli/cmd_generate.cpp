// `attnbench generate`: greedy text generation from a checkpoint, one prompt, with lm-evaluation-
// harness's generate_until rules (evals/generate.h, docs/generation.md). The generated text goes to
// stdout, a line of token counts to stderr.
#include <torch/torch.h>

#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/data/tokenizer.h"
#include "evals/decoder_lm_adapter.h"
#include "evals/generate.h"
#include "harness/cli/command.h"
#include "harness/cli/runtime.h"
#include "harness/cli/standalone_run.h"
#include "model/checkpoint_model.h"

namespace attnbench::cli::cmd_generate {
namespace {

struct Options {
  std::string checkpoint;
  std::string prompt;
  int64_t max_gen_toks = evals::kDefaultMaxGenToks;
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

int run(const Options& o) {
  init_threads(o.threads);
  model::LoadedModel loaded = model::load_model(o.checkpoint, o.device, "--device");
  require_gpt2_vocabulary(loaded.cfg.model, "generate");
  // lm-eval's max_ctx_len = max_length - max_gen_toks > 0 (generate_until checks it too), named
  // here by the option that sets it, before the tokenizer is read.
  if (o.max_gen_toks >= loaded.cfg.model.context_length) {
    throw UsageError(fmt::format(
        "--max-gen-toks {}: must be less than the checkpoint's context_length {}, which holds the "
        "context and the generated tokens together",
        o.max_gen_toks, loaded.cfg.model.context_length));
  }
  const data::Tokenizer tokenizer = data::Tokenizer::load(data::gpt2_tokenizer_dir(o.data_dir));

  evals::DecoderLMAdapter lm(loaded.model, loaded.cfg.model);
  // The prompt is encoded as lm-eval's Hugging Face tokenizer encodes a context.
  const evals::GenerationRequest request{evals::encode_with_special(tokenizer, o.prompt), o.until,
                                         o.max_gen_toks};
  const evals::Generation g = evals::generate_until(lm, tokenizer, request);
  std::cout << g.text << "\n" << std::flush;
  print_counts(request.context.size(), loaded.cfg.model.context_length - o.max_gen_toks,
               g.tokens.size());
  return 0;
}

RegisterCommand reg(
    "generate", "Greedy text generation from a checkpoint (lm-evaluation-harness's generate_until)",
    [](CLI::App& app) {
      auto o = std::make_shared<Options>();
      app.add_option("--checkpoint", o->checkpoint, "run folder or checkpoint folder")->required();
      app.add_option("--prompt", o->prompt, "the text to continue")->required();
      app.add_option("--max-gen-toks", o->max_gen_toks,
                     "tokens to generate at most (lm-eval's default 256); must be less than the "
                     "model's context length")
          ->check(int_in(1));
      app.add_option("--until", o->until,
                     "stop string (repeatable); generation also stops at end-of-text")
          ->expected(1)
          ->allow_extra_args(false)  // one string per --until: "--until a b" leaves b unexpected
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      app.add_option("--threads", o->threads,
                     "intra-op threads (default: $OMP_NUM_THREADS, else all)")
          ->check(int_in(0, std::numeric_limits<int>::max()));
      app.add_option("--device", o->device,
                     "auto | cpu | cuda (default: the checkpoint config's train.device)");
      app.add_option("--data-dir", o->data_dir,
                     "data root holding gpt2_tokenizer/ (default: $ATTNBENCH_DATA)");
      refuse_empty_values(app);
      return [o] { return run(*o); };
    });

}  // namespace
}  // namespace attnbench::cli::cmd_generate
