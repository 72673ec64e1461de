// The decoder LM (model/): parameter counts against the closed form for every preset and
// variant, shapes, causality, init, tying.
#include <torch/torch.h>

#include <cmath>

#include <catch2/catch.hpp>

#include "core/config/attention_schema.h"
#include "core/config/run_config.h"
#include "model/decoder.h"
#include "model/param_count.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace model_test {

using namespace attnbench;

namespace {

// The eager backend: these tests are about the model around the attention core, not the kernels.
// data.fixed_token_id = 0 keeps the (unused) Mask@k token inside the small test vocabularies.
config::RunConfig make_config(const std::string& preset, const std::string& variant,
                              const std::vector<std::string>& sets = {}) {
  std::string toml = "[model]\npreset = \"" + preset + "\"\n[attention]\nvariant = \"" + variant +
                     "\"\nbackend = \"eager\"\n[data]\nfixed_token_id = 0\n";
  return config::parse_run_config(toml, "test.toml", sets);
}

// Variant configurations whose extra parameters differ: every registered preset at its defaults,
// plus the tau forms and position options a preset does not cover.
std::vector<std::pair<std::string, std::vector<std::string>>> variant_cases() {
  std::vector<std::pair<std::string, std::vector<std::string>>> cases;
  for (const auto& name : config::variant_names()) cases.push_back({name, {}});
  cases.push_back({"elastic", {"attention.tau_form=per_token"}});
  cases.push_back({"elastic", {"attention.tau_form=per_head_const"}});
  cases.push_back({"lazy", {"attention.tau_form=per_token", "attention.bias_window=64"}});
  cases.push_back({"softmax", {"attention.position=distance_bias"}});
  cases.push_back({"softmax", {"model.tie_embeddings=true"}});
  cases.push_back({"lazy", {"model.n_kv_head=2"}});     // grouped-query attention
  cases.push_back({"softmax", {"model.n_kv_head=1"}});  // multi-query attention
  return cases;
}

int64_t constructed(const config::RunConfig& cfg) { return model::DecoderLM(cfg)->num_parameters(); }

}  // namespace

CATCH_TEST_CASE("the registered variants include the paper's presets") {
  auto names = config::variant_names();
  for (const char* n : {"softmax", "alibi", "rope_bias", "elastic", "lazy"}) {
    CATCH_CHECK(std::find(names.begin(), names.end(), n) != names.end());
  }
}

CATCH_TEST_CASE("parameter count equals the closed form: tiny, every variant") {
  for (auto& [variant, sets] : variant_cases()) {
    auto cfg = make_config("tiny", variant, sets);
    CATCH_INFO(variant << " " << (sets.empty() ? "" : sets[0]));
    CATCH_CHECK(constructed(cfg) == model::closed_form_parameter_count(cfg.model, cfg.attention));
  }
}

// The larger presets with the baseline and the variant with the most extra parameters (the
// per-layer formula itself is covered for every variant on tiny above).
CATCH_TEST_CASE("parameter count equals the closed form: small and 125m") {
  for (auto [preset, variant] : {std::pair{"small", "softmax"}, std::pair{"small", "lazy"},
                                 std::pair{"125m", "lazy"}}) {
    auto cfg = make_config(preset, variant);
    CATCH_INFO(preset << " " << variant);
    CATCH_CHECK(constructed(cfg) == model::closed_form_parameter_count(cfg.model, cfg.attention));
  }
}

CATCH_TEST_CASE("parameter count equals the closed form: 340m and 760m by layer extrapolation") {
  // Building these presets costs GBs; their counts are affine in n_layer and in the vocabulary, so
  // models with 1 and 2 layers over a 64-token vocabulary at full width pin every term: per layer
  // = P(2) - P(1), and each vocabulary row costs d_model in the embedding and again in the head.
  for (const char* preset : {"340m", "760m"}) {
    for (const char* variant : {"lazy"}) {
      auto full = make_config(preset, variant);
      auto p1 = constructed(make_config(preset, variant, {"model.n_layer=1", "model.vocab_size=64"}));
      auto p2 = constructed(make_config(preset, variant, {"model.n_layer=2", "model.vocab_size=64"}));
      const int64_t c = full.model.d_model, n = full.model.n_layer;
      int64_t extrapolated = p1 + (n - 1) * (p2 - p1) + 2 * (full.model.padded_vocab() - 64) * c;
      CATCH_INFO(preset << " " << variant);
      CATCH_CHECK(extrapolated == model::closed_form_parameter_count(full.model, full.attention));
    }
  }
}

