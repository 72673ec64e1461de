// Export round trip: the safetensors files are read back by a reader written here from the format's
// definition (8-byte little-endian header length, JSON header, raw little-endian data), and the
// Llama layout is run through a Llama forward pass written here from Hugging Face's definition
// (rotate_half RoPE), which must reproduce attnbench's logits.
#include <torch/torch.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include "core/config/run_config.h"
#include "core/data/tokenizer.h"
#include "evals/model_export.h"
#include "evals/scored_model.h"
#include "model/decoder.h"
#include "model/pretrained/init_from.h"
#include "tests/test_skip.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace export_test {

using namespace attnbench;

namespace {

struct ReadTensor {
  std::string dtype;
  std::vector<int64_t> shape;
  torch::Tensor value;  // F32 only here
};

struct SafetensorsFile {
  std::map<std::string, ReadTensor> tensors;
  std::map<std::string, std::string> metadata;
  uint64_t header_len = 0;
};

SafetensorsFile read_safetensors(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  CATCH_REQUIRE(in.good());
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CATCH_REQUIRE(bytes.size() >= 8);
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  SafetensorsFile f;
  f.header_len = n;
  CATCH_REQUIRE(8 + n <= bytes.size());
  nlohmann::json header = nlohmann::json::parse(bytes.substr(8, n));
  const size_t data_start = 8 + n;
  uint64_t expected_begin = 0;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      f.metadata = entry.get<std::map<std::string, std::string>>();
      continue;
    }
    ReadTensor t;
    t.dtype = entry.at("dtype").get<std::string>();
    t.shape = entry.at("shape").get<std::vector<int64_t>>();
    auto off = entry.at("data_offsets").get<std::vector<uint64_t>>();
    CATCH_REQUIRE(off.size() == 2);
    int64_t numel = 1;
    for (int64_t d : t.shape) numel *= d;
    CATCH_REQUIRE(t.dtype == "F32");
    CATCH_REQUIRE(off[1] - off[0] == static_cast<uint64_t>(numel) * 4);
    CATCH_REQUIRE(data_start + off[1] <= bytes.size());
    std::vector<float> values(static_cast<size_t>(numel));
    std::memcpy(values.data(), bytes.data() + data_start + off[0], off[1] - off[0]);
    t.value = torch::tensor(values).reshape(t.shape);
    ranges.emplace_back(off[0], off[1]);
    f.tensors[name] = t;
  }
  // The data section is exactly covered by the tensors, without gaps or overlaps.
  std::sort(ranges.begin(), ranges.end());
  for (const auto& [b, e] : ranges) {
    CATCH_CHECK(b == expected_begin);
    expected_begin = e;
  }
  CATCH_CHECK(data_start + expected_begin == bytes.size());
  return f;
}

config::RunConfig tiny(const std::string& variant) {
  return config::parse_run_config("[model]\npreset = \"tiny\"\ncontext_length = 32\n"
                                  "[attention]\nvariant = \"" + variant + "\"\n",
                                  "export-test");
}

