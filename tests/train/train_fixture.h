// Shared helpers of the training tests: a scratch folder and a synthetic copy task written as llm.c
// shards with data::write_shard (the tests make their own data; no tokenizer needed).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/config/run_config.h"
#include "core/data/shard.h"

namespace attnbench::test {

// A fresh folder under the system temp dir, removed when the object goes.
class ScratchDir {
 public:
  ScratchDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "attnbench-train-XXXXXX").string();
    path_ = ::mkdtemp(templ.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The copy task. Token 0 is end-of-text, 1 a separator, 2..(2 + symbols) the symbols. Each document
//   EOT x_1 .. x_L SEP x_1 .. x_L
// repeats L random symbols. The copy half is predictable by attending L + 1 tokens back, so a model
// that learns it reaches a loss near the entropy floor of the random half:
//   floor = (L * ln(symbols)) / (2L + 2) nats per token
// (every other token of the document is determined by position or by the copy).
struct CopyTask {
  int64_t length = 8;    // L
  int64_t symbols = 16;  // alphabet size
  int64_t vocab() const { return symbols + 2; }
  double floor_loss() const {
    return static_cast<double>(length) * std::log(static_cast<double>(symbols)) /
           static_cast<double>(2 * length + 2);
  }
  // A no-copy model can at best predict the symbol distribution everywhere except the separators:
  //   (2L * ln(symbols)) / (2L + 2).
  double unigram_loss() const { return 2.0 * floor_loss(); }

  std::vector<uint32_t> documents(int64_t n_docs, uint32_t seed) const {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<uint32_t> sym(2, static_cast<uint32_t>(symbols + 1));
    std::vector<uint32_t> out;
    for (int64_t d = 0; d < n_docs; ++d) {
      std::vector<uint32_t> x(static_cast<size_t>(length));
      for (auto& t : x) t = sym(rng);
      out.push_back(0);
      out.insert(out.end(), x.begin(), x.end());
      out.push_back(1);
      out.insert(out.end(), x.begin(), x.end());
    }
    return out;
  }

  // train.bin and val.bin in `dir` (different seeds: validation is on unseen documents).
  void write(const std::filesystem::path& dir, int64_t train_docs = 4000, int64_t val_docs = 200) const {
    data::write_shard(dir / "train.bin", documents(train_docs, 1));
    data::write_shard(dir / "val.bin", documents(val_docs, 2));
  }
};

// A tiny run on the copy task in `dir`; `sets` override keys as `--set` does. The eager attention
// backend keeps these tests about training, independent of the fused kernels (tested in kernels/).
inline config::RunConfig copy_task_config(const std::filesystem::path& dir, const CopyTask& task,
                                          const std::string& variant,
                                          const std::vector<std::string>& sets = {}) {
  std::string toml =
      "[model]\npreset = \"tiny\"\nvocab_size = " + std::to_string(task.vocab()) +
      "\ncontext_length = 64\n"
      "\n[attention]\nvariant = \"" + variant + "\"\nbackend = \"eager\"\n"
      "\n[data]\ntrain = \"" + (dir / "train.bin").string() + "\"\nval = \"" +
      (dir / "val.bin").string() + "\"\nfixed_token_id = 0\n"
      "\n[train]\nseed = 0\nsteps = 20\nbatch_size = 8\nlr = 3e-3\nwarmup_steps = 5\n"
      "eval_interval = 0\neval_tokens = 2048\ncheckpoint_interval = 1000\nlog_interval = 10\n"
      "threads = 1\n";
  return config::parse_run_config(toml, "copy_task.toml", sets);
}

}  // namespace attnbench::test
