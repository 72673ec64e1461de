// The learning-rate schedule, the window samplers and the weight-decay grouping.
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include "core/config/attention_schema.h"
#include "train/optimizer.h"
#include "train/schedule.h"
#include "train/windows.h"
#include "model/decoder.h"
#include "tests/train/train_fixture.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace schedule_windows_test {

using namespace attnbench;

CATCH_TEST_CASE("learning rate: linear warmup, cosine to min_lr_ratio at the last step") {
  config::TrainConfig t;
  t.lr = 1e-3;
  t.min_lr_ratio = 0.1;
  t.warmup_steps = 10;
  t.steps = 110;
  CATCH_CHECK(train::learning_rate(t, 0) == Catch::Detail::Approx(1e-4));
  CATCH_CHECK(train::learning_rate(t, 4) == Catch::Detail::Approx(5e-4));
  CATCH_CHECK(train::learning_rate(t, 9) == Catch::Detail::Approx(1e-3));
  CATCH_CHECK(train::learning_rate(t, 10) == Catch::Detail::Approx(1e-3));
  // Half way through the 99 decay intervals (steps 10..109) the cosine is at its midpoint.
  const double mid = (1e-3 + 1e-4) / 2;
  CATCH_CHECK(0.5 * (train::learning_rate(t, 59) + train::learning_rate(t, 60)) ==
              Catch::Detail::Approx(mid).epsilon(1e-3));
  CATCH_CHECK(train::learning_rate(t, 109) == Catch::Detail::Approx(1e-4));
  for (int64_t s = 10; s < 109; ++s) CATCH_CHECK(train::learning_rate(t, s + 1) < train::learning_rate(t, s));
}

CATCH_TEST_CASE("training windows: seeded, in bounds, T + 1 consecutive shard tokens") {
  test::ScratchDir dir;
  // Two shards whose token at offset i is i (+ 1000 in the second): a window's first token names
  // its start, and consecutive tokens prove the copy is contiguous.
  std::vector<uint32_t> a(300), b(200);
  for (uint32_t i = 0; i < a.size(); ++i) a[i] = i;
  for (uint32_t i = 0; i < b.size(); ++i) b[i] = 1000 + i;
  data::write_shard(dir.path() / "a.bin", a);
  data::write_shard(dir.path() / "b.bin", b);
  std::vector<data::ShardReader> shards;
  shards.emplace_back(dir.path() / "a.bin");
  shards.emplace_back(dir.path() / "b.bin");
  const int64_t T = 16;
  train::TrainWindows w(&shards, T, 7);
  CATCH_CHECK(w.total_starts() == (300 - T) + (200 - T));
  std::vector<int64_t> buf(400 * (T + 1));
  w.next(400, buf.data());
  CATCH_CHECK(w.cursor() == 400);
  std::set<int64_t> starts_a, starts_b;
  for (int64_t n = 0; n < 400; ++n) {
    const int64_t* win = &buf[n * (T + 1)];
    for (int64_t i = 1; i <= T; ++i) CATCH_REQUIRE(win[i] == win[0] + i);
    if (win[0] < 1000) {
      CATCH_REQUIRE(win[0] + T < 300);
      starts_a.insert(win[0]);
    } else {
      CATCH_REQUIRE(win[0] - 1000 + T < 200);
      starts_b.insert(win[0]);
    }
  }
  // Both shards are drawn from roughly in proportion to their starts (284 : 184) and windows vary.
  CATCH_CHECK(starts_a.size() > 100);
  CATCH_CHECK(starts_b.size() > 60);

  // Same seed and cursor: same windows; another seed: different ones.
  train::TrainWindows again(&shards, T, 7);
  again.set_cursor(100);
  std::vector<int64_t> buf2(10 * (T + 1));
  again.next(10, buf2.data());
  CATCH_CHECK(std::equal(buf2.begin(), buf2.end(), buf.begin() + 100 * (T + 1)));
  train::TrainWindows other(&shards, T, 8);
  other.next(10, buf2.data());
  CATCH_CHECK_FALSE(std::equal(buf2.begin(), buf2.end(), buf.begin()));

  CATCH_SECTION("Mask@k puts the fixed token at input position k of every window") {
    train::TrainWindows masked(&shards, T, 7, /*fixed_token_position=*/2, /*fixed_token_id=*/9999);
    std::vector<int64_t> m(50 * (T + 1));
    masked.next(50, m.data());
    for (int64_t n = 0; n < 50; ++n) {
      CATCH_REQUIRE(m[n * (T + 1) + 2] == 9999);
      CATCH_REQUIRE(m[n * (T + 1) + 3] == buf[n * (T + 1) + 3]);  // the rest as unmasked
    }
  }
}