// Hugging Face LlamaForCausalLM's forward (modeling_llama.py), fp32, no cache.
torch::Tensor llama_forward(const std::map<std::string, ReadTensor>& w, const nlohmann::json& c,
                            const torch::Tensor& idx) {
  auto W = [&](const std::string& n) { return w.at(n).value; };
  const int64_t H = c["num_attention_heads"], L = c["num_hidden_layers"];
  const int64_t Hkv = c["num_key_value_heads"];
  const double eps = c["rms_norm_eps"], theta = c["rope_theta"];
  auto rms = [&](const torch::Tensor& x, const torch::Tensor& g) {
    return x * torch::rsqrt(x.pow(2).mean(-1, true) + eps) * g;
  };
  torch::Tensor h = W("model.embed_tokens.weight").index_select(0, idx.flatten()).view(
      {idx.size(0), idx.size(1), -1});
  const int64_t B = h.size(0), T = h.size(1), C = h.size(2), D = C / H;
  torch::Tensor inv_freq = 1.0 / torch::pow(theta, torch::arange(0, D, 2, torch::kFloat64) / D);
  torch::Tensor freqs = torch::outer(torch::arange(T, torch::kFloat64), inv_freq);
  torch::Tensor emb = torch::cat({freqs, freqs}, -1);
  torch::Tensor cos = emb.cos().to(torch::kFloat32), sin = emb.sin().to(torch::kFloat32);
  auto rotate_half = [&](const torch::Tensor& x) {
    return torch::cat({-x.narrow(-1, D / 2, D / 2), x.narrow(-1, 0, D / 2)}, -1);
  };
  torch::Tensor mask = torch::ones({T, T}, torch::kBool).tril();
  for (int64_t l = 0; l < L; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    torch::Tensor x = rms(h, W(p + "input_layernorm.weight"));
    auto heads = [&](const torch::Tensor& y, int64_t n) {
      return y.view({B, T, n, D}).transpose(1, 2);
    };
    // repeat_kv: key/value head j serves query heads j * H / Hkv .. (j + 1) * H / Hkv - 1.
    auto repeat_kv = [&](const torch::Tensor& y) { return y.repeat_interleave(H / Hkv, 1); };
    torch::Tensor q = heads(torch::matmul(x, W(p + "self_attn.q_proj.weight").t()), H);
    torch::Tensor k = heads(torch::matmul(x, W(p + "self_attn.k_proj.weight").t()), Hkv);
    torch::Tensor v = repeat_kv(heads(torch::matmul(x, W(p + "self_attn.v_proj.weight").t()), Hkv));
    q = q * cos + rotate_half(q) * sin;
    k = repeat_kv(k * cos + rotate_half(k) * sin);
    torch::Tensor s = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(D));
    s = s.masked_fill(~mask, -std::numeric_limits<float>::infinity());
    torch::Tensor a = torch::matmul(torch::softmax(s, -1), v).transpose(1, 2).reshape({B, T, C});
    h = h + torch::matmul(a, W(p + "self_attn.o_proj.weight").t());
    x = rms(h, W(p + "post_attention_layernorm.weight"));
    torch::Tensor g = torch::matmul(x, W(p + "mlp.gate_proj.weight").t());
    torch::Tensor u = torch::matmul(x, W(p + "mlp.up_proj.weight").t());
    h = h + torch::matmul(torch::silu(g) * u, W(p + "mlp.down_proj.weight").t());
  }
  h = rms(h, W("model.norm.weight"));
  return torch::matmul(h, W("lm_head.weight").t());
}

