// Hostile values in run configs: overflowing sizes, non-finite floats, sizes beyond memory, empty
// --set values, thread counts beyond the cores (docs/training.md, "Validation").
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/registry.h"
#include "core/config/attention_schema.h"
#include "core/config/fields.h"
#include "core/config/run_config.h"
#include "core/config/sizes.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace validation_test {

using namespace attnbench;
using namespace attnbench::config;
using Catch::Matchers::Contains;

namespace {
std::string error_of(const std::vector<std::string>& sets, const std::string& text = "") {
  try {
    parse_run_config(text, "cfg.toml", sets);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

CATCH_TEST_CASE("size products that overflow 64 bits are refused naming the key, never wrapped") {
  // 2^62 x 4 wrapped to 0, and the batch_tokens check divided by it (SIGFPE).
  CATCH_CHECK_THAT(error_of({"train.batch_size=4611686018427387904", "model.context_length=4"}),
                   Contains("--set train.batch_size") && Contains("training needs at least"));
  CATCH_CHECK_THAT(error_of({"train.batch_size=4611686018427387904", "model.context_length=4",
                             "train.batch_tokens=8"}),
                   Contains("train.batch_size ="));
  // 8 d_model overflowed in the derived d_ffn ("model.d_ffn must be >= 1").
  CATCH_CHECK_THAT(error_of({"model.d_model=4611686018427387904", "model.n_head=1"}),
                   Contains("--set model.d_model: model.d_model = 4611686018427387904"));
  CATCH_CHECK_THAT(error_of({"model.vocab_size=9223372036854775807"}),
                   Contains("lower model.vocab_size"));
  CATCH_CHECK_THAT(error_of({"model.d_ffn=9223372036854775807"}), Contains("lower model.d_ffn"));
  CATCH_CHECK_THAT(error_of({"model.context_length=9223372036854775807"}),
                   Contains("lower model.context_length"));
  CATCH_CHECK(saturating_mul(int64_t{1} << 62, 4) == std::numeric_limits<int64_t>::max());
  CATCH_CHECK(saturating_add(std::numeric_limits<int64_t>::max(), 1) ==
              std::numeric_limits<int64_t>::max());
  CATCH_CHECK(saturating_mul(3, 7) == 21);
}

CATCH_TEST_CASE("configs that cannot fit in memory are refused with the key and an estimate") {
  // Built layer by layer this hung for minutes before the allocator gave up.
  CATCH_CHECK_THAT(error_of({"model.n_layer=1000000000"}),
                   Contains("--set model.n_layer") && Contains("PiB") &&
                       Contains("parameters with gradients and AdamW moments"));
  CATCH_CHECK_THAT(error_of({"model.context_length=100000000"}),
                   Contains("lower model.context_length") && Contains("TiB"));
  // The error points at the file position of the key to lower.
  CATCH_CHECK_THAT(error_of({}, "[model]\nn_layer = 1000000000\n"), Contains("cfg.toml:2:11"));
  // A CPU run is held to this machine's memory, which a 100 GiB model exceeds nowhere it matters.
  CATCH_CHECK(memory_limit_bytes("cpu") <= memory_limit_bytes("auto"));
  CATCH_CHECK(memory_limit_bytes("auto") >= (int64_t{256} << 30));
}

CATCH_TEST_CASE("a CPU run is held to this machine's memory when it trains, not when it is read") {
  // About 97 GB of training memory: within 256 GiB, so any machine may read (and evaluate) it.
  const RunConfig big = parse_run_config(
      "[model]\nd_model = 4096\nn_head = 32\nn_layer = 12\n[train]\ndevice = \"cpu\"\n",
      "cfg.toml");
  const MemoryEstimate e = estimate_training_memory(big);
  CATCH_CHECK(!check_memory(big, "").has_value());
  // Training it on the CPU needs that much here (preflight asks for train.device).
  if (memory_limit_bytes("cpu") < e.total_bytes) {
    CATCH_CHECK_THAT(check_memory(big, "cpu")->message, Contains("this machine's memory"));
  } else {
    CATCH_CHECK(!check_memory(big, "cpu").has_value());
  }
}

CATCH_TEST_CASE("the memory estimate is the closed-form lower bound of docs/training.md") {
  const RunConfig tiny = parse_run_config("", "cfg.toml");
  const MemoryEstimate e = estimate_training_memory(tiny);
  // Embedding and LM head 2 x 50304 x 128, two layers of 4 x 128^2 + 3 x 128 x 512.
  CATCH_CHECK(e.parameters == 2 * 50304 * 128 + 2 * (4 * 128 * 128 + 3 * 128 * 512));
  CATCH_CHECK(e.parameter_bytes == 16 * e.parameters);
  // 8 x 256 tokens, each keeping 2 layer inputs of 128 and 50304 logits, in fp32.
  CATCH_CHECK(e.activation_bytes == int64_t{4} * 8 * 256 * (2 * 128 + 50304));
  CATCH_CHECK(e.total_bytes == e.parameter_bytes + e.activation_bytes);
  CATCH_CHECK(format_bytes(1536) == "1.5 KiB");
}

CATCH_TEST_CASE("the shipped presets fit the memory limit") {
  const std::string dir = ATTNBENCH_SOURCE_DIR;
  for (const char* preset : {"tiny", "small", "125m", "340m", "760m"}) {
    CATCH_INFO(preset);
    CATCH_CHECK_NOTHROW(load_run_config(dir + "/sweeps/presets/" + preset + ".toml"));
  }
}

CATCH_TEST_CASE("every float key refuses nan and inf, naming the key") {
  for (const Field& f : fields()) {
    if (f.type != ValueType::Float) continue;
    const std::string key = f.section + "." + f.name;
    for (const char* bad : {"inf", "-inf", "nan"}) {
      CATCH_INFO(key << " = " << bad);
      CATCH_CHECK_THAT(error_of({key + "=" + bad}),
                       Contains("--set " + key) && Contains(key + " = ") &&
                           Contains("must be a finite number"));
    }
  }
  CATCH_CHECK_THAT(error_of({}, "[train]\nlr = inf\n"), Contains("cfg.toml:2:6: train.lr = inf"));
  // nan passed every bound of the variants' parameters (each comparison is false).
  CATCH_CHECK_THAT(error_of({"attention.variant=lazy", "attention.tau_init=nan"}),
                   Contains("attention.tau_init = nan must be a finite number"));
  // Past a double's range, --set reads a bare word: the message says why.
  CATCH_CHECK_THAT(error_of({"train.lr=1e309"}), Contains("1.8e308"));
  CATCH_CHECK_THAT(error_of({"train.steps=9223372036854775808"}), Contains("2^63"));
  CATCH_CHECK_THAT(error_of({"train.steps=\"8\""}), !Contains("2^63"));
}

CATCH_TEST_CASE("finite floats beyond float32 or any sane value are refused, naming the key") {
  // Before: norm_eps = 1e300 trained a constant model to "finished"; lr >= 3.4e37 and the
  // variants' inits at 1e300 ended in a raw LibTorch error.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"model.norm_eps=1e300", "model.norm_eps must be in (0, 1]"},
      {"model.norm_eps=2", "model.norm_eps must be in (0, 1]"},
      {"model.init_std=1e39", "model.init_std must be in (0, 1]"},
      {"train.lr=3.4e37", "train.lr must be in (0, 1000]"},
      {"train.adam_eps=1e300", "train.adam_eps must be in (0, 1]"},
      {"train.weight_decay=1e20", "train.weight_decay must be in [0, 10]"},
      {"train.grad_clip=1e300", "train.grad_clip must be in [0, 3.4e+38]"},
      {"train.peak_flops=1e300", "train.peak_flops must be in [0, 1e+21]"},
  };
  for (const auto& [set, message] : cases) {
    CATCH_INFO(set);
    CATCH_CHECK_THAT(error_of({set}), Contains("--set " + set.substr(0, set.find('=')) + ": ") &&
                                          Contains(message));
  }
  for (const char* key : {"tau_init", "sink_init", "ssmax_init"}) {
    CATCH_INFO(key);
    CATCH_CHECK_THAT(
        error_of({"attention.variant=lazy", "attention.sink=learned", "attention.normalizer=softmax",
                  "attention.score_scale=ssmax", std::string("attention.") + key + "=1e300"}),
        Contains(std::string("attention.") + key + " = 1e+300 is out of range [-100, 100]"));
  }
  CATCH_CHECK_THAT(error_of({"attention.variant=lazy", "attention.rope_theta=1e39"}),
                   Contains("attention.rope_theta = 1e+39 is out of range [1, 1000000000000]"));
  // The edges themselves are valid.
  CATCH_CHECK_NOTHROW(parse_run_config("", "cfg.toml", {"train.lr=1000", "model.norm_eps=1",
                                                        "train.weight_decay=10"}));
}

CATCH_TEST_CASE("a variant's float parameter without a range within float32 is a registration error") {
  ParamSpec unbounded;
  unbounded.name = "scale_init";
  unbounded.type = ValueType::Float;
  unbounded.default_value = 1.0;
  unbounded.min = -1.0;  // no max
  ParamSpec wide = unbounded;
  wide.name = "offset_init";
  wide.max = 1e39;  // beyond float32
  const size_t before = attnbench::registration_errors().size();
  register_variant_schema({"zz_test_unbounded", "a test schema", {unbounded, wide}, {}, ""});
  const auto& errors = attnbench::registration_errors();
  CATCH_REQUIRE(errors.size() == before + 2);
  CATCH_CHECK(errors[before] == "attention variant 'zz_test_unbounded': float parameter 'scale_init' "
                                "needs min and max within float32");
  CATCH_CHECK_THAT(errors[before + 1], Contains("'offset_init'"));
}

CATCH_TEST_CASE("canonical JSON and run ids refuse a non-finite float instead of writing null") {
  // JSON wrote inf as null, which reads back as the default: two configs shared one run id.
  RunConfig cfg = parse_run_config("", "cfg.toml");
  cfg.train.grad_clip = std::numeric_limits<double>::infinity();
  CATCH_CHECK_THROWS_WITH(config_hash(cfg), Contains("train.grad_clip = inf"));
  CATCH_CHECK_THROWS_AS(canonical_json(cfg), InputError);
  cfg.train.grad_clip = 1.0;
  cfg.attention.params["rope_theta"] = std::nan("");
  CATCH_CHECK_THROWS_WITH(to_json(cfg), Contains("attention.rope_theta = nan"));
}

CATCH_TEST_CASE("a JSON config with a number past a double's range is an input error") {
  try {
    parse_json_run_config(R"({"train": {"lr": 1e309}})", "c.json");
    CATCH_FAIL("accepted");
  } catch (const InputError& e) {  // was nlohmann's out_of_range, a runtime failure (exit 1)
    CATCH_CHECK_THAT(std::string(e.what()), Contains("c.json: invalid JSON: number overflow"));
  }
}

CATCH_TEST_CASE("an empty value in a --set is refused, never read as the default") {
  for (const char* set : {"train.seed=", "train.threads=", "data.train=", "attention.variant= "}) {
    CATCH_INFO(set);
    CATCH_CHECK_THAT(error_of({set}), Contains("empty value for"));
  }
  CATCH_CHECK(parse_run_config("", "cfg.toml", {"data.val=\"\""}).data.val.empty());
}

CATCH_TEST_CASE("train.threads above the machine's cores is capped") {
  const auto cores = static_cast<int64_t>(std::thread::hardware_concurrency());
  const RunConfig c = parse_run_config("", "cfg.toml", {"train.threads=100000"});
  if (cores > 0) CATCH_CHECK(c.train.threads == cores);
  // Execution-only: the cap never changes the run id.
  CATCH_CHECK(config_hash(c) == config_hash(parse_run_config("", "cfg.toml")));
}

}  // namespace validation_test