CATCH_TEST_CASE("validation windows: sequential, targets not overlapping, capped by eval tokens") {
  test::ScratchDir dir;
  std::vector<uint32_t> a(100);
  for (uint32_t i = 0; i < a.size(); ++i) a[i] = i;
  data::write_shard(dir.path() / "v.bin", a);
  std::vector<data::ShardReader> shards;
  shards.emplace_back(dir.path() / "v.bin");
  train::ValWindows all(&shards, 10, 1 << 20);
  CATCH_CHECK(all.count() == 9);  // starts 0, 10, ..., 80 (a window needs 11 tokens)
  std::vector<int64_t> buf(2 * 11);
  all.fill(3, 2, buf.data());
  CATCH_CHECK(buf[0] == 30);
  CATCH_CHECK(buf[10] == 40);
  CATCH_CHECK(buf[11] == 40);
  train::ValWindows capped(&shards, 10, 25);  // 25 target tokens -> 3 windows
  CATCH_CHECK(capped.count() == 3);
}

CATCH_TEST_CASE("weight decay outside variants: matrices decay, vectors and biases do not") {
  CATCH_CHECK(train::decays("blocks.0.attn.q.weight", torch::zeros({4, 4})));
  CATCH_CHECK(train::decays("embedding.weight", torch::zeros({10, 4})));
  CATCH_CHECK_FALSE(train::decays("blocks.0.attn_norm.weight", torch::zeros({4})));
  CATCH_CHECK_FALSE(train::decays("blocks.0.mlp.up.bias", torch::zeros({4, 4})));
}

namespace {
// The grouping before variants declared their own decay (a name rule): matrices decay unless their
// leaf name contains "bias" or their name contains "tau". Every existing variant must keep it.
bool name_rule(const std::string& name, const torch::Tensor& p) {
  const std::string leaf = name.substr(name.rfind('.') + 1);
  return p.dim() >= 2 && leaf.find("bias") == std::string::npos && name.find("tau") == std::string::npos;
}
}  // namespace

CATCH_TEST_CASE("weight decay groups of every preset and tau form equal the name rule") {
  std::vector<std::pair<std::string, std::string>> cases;
  for (const auto& name : config::variant_names()) cases.push_back({name, ""});
  for (const char* form : {"per_token", "per_head_const"}) cases.push_back({"lazy", form});
  cases.push_back({"elastic", "per_token"});
  for (const auto& [variant, form] : cases) {
    CATCH_INFO(variant << " " << form);
    auto cfg = config::parse_run_config(
        "[model]\npreset = \"tiny\"\nvocab_size = 64\n[attention]\nvariant = \"" + variant +
            "\"\n" + (form.empty() ? "" : "tau_form = \"" + form + "\"\n") +
            "[data]\nfixed_token_id = 0\n",
        "t.toml");
    model::DecoderLM m(cfg);
    const auto params = m->named_parameters();
    std::vector<std::string> decayed, kept;
    for (const auto& [name, decays] : train::decay_plan(*m)) {
      CATCH_INFO(name);
      CATCH_CHECK(decays == name_rule(name, params[name]));
      (decays ? decayed : kept).push_back(name);
    }
    CATCH_CHECK(decayed.size() + kept.size() == params.size());
    CATCH_CHECK(std::find(decayed.begin(), decayed.end(), "blocks.0.attn.q.weight") != decayed.end());
  }
}

