// `attnbench data`: the group of data commands, and `data prepare` (text/JSONL -> llm.c shards,
// docs/data.md). Other data subcommands register themselves in their own files with
// RegisterCommand("data", "<name>", ...) (e.g. cmd_data_fetch.cpp).
#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/common/output_path.h"
#include "core/data/prepare.h"
#include "core/data/tokenizer.h"
#include "harness/cli/command.h"

namespace attnbench::cli::cmd_data {
namespace {

namespace fs = std::filesystem;

struct PrepareArgs {
  std::vector<std::string> inputs;
  std::string out, name, text_field = "text", data_dir, tokenizer;
  int64_t val_tokens = 1'000'000, shard_tokens = 100'000'000;
  int jobs = 0;
  bool skip_bad = false, force = false;
};

std::string mb(uint64_t bytes) { return fmt::format("{:.1f} MB", bytes / 1e6); }

// A live bar on a terminal; otherwise a plain line at most every 10 seconds (logs stay readable).
class ProgressPrinter {
 public:
  ProgressPrinter() : tty_(::isatty(STDERR_FILENO) == 1) {}
  void operator()(const data::PrepareProgress& p) {
    double rate = p.seconds > 0 ? p.bytes_done / 1e6 / p.seconds : 0;
    double frac = p.bytes_total ? static_cast<double>(p.bytes_done) / p.bytes_total : 1;
    std::string counts = fmt::format("{}/{} {:.1f} MB/s, {} documents, {} tokens",
                                     mb(p.bytes_done), mb(p.bytes_total), rate, p.documents,
                                     p.tokens);
    if (tty_) {
      constexpr int kWidth = 30;
      int filled = static_cast<int>(frac * kWidth);
      std::string bar = std::string(filled, '#') + std::string(kWidth - filled, '.');
      fmt::print(stderr, "\r[{}] {:3.0f}% {}\x1b[K", bar, frac * 100, counts);
      if (p.finished) fmt::print(stderr, "\n");
    } else if (p.finished || p.seconds - last_ >= 10) {
      last_ = p.seconds;
      fmt::print(stderr, "data prepare: {:.0f}% {} ({:.0f} s)\n", frac * 100, counts, p.seconds);
    }
    std::fflush(stderr);
  }

 private:
  bool tty_;
  double last_ = -1e9;
};

int prepare(const PrepareArgs& a) {
  data::PrepareOptions o;
  for (const auto& i : a.inputs) o.inputs.emplace_back(i);
  o.out = a.out;
  o.name = a.name;
  o.tokenizer_dir = a.tokenizer.empty() ? data::gpt2_tokenizer_dir(a.data_dir) : fs::path(a.tokenizer);
  o.val_tokens = a.val_tokens;
  o.shard_tokens = a.shard_tokens;
  o.text_field = a.text_field;
  o.jobs = cap_to_cores(a.jobs, "--jobs");
  o.skip_bad = a.skip_bad;
  o.force = a.force;
  o.created_by = fmt::format("attnbench {} data prepare", ATTNBENCH_VERSION);
  o.progress = ProgressPrinter();
  std::vector<NamedPath> inputs = {{"the tokenizer file", o.tokenizer_dir / "encoder.json"},
                                   {"the tokenizer file", o.tokenizer_dir / "vocab.bpe"},
                                   {"the tokenizer file", o.tokenizer_dir / "tokenizer.json"}};
  for (const auto& i : a.inputs) inputs.push_back({"--input", i});
  refuse_output_over_inputs({"--out", a.out}, inputs);
  data::PrepareSummary s = data::prepare_shards(o);

  for (const auto& e : s.skipped_examples) fmt::print(stderr, "skipped: {}\n", e);
  if (s.skipped > static_cast<int64_t>(s.skipped_examples.size()))
    fmt::print(stderr, "skipped: ... {} more\n", s.skipped - static_cast<int64_t>(s.skipped_examples.size()));
  int64_t train_shards = 0;
  for (const auto& sh : s.shards) train_shards += sh.split == "train";
  fmt::print("data prepare: {} documents, {} tokens in {:.1f} s ({:.1f} MB/s) -> {}\n", s.documents,
             s.tokens, s.seconds, s.bytes / 1e6 / std::max(s.seconds, 1e-9), a.out);
  fmt::print("  val: {} documents, {} tokens; train: {} documents, {} tokens in {} shard(s)\n",
             s.val_documents, s.val_tokens, s.train_documents, s.train_tokens, train_shards);
  if (s.skipped) fmt::print("  skipped {} malformed line(s) (--skip-bad)\n", s.skipped);
  return 0;
}

RegisterCommand reg_data("data", "Prepare token shards from text (prepare), download data (fetch)",
                         [](CLI::App& app) {
                           app.require_subcommand(1);
                           return Action();  // a group: its subcommands act
                         });

RegisterCommand reg_prepare(
    "data", "prepare", "Tokenize .txt/.jsonl(.gz/.zst) files into llm.c shards with a manifest",
    [](CLI::App& app) {
      auto a = std::make_shared<PrepareArgs>();
      app.add_option("--input,-i", a->inputs,
                     ".txt (one document per file) or .jsonl files, optionally .gz/.zst")
          ->required()
          ->expected(1, -1);
      app.add_option("--out,-o", a->out, "output folder (written atomically)")->required();
      app.add_option("--name", a->name, "shard name prefix (default: the --out folder's name)");
      app.add_option("--val-tokens", a->val_tokens,
                     "validation split: the first documents, until this many tokens")
          ->check(int_in(0, INT32_MAX))  // llm.c headers hold an int32 count
          ->capture_default_str();
      app.add_option("--shard-tokens", a->shard_tokens, "tokens per train shard")
          ->check(int_in(1, INT32_MAX))
          ->capture_default_str();
      app.add_option("--text-field", a->text_field, "JSONL field holding the text")->capture_default_str();
      app.add_option("--jobs,-j", a->jobs, "tokenizer threads (default: all cores)")
          ->check(int_in(0, std::numeric_limits<int>::max()));
      app.add_flag("--skip-bad", a->skip_bad, "skip malformed JSONL lines (counted) instead of stopping");
      app.add_flag("--force", a->force, "replace a non-empty --out folder");
      app.add_option("--data-dir", a->data_dir,
                     "data root holding gpt2_tokenizer/ (default: $ATTNBENCH_DATA, else ./data)");
      app.add_option("--tokenizer", a->tokenizer,
                     "folder with GPT-2's encoder.json and vocab.bpe, or a model folder's "
                     "tokenizer.json (for model.init_from)");
      refuse_empty_values(app);
      return [a] { return prepare(*a); };
    });

}  // namespace
}  // namespace attnbench::cli::cmd_data
