// Training a run that continues a pretrained model (model.init_from): a fresh run starts from the
// folder's weights, a resumed one from its checkpoint alone.
#include <torch/torch.h>

#include <fstream>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/common/sha256.h"
#include "core/data/shard_tokenizer.h"
#include "core/data/shard.h"
#include "model/checkpoint_model.h"
#include "model/pretrained/hf_folder.h"
#include "model/pretrained/init_from.h"
#include "tests/train/train_fixture.h"
#include "train/preflight.h"
#include "train/trainer.h"
#include "train/windows.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace init_from_train_test {

using namespace attnbench;
namespace fs = std::filesystem;

namespace {

const fs::path kFolder = fs::path(ATTNBENCH_SOURCE_DIR) / "tests" / "fixtures" / "hf" / "llama_sharded";

// Shards of fixed pseudo-random ids below the folder's 300-token vocabulary.
void write_shards(const fs::path& dir) {
  std::mt19937 gen(7);
  std::uniform_int_distribution<uint32_t> id(0, 299);
  for (const auto& [name, n] : {std::pair{"train.bin", 4000}, std::pair{"val.bin", 600}}) {
    std::vector<uint32_t> tokens(static_cast<size_t>(n));
    for (auto& t : tokens) t = id(gen);
    data::write_shard(dir / name, tokens);
  }
}

config::RunConfig continuing_config(const fs::path& dir, int64_t steps) {
  const std::string toml =
      "[model]\ninit_from = \"" + kFolder.string() + "\"\ncontext_length = 32\n"
      "\n[attention]\nvariant = \"lazy\"\ntau_init = 0.0\nbackend = \"eager\"\n"
      "\n[data]\ntrain = \"" + (dir / "train.bin").string() + "\"\nval = \"" +
      (dir / "val.bin").string() + "\"\n"
      "\n[train]\nseed = 0\nsteps = " + std::to_string(steps) + "\nbatch_size = 2\nlr = 1e-4\n"
      "warmup_steps = 1\nweight_decay = 0.0\neval_interval = 0\neval_tokens = 256\n"
      "checkpoint_interval = 1000\nlog_interval = 10\nthreads = 1\n";
  return config::parse_run_config(toml, "continue.toml");
}

train::TrainOptions quiet() {
  train::TrainOptions o;
  o.quiet = true;
  return o;
}

}  // namespace

CATCH_TEST_CASE("a fresh run continuing a pretrained model starts from its weights and a "
                "resumed one from its checkpoint") {
  test::ScratchDir dir;
  write_shards(dir.path());
  const config::RunConfig cfg = continuing_config(dir.path(), 4);
  CATCH_REQUIRE(train::train_run(cfg, dir.path() / "straight", nullptr, quiet()).status == "finished");

  // Each AdamW step moves a weight by about lr (1e-4) at most: 4 steps stay within 1e-3 of the
  // folder's weights, where the random init (std 0.02) lies about 0.2 away (the fixture's std).
  model::DecoderLM start(cfg);
  model::load_init_from(*start, cfg);
  const model::LoadedModel trained = model::load_model(dir.path() / "straight");
  double farthest = 0;
  auto params = trained.model->named_parameters();
  for (const auto& p : start->named_parameters()) {
    farthest = std::max(farthest, (p.value() - params[p.key()]).abs().max().item<double>());
  }
  CATCH_CHECK(farthest > 0);  // it trained
  CATCH_CHECK(farthest < 1e-3);

  // Stopped after step 2 and resumed: the same weights as the straight run, so the resume did not
  // read the folder's weights again over its checkpoint's.
  int polls = 0;
  auto opts = quiet();
  opts.should_stop = [&] { return ++polls == 2; };
  CATCH_REQUIRE(train::train_run(cfg, dir.path() / "resumed", nullptr, opts).status == "interrupted");
  CATCH_REQUIRE(train::train_run(cfg, dir.path() / "resumed", nullptr, quiet()).status == "finished");
  const model::LoadedModel resumed_run = model::load_model(dir.path() / "resumed");
  auto resumed = resumed_run.model->named_parameters();
  for (const auto& p : params) CATCH_CHECK(torch::equal(p.value(), resumed[p.key()]));

  // Both checkpoints record the weights they started from.
  const std::string sha256 = model::pretrained::load_pretrained(kFolder).weights_sha256;
  for (const fs::path& checkpoint : {trained.checkpoint, resumed_run.checkpoint}) {
    std::ifstream in(checkpoint / "state.json");
    CATCH_CHECK(nlohmann::json::parse(in).at("init_from_sha256") == sha256);
  }
}

// metrics.jsonl's values of `key`, by step.
std::map<int64_t, double> logged(const fs::path& run_dir, const std::string& key) {
  std::map<int64_t, double> out;
  std::ifstream in(run_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.at("key") == key) out[j.at("step").get<int64_t>()] = j.at("value").get<double>();
  }
  return out;
}