std::filesystem::path scratch(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("attnbench-export-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace

CATCH_TEST_CASE("export writes every tensor under its module name, readable by an independent reader") {
  torch::manual_seed(3);
  config::RunConfig cfg = tiny("lazy");
  model::DecoderLM m(cfg);
  auto dir = scratch("lazy");
  evals::ExportSummary s = evals::export_model(m, cfg, 42, dir, {});
  CATCH_CHECK_FALSE(s.llama);  // Lazy Attention has no Llama equivalent
  CATCH_CHECK_FALSE(s.llama_skipped.empty());
  CATCH_CHECK_FALSE(std::filesystem::exists(dir / "llama"));

  SafetensorsFile f = read_safetensors(dir / "model.safetensors");
  CATCH_CHECK((8 + f.header_len) % 8 == 0);
  CATCH_CHECK(f.metadata.at("step") == "42");
  CATCH_CHECK(f.metadata.at("run_id") == config::config_hash(cfg));
  size_t count = 0;
  for (const auto& p : m->named_parameters()) {
    ++count;
    CATCH_INFO(p.key());
    CATCH_REQUIRE(f.tensors.count(p.key()) == 1);
    const ReadTensor& t = f.tensors.at(p.key());
    CATCH_CHECK(t.shape == p.value().sizes().vec());
    CATCH_CHECK(torch::equal(t.value, p.value().detach()));
  }
  CATCH_CHECK(f.tensors.size() >= count);
  CATCH_CHECK(f.tensors.count("embedding.weight") == 1);
  CATCH_CHECK(f.tensors.at("embedding.weight").shape ==
              std::vector<int64_t>{cfg.model.padded_vocab(), cfg.model.d_model});
  CATCH_CHECK(f.tensors.count("blocks.1.attn.q.weight") == 1);

  std::ifstream cj(dir / "config.json");
  nlohmann::json config_json = nlohmann::json::parse(cj);
  CATCH_CHECK(config_json["run_id"] == config::config_hash(cfg));
  CATCH_CHECK(config_json["config"]["attention"]["variant"] == "lazy");
  std::filesystem::remove_all(dir);
}

CATCH_TEST_CASE("the Llama layout of a softmax + RoPE model reproduces its logits") {
  torch::manual_seed(4);
  config::RunConfig cfg = tiny("softmax");
  model::DecoderLM m(cfg);
  m->eval();
  auto dir = scratch("softmax");
  evals::ExportSummary s = evals::export_model(m, cfg, 7, dir, {});
  CATCH_REQUIRE(s.llama);

  std::ifstream cj(dir / "llama" / "config.json");
  nlohmann::json c = nlohmann::json::parse(cj);
  CATCH_CHECK(c["architectures"][0] == "LlamaForCausalLM");
  CATCH_CHECK(c["hidden_size"] == cfg.model.d_model);
  CATCH_CHECK(c["intermediate_size"] == cfg.model.d_ffn);
  CATCH_CHECK(c["num_hidden_layers"] == cfg.model.n_layer);
  CATCH_CHECK(c["vocab_size"] == 50257);
  CATCH_CHECK(c["max_position_embeddings"] == 32);
  CATCH_CHECK(c["tie_word_embeddings"] == false);

  SafetensorsFile f = read_safetensors(dir / "llama" / "model.safetensors");
  std::vector<std::string> expected{"model.embed_tokens.weight", "model.norm.weight",
                                    "lm_head.weight"};
  for (int l = 0; l < cfg.model.n_layer; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    for (const char* n : {"self_attn.q_proj.weight", "self_attn.k_proj.weight",
                          "self_attn.v_proj.weight", "self_attn.o_proj.weight",
                          "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight",
                          "input_layernorm.weight", "post_attention_layernorm.weight"}) {
      expected.push_back(p + n);
    }
  }
  CATCH_CHECK(f.tensors.size() == expected.size());
  for (const auto& n : expected) CATCH_CHECK(f.tensors.count(n) == 1);
  CATCH_CHECK(f.tensors.at("model.embed_tokens.weight").shape ==
              std::vector<int64_t>{50257, cfg.model.d_model});
  CATCH_CHECK(f.tensors.at("lm_head.weight").shape == std::vector<int64_t>{50257, cfg.model.d_model});

  torch::Tensor idx = torch::randint(0, 50257, {2, 20}, torch::kInt64);
  torch::Tensor ours;
  {
    torch::NoGradGuard g;
    ours = m->forward(idx).narrow(-1, 0, 50257);
  }
  torch::Tensor theirs = llama_forward(f.tensors, c, idx);
  const double diff = (ours - theirs).abs().max().item<double>();
  CATCH_INFO("largest logit difference " << diff);
  CATCH_CHECK(diff < 1e-4);
  std::filesystem::remove_all(dir);
}

CATCH_TEST_CASE("a grouped-query model's Llama layout names its key/value heads and reproduces its logits") {
  torch::manual_seed(6);
  config::RunConfig cfg = config::parse_run_config(
      "[model]\npreset = \"tiny\"\ncontext_length = 32\nn_kv_head = 2\n", "export-test");
  model::DecoderLM m(cfg);
  m->eval();
  auto dir = scratch("grouped");
  CATCH_REQUIRE(evals::export_model(m, cfg, 3, dir, {}).llama);
  std::ifstream cj(dir / "llama" / "config.json");
  nlohmann::json c = nlohmann::json::parse(cj);
  CATCH_CHECK(c["num_attention_heads"] == 4);
  CATCH_CHECK(c["num_key_value_heads"] == 2);
  SafetensorsFile f = read_safetensors(dir / "llama" / "model.safetensors");
  CATCH_CHECK(f.tensors.at("model.layers.0.self_attn.k_proj.weight").shape ==
              std::vector<int64_t>{2 * 32, cfg.model.d_model});
  torch::Tensor idx = torch::randint(0, 50257, {2, 20}, torch::kInt64);
  torch::Tensor ours;
  {
    torch::NoGradGuard g;
    ours = m->forward(idx).narrow(-1, 0, 50257);
  }
  const double diff = (ours - llama_forward(f.tensors, c, idx)).abs().max().item<double>();
  CATCH_INFO("largest logit difference " << diff);
  CATCH_CHECK(diff < 1e-4);
  std::filesystem::remove_all(dir);
}

// The round trip a user makes: a trained model exported, then read back as a model folder by
// `eval --checkpoint` (the same logits, the same tokens for the same text, lm-eval's GPT-2 BOS
// policy) and continued by model.init_from (the same parameters).
CATCH_TEST_CASE("export then import: the Llama folder is the same model with the same tokenizer") {
  if (!attnbench::testing::data_root_or_skip("the GPT-2 tokenizer")) return;
  torch::manual_seed(9);
  const config::RunConfig cfg = config::parse_run_config(
      "[model]\npreset = \"tiny\"\ncontext_length = 32\nn_kv_head = 2\n", "export-test");
  model::DecoderLM m(cfg);
  m->eval();
  const auto dir = scratch("roundtrip");
  CATCH_REQUIRE(evals::export_model(m, cfg, 5, dir, data::gpt2_tokenizer_dir()).llama);

  const evals::ScoredModel imported = evals::load_scored_model(dir / "llama", "cpu", "--checkpoint", "");
  CATCH_REQUIRE(imported.pretrained);
  const torch::Tensor idx = torch::randint(0, 50257, {2, 20}, torch::kInt64);
  torch::NoGradGuard no_grad;
  const torch::Tensor ours = m->forward(idx).narrow(-1, 0, 50257);
  const torch::Tensor theirs = imported.model->head(imported.model->hidden(idx)).narrow(-1, 0, 50257);
  const double diff = (ours - theirs).abs().max().item<double>();
  CATCH_INFO("largest logit difference " << diff);
  CATCH_CHECK(diff < 1e-5);
  const auto gpt2 = data::gpt2_text_tokenizer(data::gpt2_tokenizer_dir());
  for (const std::string text : {"Hello world", " The cat's 12,345 \u00e9t\u00e9s\n\n  x<|endoftext|>y",
                                 "\u4f60\u597d \U0001F600 tabs\tand   spaces"}) {
    CATCH_INFO(text);
    CATCH_CHECK(imported.tokenizer().encode(text) == gpt2->encode(text));
  }
  {  // and a real text: the first 200 kB of WikiText-2's test split
    std::ifstream in(*attnbench::testing::data_root_or_skip("WikiText-2") / "wikitext2" / "wiki.test.raw");
    std::string wiki(200000, '\0');
    in.read(wiki.data(), static_cast<std::streamsize>(wiki.size()));
    wiki.resize(static_cast<size_t>(in.gcount()));
    CATCH_REQUIRE(wiki.size() > 100000);
    CATCH_CHECK(imported.tokenizer().encode(wiki) == gpt2->encode(wiki));
  }
  CATCH_CHECK(imported.options.bos == evals::BosPolicy::None);  // GPT-2 adds none, as trained
  CATCH_CHECK(imported.options.prefix_token == 50256);           // lm-eval's empty-context token

  config::RunConfig cont = config::parse_run_config(
      "[model]\ninit_from = \"" + (dir / "llama").string() + "\"\ncontext_length = 32\n", "export-test");
  model::DecoderLM continued(cont);
  model::load_init_from(*continued, cont);
  const auto theirs_params = continued->named_parameters(true);
  for (const auto& p : m->named_parameters(true)) {
    CATCH_INFO(p.key());
    const torch::Tensor* other = theirs_params.find(p.key());
    CATCH_REQUIRE(other != nullptr);
    const bool vocab_rows = p.key() == "embedding.weight" || p.key() == "lm_head.weight";
    const torch::Tensor mine = vocab_rows ? p.value().narrow(0, 0, 50257) : p.value();
    const torch::Tensor back = vocab_rows ? other->narrow(0, 0, 50257) : *other;
    CATCH_CHECK(torch::equal(mine, back));
  }
  std::filesystem::remove_all(dir);
}

}  // namespace export_test