CATCH_TEST_CASE("preset shapes: 340m has 24 layers of width 1024 and SwiGLU width 2816") {
  auto cfg = make_config("340m", "softmax");
  CATCH_CHECK(cfg.model.n_layer == 24);
  CATCH_CHECK(cfg.model.d_model == 1024);
  CATCH_CHECK(cfg.model.n_head == 16);
  CATCH_CHECK(cfg.model.d_ffn == 2816);
  CATCH_CHECK(cfg.model.padded_vocab() == 50304);
  // Written out by hand from docs/model.md: 2 * 50304 * 1024 (embedding, head) + 24 * (4 * 1024^2 +
  // 3 * 1024 * 2816 + 2 * 1024) + 1024.
  CATCH_CHECK(model::closed_form_parameter_count(cfg.model, cfg.attention) == 411'354'112);
}

CATCH_TEST_CASE("forward: logit shape, per-layer attention weights, causality") {
  auto cfg = make_config("tiny", "lazy", {"model.vocab_size=100"});
  torch::manual_seed(0);
  model::DecoderLM m(cfg);
  auto idx = torch::randint(0, 100, {2, 16}, torch::kLong);
  std::vector<torch::Tensor> weights;
  auto logits = m->forward(idx, &weights);
  CATCH_CHECK(logits.sizes() == torch::IntArrayRef({2, 16, cfg.model.padded_vocab()}));
  CATCH_REQUIRE(weights.size() == 2);
  CATCH_CHECK(weights[0].sizes() == torch::IntArrayRef({2, 4, 16, 16}));
  CATCH_CHECK(torch::allclose(m->forward(idx), logits));
  // Tokens after position 9 never change outputs at positions <= 9.
  auto changed = idx.clone();
  changed.slice(1, 10, 16).fill_(7);
  auto logits2 = m->forward(changed);
  CATCH_CHECK(torch::equal(logits.slice(1, 0, 10), logits2.slice(1, 0, 10)));
  CATCH_CHECK_FALSE(torch::allclose(logits.slice(1, 10, 16), logits2.slice(1, 10, 16)));
}

CATCH_TEST_CASE("grouped-query attention equals multi-head attention with each key/value head repeated") {
  // tiny: 4 query heads of 32. A grouped model's weights copied into a model with 4 key/value
  // heads, k and v rows repeated per group (Llama's repeat_kv), give the same logits.
  for (const std::string variant : {"softmax", "lazy"}) {
    for (const int64_t kv : {1, 2}) {
      CATCH_CAPTURE(variant, kv);
      auto grouped_cfg = make_config("tiny", variant, {"model.n_kv_head=" + std::to_string(kv)});
      auto full_cfg = make_config("tiny", variant);
      torch::manual_seed(5);
      model::DecoderLM grouped(grouped_cfg), full(full_cfg);
      grouped->to(torch::kFloat64);
      full->to(torch::kFloat64);
      torch::NoGradGuard no_grad;
      const auto from = grouped->named_parameters();
      for (auto& p : full->named_parameters()) {
        const torch::Tensor& w = from[p.key()];
        const bool kv_weight = p.key().find(".attn.k.") != std::string::npos ||
                               p.key().find(".attn.v.") != std::string::npos;
        CATCH_CHECK(w.size(0) == (kv_weight ? kv * 32 : p.value().size(0)));
        p.value().copy_(kv_weight ? w.view({kv, 32, -1}).repeat_interleave(4 / kv, 0).view({128, -1}) : w);
      }
      auto idx = torch::randint(0, 50257, {2, 17}, torch::kLong);
      CATCH_CHECK((grouped->forward(idx) - full->forward(idx)).abs().max().item<double>() < 1e-10);
    }
  }
}