CATCH_TEST_CASE("a retrofit logs step 0's validation loss, the pretrained model's own, and the "
                "attention probe at every validation") {
  test::ScratchDir dir;
  write_shards(dir.path());
  config::RunConfig cfg = continuing_config(dir.path(), 4);
  cfg.train.eval_interval = 2;
  auto opts = quiet();
  std::vector<std::pair<int64_t, std::vector<int64_t>>> probed;  // (call, the window's tokens)
  opts.attention_probe = [&](model::CausalLMImpl& m, const torch::Tensor& window) {
    CATCH_CHECK_FALSE(m.is_training());  // probed in evaluation mode
    const torch::Tensor w = window.to(torch::kInt64).contiguous();
    probed.emplace_back(static_cast<int64_t>(probed.size()),
                        std::vector<int64_t>(w.data_ptr<int64_t>(), w.data_ptr<int64_t>() + w.numel()));
    return std::vector<std::pair<std::string, double>>{{"attn/probe", double(probed.size())}};
  };
  CATCH_REQUIRE(train::train_run(cfg, dir.path() / "run", nullptr, opts).status == "finished");
  // Validations at steps 0, 2 and 4, each probed on the same first validation window of T tokens.
  const auto val = logged(dir.path() / "run", "val/loss");
  CATCH_REQUIRE(val.size() == 3);
  CATCH_CHECK(val.begin()->first == 0);
  const auto probe = logged(dir.path() / "run", "attn/probe");
  CATCH_CHECK(probe == std::map<int64_t, double>{{0, 1.0}, {2, 2.0}, {4, 3.0}});
  CATCH_REQUIRE(probed.size() == 3);
  CATCH_CHECK(probed[0].second.size() == 32);
  CATCH_CHECK(probed[0].second == probed[2].second);

  // Step 0's validation loss is the pretrained model's own on the same windows: Lazy Attention
  // at tau 0 computes what the folder's model computes (docs/pretrained.md, "Continuing").
  model::pretrained::PretrainedModel folder = model::pretrained::load_pretrained(kFolder);
  std::vector<data::ShardReader> shards;
  shards.emplace_back(dir.path() / "val.bin");
  const train::ValWindows windows(&shards, 32, cfg.train.eval_tokens);
  std::vector<int64_t> buf(static_cast<size_t>(windows.count() * 33));
  windows.fill(0, windows.count(), buf.data());
  const torch::Tensor w = torch::from_blob(buf.data(), {windows.count(), 33}, torch::kLong);
  torch::NoGradGuard no_grad;
  folder.model->eval();
  const torch::Tensor logits = folder.model->head(folder.model->hidden(w.slice(1, 0, 32)));
  const int64_t vocab = folder.model->shape().vocab_size;
  const double expected = torch::nn::functional::cross_entropy(
                              logits.slice(-1, 0, vocab).reshape({-1, vocab}), w.slice(1, 1, 33).reshape({-1}))
                              .item<double>();
  CATCH_CHECK(val.begin()->second == Catch::Detail::Approx(expected).epsilon(1e-5));
}

// What `data prepare` records of the tokenizer that made train.bin and val.bin.
void write_manifest(const fs::path& dir, const std::string& name, const std::string& sha256) {
  nlohmann::json m;
  m["tokenizer"] = {{"name", name}, {"files", {{{"path", "tokenizer.json"}, {"sha256", sha256}}}}};
  m["shards"] = {{{"file", "train.bin"}}, {{"file", "val.bin"}}};
  std::ofstream(dir / "manifest.json") << m.dump();
}

CATCH_TEST_CASE("shards whose manifest records another tokenizer than the run reads text with "
                "are refused") {
  using Catch::Matchers::Contains;
  test::ScratchDir dir;
  write_shards(dir.path());
  const config::RunConfig continuing = continuing_config(dir.path(), 4);
  config::RunConfig from_scratch = continuing;
  from_scratch.model.init_from = "";

  write_manifest(dir.path(), "llama_sharded", sha256_file(kFolder / "tokenizer.json"));
  CATCH_CHECK_NOTHROW(train::preflight(continuing));
  CATCH_CHECK_THROWS_WITH(train::preflight(from_scratch),
                          Contains("train.bin") && Contains("\"llama_sharded\"") &&
                              Contains("not GPT-2's"));

  write_manifest(dir.path(), "gpt2", data::kGpt2EncoderSha256);
  CATCH_CHECK_NOTHROW(train::preflight(from_scratch));
  CATCH_CHECK_THROWS_WITH(train::preflight(continuing),
                          Contains("\"gpt2\" (sha256 196139668be6), not model.init_from's "
                                   "tokenizer.json") &&
                              Contains("data prepare --tokenizer " + kFolder.string()));
  // Another tokenizer in a folder that happens to be called gpt2: known by its file, not its name.
  write_manifest(dir.path(), "gpt2", std::string(64, '0'));
  CATCH_CHECK_THROWS_WITH(train::preflight(from_scratch),
                          Contains("\"gpt2\" (sha256 000000000000), not GPT-2's"));

  // A manifest that is not one, or lists a shard without its tokenizer, is named.
  std::ofstream(dir.path() / "manifest.json") << "{\"shards\": [";
  CATCH_CHECK_THROWS_WITH(train::preflight(from_scratch),
                          Contains("manifest.json") && Contains("is not valid JSON"));
  std::ofstream(dir.path() / "manifest.json") << R"({"shards": [{"file": "train.bin"}]})";
  CATCH_CHECK_THROWS_WITH(train::preflight(from_scratch),
                          Contains("manifest.json: not a data prepare manifest"));
}

}  // namespace init_from_train_test
