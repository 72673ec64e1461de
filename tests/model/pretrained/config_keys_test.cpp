// Which config.json keys are read (docs/pretrained.md): a key transformers knows is refused unless
// the architecture computes it or it leaves evaluation unchanged, naming the models that read it; a
// key no transformers model knows is accepted; values given twice must agree; sizes are checked
// before anything divides by them.
#include <catch2/catch.hpp>
#include <torch/torch.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/common/error.h"
#include "model/pretrained/hf_folder.h"
#include "model/pretrained/transformers_keys.h"
#include "tests/hf_fixtures.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace config_keys_test {

using namespace attnbench;
using namespace attnbench::model::pretrained;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const fs::path& kFixtures = testing::hf_fixtures();

// The fixture's config.json with `edit` applied, in a folder of its own.
class EditedConfig {
 public:
  EditedConfig(const std::string& fixture, const nlohmann::json& edit)
      : dir_(fs::temp_directory_path() / ("ab_config_keys_" + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
    std::ifstream in(kFixtures / fixture / "config.json");
    nlohmann::json cfg = nlohmann::json::parse(in);
    cfg.merge_patch(edit);
    std::ofstream(dir_ / "config.json") << cfg.dump(2);
  }
  ~EditedConfig() { fs::remove_all(dir_); }
  ArchitectureConfig read() const { return read_architecture(dir_); }

 private:
  fs::path dir_;
};

// The refusal reading the edited config throws, "" when it reads.
std::string refusal(const std::string& fixture, const nlohmann::json& edit) {
  try {
    EditedConfig(fixture, edit).read();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

CATCH_TEST_CASE("keys no transformers model knows are accepted: exporters' flags and old fields") {
  for (const char* key : {"is_llama_config", "rope_interleaved", "use_mrope", "unk_token_id",
                          "n_special", "predict_special_tokens", "_num_labels"}) {
    CATCH_INFO(key);
    CATCH_CHECK(!transformers_readers(key));
    CATCH_CHECK(refusal("llama_sharded", {{key, false}}).empty());
  }
  // Keys every transformers config may carry that change nothing in evaluation.
  CATCH_CHECK(refusal("llama_sharded", {{"gradient_checkpointing", true}, {"pruned_heads", {}}})
                  .empty());
}

CATCH_TEST_CASE("a key some transformers model computes with is refused unless the architecture "
                "computes it, naming the models that read it") {
  CATCH_CHECK(transformers_readers("attn_logit_softcapping").value_or("").find("gemma2") !=
              std::string::npos);
  CATCH_CHECK_THAT(refusal("llama_sharded", {{"attn_logit_softcapping", 50.0}}),
                   Contains("config.json: attn_logit_softcapping = 50.0") && Contains("gemma2") &&
                       Contains("attnbench's llama does not compute it"));
  for (const char* key : {"final_logit_softcapping", "use_qk_norm", "logit_scale",
                          "residual_multiplier", "attention_multiplier", "query_pre_attn_scalar",
                          "no_rope_layers", "attention_chunk_size"}) {
    CATCH_INFO(key);
    CATCH_CHECK_THAT(refusal("llama_sharded", {{key, 2}}), Contains(key));
  }
  // Llama has no sliding window and no per-layer kinds; Mistral and Qwen2 read them.
  CATCH_CHECK_THAT(refusal("llama_sharded", {{"sliding_window", 16}}), Contains("sliding_window"));
  CATCH_CHECK_THAT(
      refusal("llama_sharded", {{"layer_types", {"full_attention", "full_attention"}}}),
      Contains("layer_types"));
  // A pruned model is another model: only an empty pruned_heads passes.
  CATCH_CHECK_THAT(refusal("llama_sharded", {{"pruned_heads", {{"0", {1}}}}}),
                   Contains("pruned_heads"));
}

CATCH_TEST_CASE("GPT-NeoX's RoPE keys of either naming are read and must agree") {
  // transformers 4.46 saves partial_rotary_factor and rope_theta beside rotary_pct and
  // rotary_emb_base (gpt_neox_v4_config: rotary_pct 1.0, rotary_emb_base 20000).
  const ArchitectureConfig a =
      EditedConfig("gpt_neox_v4_config", {{"partial_rotary_factor", 1.0}, {"rope_theta", 20000.0}})
          .read();
  CATCH_CHECK(a.rope.frequencies.theta == 20000.0);
  CATCH_CHECK(a.rope.dims == a.head_dim);
  CATCH_CHECK_THAT(refusal("gpt_neox_v4_config", {{"rope_theta", 10000.0}}),
                   Contains("rope_theta") && Contains("rotary_emb_base"));
  CATCH_CHECK_THAT(refusal("gpt_neox_v4_config", {{"partial_rotary_factor", 0.25}}),
                   Contains("partial_rotary_factor") && Contains("rotary_pct"));
  // Alone, the newer names set the values.
  const ArchitectureConfig b = EditedConfig("gpt_neox_v4_config", {{"rotary_pct", nullptr},
                                                                  {"rotary_emb_base", nullptr},
                                                                  {"partial_rotary_factor", 0.5},
                                                                  {"rope_theta", 30000.0}})
                                   .read();
  CATCH_CHECK(b.rope.frequencies.theta == 30000.0);
  CATCH_CHECK(b.rope.dims == b.head_dim / 2);
}

CATCH_TEST_CASE("sizes and RoPE values are checked before anything divides by them") {
  for (const char* fixture : {"llama_sharded", "gpt_neox", "gpt2"}) {
    const std::string heads = std::string(fixture) == "gpt2" ? "n_head" : "num_attention_heads";
    for (int heads_value : {0, -4}) {
      CATCH_INFO(fixture << " " << heads << " = " << heads_value);
      CATCH_CHECK_THAT(refusal(fixture, {{heads, heads_value}}),
                       Contains(heads) && Contains("positive integer"));
    }
  }
  CATCH_CHECK_THAT(refusal("gpt2", {{"n_head", 5}}), Contains("n_head") && Contains("evenly"));
  CATCH_CHECK_THAT(refusal("llama_sharded", {{"rope_parameters", {{"rope_theta", 0}}}}),
                   Contains("rope_theta must be a finite number above 0"));
  // llama3's original_max_position_embeddings is divided by as a float, as transformers does.
  const ArchitectureConfig a =
      EditedConfig("llama_gqa",
                   {{"rope_parameters", {{"original_max_position_embeddings", 256.5}}}})
          .read();
  CATCH_CHECK(a.rope.frequencies.original_context == 256.5);
}

}  // namespace config_keys_test