CATCH_TEST_CASE("incremental decoding: a prefix, then steps of the cache, equals the full trunk") {
  // Every variant configuration, float64, on the eager and the "auto" backend (the prefix runs
  // fused where a kernel serves the variant, the steps eager); then one prefix shared by three rows.
  for (const auto& [variant, sets] : variant_cases()) {
    for (const std::string backend : {"eager", "auto"}) {
      CATCH_CAPTURE(variant, sets, backend);
      auto with = sets;
      with.push_back("model.vocab_size=100");
      with.push_back("attention.backend=" + backend);
      auto cfg = make_config("tiny", variant, with);
      torch::manual_seed(3);
      model::DecoderLM m(cfg);
      m->to(torch::kFloat64);
      torch::NoGradGuard no_grad;
      auto idx = torch::randint(0, 100, {2, 13}, torch::kLong);
      const auto full = m->hidden(idx);
      CATCH_CHECK((m->head(full) - m->forward(idx)).abs().max().item<double>() == 0.0);
      model::DecoderCache cache;
      std::vector<torch::Tensor> parts;
      int64_t at = 0;
      for (int64_t n : {7, 1, 3, 1, 1}) {
        parts.push_back(m->hidden(idx.narrow(1, at, n), &cache));
        at += n;
      }
      CATCH_CHECK(cache.length() == 13);
      // The cache holds each key/value head once (grouped-query attention: fewer than n_head).
      CATCH_CHECK(cache.layers.front().k.size(1) == cfg.model.kv_heads());
      CATCH_CHECK((torch::cat(parts, 1) - full).abs().max().item<double>() < 1e-10);

      auto rows = torch::randint(0, 100, {3, 13}, torch::kLong);
      rows.narrow(1, 0, 8).copy_(idx.narrow(0, 0, 1).narrow(1, 0, 8).expand({3, 8}));
      model::DecoderCache shared;
      m->hidden(rows.narrow(0, 0, 1).narrow(1, 0, 8), &shared);
      model::DecoderCache three = shared.select(torch::zeros({3}, torch::kLong));
      const auto rest = m->hidden(rows.narrow(1, 8, 5), &three);
      CATCH_CHECK((rest - m->hidden(rows).narrow(1, 8, 5)).abs().max().item<double>() < 1e-10);
    }
  }
}

CATCH_TEST_CASE("init: N(0, init_std), residual projections scaled by 1/sqrt(2 n_layer)") {
  auto cfg = make_config("small", "softmax");
  torch::manual_seed(0);
  model::DecoderLM m(cfg);
  auto params = m->named_parameters();
  const double s = cfg.model.init_std, n = static_cast<double>(cfg.model.n_layer);
  // 147k (o) and 393k (down) samples: the sample std is within ~0.5% of the true one.
  CATCH_CHECK(params["blocks.3.attn.q.weight"].std().item<double>() == Catch::Detail::Approx(s).epsilon(0.02));
  CATCH_CHECK(params["blocks.3.attn.o.weight"].std().item<double>() ==
              Catch::Detail::Approx(s / std::sqrt(2.0 * n)).epsilon(0.02));
  CATCH_CHECK(params["blocks.3.mlp.down.weight"].std().item<double>() ==
              Catch::Detail::Approx(s / std::sqrt(2.0 * n)).epsilon(0.02));
  CATCH_CHECK(params["embedding.weight"].std().item<double>() == Catch::Detail::Approx(s).epsilon(0.02));
  CATCH_CHECK(torch::equal(params["blocks.0.attn_norm.weight"], torch::ones({cfg.model.d_model})));
  // Small logits at init. The final RMSNorm gives unit-RMS hidden states, so each logit is
  // ~N(0, s^2 = init_std^2 * d_model) and the expected loss of any target is
  // E[logsumexp] - E[z_target] = ln(V) + s^2 / 2 (the log-normal mean of sum exp z).
  auto idx = torch::randint(0, cfg.model.vocab_size, {2, 32}, torch::kLong);
  auto logits = m->forward(idx);
  auto loss = torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}),
                                                   idx.reshape({-1}));
  const double s2 = s * s * static_cast<double>(cfg.model.d_model);
  CATCH_CHECK(loss.item<double>() ==
              Catch::Detail::Approx(std::log(static_cast<double>(cfg.model.padded_vocab())) + s2 / 2)
                  .margin(0.02));
}

CATCH_TEST_CASE("tied embeddings: one matrix serves the embedding and the head") {
  auto untied = make_config("tiny", "softmax");
  auto tied = make_config("tiny", "softmax", {"model.tie_embeddings=true"});
  model::DecoderLM m(tied);
  CATCH_CHECK(m->num_parameters() ==
              constructed(untied) - untied.model.padded_vocab() * untied.model.d_model);
  CATCH_CHECK(m->named_parameters().find("lm_head.weight") == nullptr);
  // The head is the embedding: the logit of token t at a position is h . E[t].
  auto idx = torch::tensor({{3, 5}}, torch::kLong);
  auto logits = m->forward(idx);
  {
    torch::NoGradGuard g;
    m->embedding->weight[11].zero_();
  }
  CATCH_CHECK(torch::equal(m->forward(idx).select(2, 11), torch::zeros({1, 2})));
  CATCH_CHECK_FALSE(torch::equal(logits.select(2, 11), torch::zeros({1, 2})));
}

}  // namespace model_test