CATCH_TEST_CASE("weight decay groups of a real lazy model: exactly its projection matrices") {
  auto cfg = config::parse_run_config(
      "[model]\npreset = \"tiny\"\nvocab_size = 64\n[attention]\nvariant = \"lazy\"\n"
      "tau_form = \"per_token\"\n[data]\nfixed_token_id = 0\n",
      "t.toml");
  model::DecoderLM m(cfg);
  auto opt = train::make_adamw(*m, cfg.train);
  CATCH_REQUIRE(opt->param_groups().size() == 2);
  auto wd = [&](size_t g) {
    return static_cast<torch::optim::AdamWOptions&>(opt->param_groups()[g].options()).weight_decay();
  };
  CATCH_CHECK(wd(0) == cfg.train.weight_decay);
  CATCH_CHECK(wd(1) == 0.0);
  const std::vector<std::string> matrices = {".q.weight", ".k.weight", ".v.weight", ".o.weight",
                                             ".gate.weight", ".up.weight", ".down.weight"};
  int64_t expected = 0, distance_bias = 0;
  for (const auto& [n, decays] : train::decay_plan(*m)) {
    bool matrix = n == "embedding.weight" || n == "lm_head.weight";
    for (auto& suffix : matrices)
      matrix |= n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0;
    CATCH_INFO(n);
    CATCH_CHECK(decays == matrix);
    expected += matrix;
    distance_bias += n.find("distance_bias") != std::string::npos;
  }
  CATCH_CHECK(distance_bias == cfg.model.n_layer);  // the table is there, and not decayed
  CATCH_CHECK(static_cast<int64_t>(opt->param_groups()[0].params().size()) == expected);
}

CATCH_TEST_CASE("with train.attention_lr_scale the variant's own parameters form two groups at "
                "the scaled rate") {
  const std::string toml =
      "[model]\npreset = \"tiny\"\nvocab_size = 64\n[attention]\nvariant = \"lazy\"\n"
      "output_gate = \"elementwise\"\n[data]\nfixed_token_id = 0\n[train]\nlr = 1e-3\n";
  const auto cfg = config::parse_run_config(toml + "attention_lr_scale = 10.0\n", "t.toml");
  model::DecoderLM m(cfg);
  auto opt = train::make_adamw(*m, cfg.train);
  CATCH_REQUIRE(opt->param_groups().size() == 4);
  train::set_learning_rate(*opt, 5e-4, cfg.train);
  auto options = [&](size_t g) {
    return static_cast<torch::optim::AdamWOptions&>(opt->param_groups()[g].options());
  };
  CATCH_CHECK(options(0).lr() == 5e-4);
  CATCH_CHECK(options(1).lr() == 5e-4);
  CATCH_CHECK(options(2).lr() == Approx(5e-3).epsilon(1e-12));
  CATCH_CHECK(options(3).lr() == Approx(5e-3).epsilon(1e-12));
  CATCH_CHECK(options(2).weight_decay() == cfg.train.weight_decay);  // gate_proj.weight decays
  CATCH_CHECK(options(3).weight_decay() == 0.0);
  // Groups 2 and 3 hold exactly the variant modules' parameters (blocks.N.attn.core.*).
  std::map<const c10::TensorImpl*, size_t> group_of;
  for (size_t g = 0; g < 4; ++g) {
    for (const auto& p : opt->param_groups()[g].params()) group_of[p.unsafeGetTensorImpl()] = g;
  }
  const auto params = m->named_parameters();
  CATCH_CHECK(group_of.size() == params.size());
  for (const auto& p : params) {
    CATCH_INFO(p.key());
    const bool own = p.key().find(".attn.core.") != std::string::npos;
    CATCH_CHECK((group_of.at(p.value().unsafeGetTensorImpl()) >= 2) == own);
  }
  // The default keeps the run ids that existed before the key; another value is another run.
  const auto plain = config::parse_run_config(toml, "t.toml");
  CATCH_CHECK(config::config_hash(config::parse_run_config(toml + "attention_lr_scale = 1.0\n",
                                                           "t.toml")) == config::config_hash(plain));
  CATCH_CHECK(config::config_hash(cfg) != config::config_hash(plain));
  CATCH_CHECK_THROWS_WITH(config::parse_run_config(toml + "attention_lr_scale = 2e6\n", "t.toml"),
                          Catch::Matchers::Contains("train.attention_lr_scale"));
}

}  // namespace schedule_windows_test
