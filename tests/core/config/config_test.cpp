// Run-config parsing, overrides, validation, canonical JSON and run ids.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/config/run_config.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace config_test {

using namespace attnbench;
using namespace attnbench::config;
using Catch::Matchers::Contains;

namespace {
RunConfig parse(const std::string& text, const std::vector<std::string>& sets = {}) {
  return parse_run_config(text, "cfg.toml", sets);
}
std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    parse(text, sets);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

CATCH_TEST_CASE("empty config resolves the tiny preset and the softmax baseline") {
  RunConfig c = parse("");
  CATCH_CHECK(c.model.n_layer == 2);
  CATCH_CHECK(c.model.d_model == 128);
  CATCH_CHECK(c.model.n_head == 4);
  CATCH_CHECK(c.model.d_ffn == 512);  // round_up(8 * 128 / 3 = 341, 256)
  CATCH_CHECK(c.model.padded_vocab() == 50304);
  CATCH_CHECK(c.attention.variant == "softmax");
  CATCH_CHECK(c.attention.get_string("position") == "rope");
  CATCH_CHECK(c.attention.get_float("rope_theta") == 10000.0);
  CATCH_CHECK_FALSE(c.attention.has("tau_form"));  // does not apply to softmax
}

CATCH_TEST_CASE("presets give the sizes of docs/model.md") {
  auto m = [](const std::string& p) { return parse("[model]\npreset = \"" + p + "\"").model; };
  CATCH_CHECK(m("small").n_layer == 6);
  CATCH_CHECK(m("small").d_ffn == 1024);
  CATCH_CHECK(m("125m").d_model == 768);
  CATCH_CHECK(m("340m").d_ffn == 2816);
  CATCH_CHECK(m("340m").n_head == 16);
  CATCH_CHECK(m("760m").d_ffn == 4096);
  CATCH_CHECK(parse("[model]\npreset = \"small\"\nn_layer = 3").model.n_layer == 3);
}

CATCH_TEST_CASE("unknown keys name file:line:col and the nearest valid key") {
  CATCH_CHECK_THAT(error_of("[train]\nsteps = 3\nlrr = 1e-3\n"),
                   Contains("cfg.toml:3:1") && Contains("unknown key train.lrr") &&
                       Contains("did you mean 'lr'"));
  CATCH_CHECK_THAT(error_of("[trian]\nlr = 1.0\n"),
                   Contains("cfg.toml:1:2") && Contains("did you mean 'train'"));
  CATCH_CHECK_THAT(error_of("[attention]\nvariant = \"lazy\"\ntau_innit = 0.5\n"),
                   Contains("cfg.toml:3:1") && Contains("did you mean 'tau_init'"));
  CATCH_CHECK_THAT(error_of("[attention]\nvariant = \"lazzy\"\n"),
                   Contains("cfg.toml:2:1") && Contains("did you mean 'lazy'"));
}

CATCH_TEST_CASE("n_kv_head equal to n_head is no grouping: the default's run id") {
  // tiny has 4 heads; 2 key/value heads is another model, another run id.
  const auto plain = parse_run_config("", "cfg.toml");
  const auto four = parse_run_config("[model]\nn_kv_head = 4\n", "cfg.toml");
  const auto two = parse_run_config("[model]\nn_kv_head = 2\n", "cfg.toml");
  CATCH_CHECK(four.model.n_kv_head == 0);
  CATCH_CHECK(config_hash(four) == config_hash(plain));
  CATCH_CHECK(two.model.kv_heads() == 2);
  CATCH_CHECK(config_hash(two) != config_hash(plain));
}

CATCH_TEST_CASE("wrong types and impossible values are rejected before any work") {
  CATCH_CHECK_THAT(error_of("[train]\nsteps = \"ten\"\n"),
                   Contains("cfg.toml:2:9") && Contains("train.steps must be of type int"));
  CATCH_CHECK_THAT(error_of("[model]\nd_model = 130\nn_head = 4\n"),
                   Contains("model.n_head = 4 does not divide model.d_model = 130"));
  CATCH_CHECK_THAT(error_of("[model]\nn_kv_head = 3\n"),
                   Contains("cfg.toml:2:") && Contains("model.n_kv_head = 3 does not divide model.n_head = 4"));
  CATCH_CHECK_THAT(error_of("[model]\nn_kv_head = -1\n"), Contains("model.n_kv_head must be >= 0"));
  CATCH_CHECK_THAT(error_of("[train]\n\nlr = 0.0\n"),
                   Contains("cfg.toml:3:6") && Contains("train.lr must be in (0, 1000]"));
  CATCH_CHECK_THAT(error_of("[train]\nlr = -1\n"), Contains("train.lr must be in (0, 1000]"));
  CATCH_CHECK_THAT(error_of("[train]\nbatch_size = 4\nbatch_tokens = 1000\n"),
                   Contains("multiple of train.batch_size * model.context_length = 1024"));
  CATCH_CHECK_THAT(error_of("[attention]\nvariant = \"lazy\"\ntau_form = \"per_tokn\"\n"),
                   Contains("did you mean 'per_token'"));
  CATCH_CHECK_THAT(error_of("[attention]\nbackend = \"fast\"\n"),
                   Contains("attention.backend") && Contains("auto, eager, fused"));
  CATCH_CHECK_THAT(error_of("[model]\nd_model = 132\nn_head = 4\n"),  // head dim 33
                   Contains("RoPE needs an even head dimension"));
  CATCH_CHECK_THAT(error_of("[train]\nlr = [1, 2]\n"), Contains("got array"));
  CATCH_CHECK_THAT(error_of("[train\nlr = 1\n"), Contains("cfg.toml:1") && Contains("invalid TOML"));
  CATCH_CHECK_THAT(error_of("[data]\nfixed_token_position = 256\n"),
                   Contains("data.fixed_token_position"));
}

CATCH_TEST_CASE("command-line overrides take TOML values, bare words as strings, and are validated") {
  RunConfig c = parse("[train]\nlr = 1e-3\n",
                      {"train.lr=2e-3", "attention.variant=lazy", "attention.tau_init=0",
                       "eval.tasks=[\"piqa\", \"copa\"]", "train.steps=7"});
  CATCH_CHECK(c.train.lr == 2e-3);
  CATCH_CHECK(c.train.steps == 7);
  CATCH_CHECK(c.attention.variant == "lazy");
  CATCH_CHECK(c.attention.get_float("tau_init") == 0.0);
  CATCH_CHECK(c.eval.tasks == std::vector<std::string>{"piqa", "copa"});
  CATCH_CHECK(parse("", {"train.lr=1"}).train.lr == 1.0);  // ints widen to floats
  CATCH_CHECK_THAT(error_of("", {"train.lrr=1"}),
                   Contains("--set train.lrr") && Contains("did you mean 'lr'"));
  CATCH_CHECK_THAT(error_of("", {"train.steps=abc"}), Contains("--set train.steps"));
  CATCH_CHECK_THAT(error_of("", {"trainsteps"}), Contains("expected KEY=VALUE"));
}

CATCH_TEST_CASE("the lazy preset is the paper's method and every part stays overridable") {
  RunConfig c = parse("[attention]\nvariant = \"lazy\"\n");
  CATCH_CHECK(c.attention.get_string("position") == "rope+distance_bias");
  CATCH_CHECK(c.attention.get_string("normalizer") == "elastic");
  CATCH_CHECK(c.attention.get_string("tau_form") == "per_head_over_len");
  CATCH_CHECK(c.attention.get_float("tau_init") == -1.0);
  CATCH_CHECK(c.attention.get_bool("renormalize") == false);
  CATCH_CHECK(c.attention.get_int("bias_window") == 1024);
  CATCH_CHECK_FALSE(c.attention.has("tau_scale"));  // only for per_token
  RunConfig p = parse("[attention]\nvariant = \"lazy\"\ntau_form = \"per_token\"\n");
  CATCH_CHECK(p.attention.get_string("tau_scale") == "inv_len");
}

CATCH_TEST_CASE("run ids: stable under reordering, changed by any semantic change") {
  std::string a = "[model]\npreset = \"tiny\"\ncontext_length = 64\n[train]\nlr = 1e-3\nsteps = 5\n";
  std::string b = "[train]\nsteps = 5\nlr = 0.001\n[model]\ncontext_length = 64\npreset = \"tiny\"\n";
  CATCH_CHECK(config_hash(parse(a)) == config_hash(parse(b)));
  CATCH_CHECK(canonical_json(parse(a)) == canonical_json(parse(b)));
  CATCH_CHECK(config_hash(parse(a)).size() == 12);
  // Writing a default explicitly is not a change.
  CATCH_CHECK(config_hash(parse(a)) == config_hash(parse(a + "seed = 0\n")));
  CATCH_CHECK(config_hash(parse("[attention]\nvariant = \"lazy\"")) ==
              config_hash(parse("[attention]\nvariant = \"lazy\"\ntau_init = -1.0")));
  // Semantic changes give new ids.
  std::string base = config_hash(parse(a));
  CATCH_CHECK(config_hash(parse(a, {"train.lr=2e-3"})) != base);
  CATCH_CHECK(config_hash(parse(a, {"train.seed=1"})) != base);
  CATCH_CHECK(config_hash(parse(a, {"attention.variant=alibi"})) != base);
  CATCH_CHECK(config_hash(parse(a, {"attention.rope_theta=500000"})) != base);
  CATCH_CHECK(config_hash(parse(a, {"model.n_layer=3"})) != base);
  // Execution-only settings and evaluation settings keep the id (same trained model).
  CATCH_CHECK(config_hash(parse(a, {"train.threads=1"})) == base);
  CATCH_CHECK(config_hash(parse(a, {"attention.backend=eager"})) == base);
  CATCH_CHECK(config_hash(parse(a, {"eval.limit=10"})) == base);
  // A parameter that does not apply (renormalize under softmax) is dropped: same id.
  CATCH_CHECK(config_hash(parse(a, {"attention.renormalize=true"})) == base);
}

CATCH_TEST_CASE("canonical JSON round-trips through from_json") {
  RunConfig c = parse("[attention]\nvariant = \"lazy\"\ntau_form = \"per_token\"\n[eval]\n"
                      "tasks = [\"piqa\"]\nlimit = 3\ntask_limits = { wikitext = 2 }\n"
                      "contexts = [512, 1024]\n[train]\nlr = 1\n");
  CATCH_CHECK(c.eval.limit_for("wikitext") == 2);
  CATCH_CHECK(c.eval.contexts == std::vector<int64_t>{512, 1024});
  CATCH_CHECK(config_hash(c) == config_hash(parse("[attention]\nvariant = \"lazy\"\n"
                                                  "tau_form = \"per_token\"\n[train]\nlr = 1\n")));
  CATCH_CHECK_THAT(error_of("[eval]\ncontexts = [128, 0]\n"),
                   Contains("eval.contexts must be an array of ints >= 1"));
  CATCH_CHECK_THAT(error_of("[eval]\ncontexts = 128\n"), Contains("eval.contexts must be an array"));
  CATCH_CHECK(c.eval.limit_for("piqa") == 3);
  CATCH_CHECK_THAT(error_of("[eval]\ntask_limits = { wikitext = 0 }\n"),
                   Contains("eval.task_limits.wikitext must be an int >= 1"));
  RunConfig r = from_json(to_json(c));
  CATCH_CHECK(canonical_json(r) == canonical_json(c));
  CATCH_CHECK(config_hash(r) == config_hash(c));
  auto flat = flatten(c);
  auto find = [&](const std::string& k) {
    for (auto& [key, v] : flat)
      if (key == k) return to_string(v);
    return std::string("(missing)");
  };
  CATCH_CHECK(find("attention.tau_form") == "per_token");
  CATCH_CHECK(find("train.lr") == "1");
  CATCH_CHECK(find("eval.tasks") == "piqa");
}

// Run ids are the names of existing run folders and store rows: keys added later must not change
// them. The literals were printed by `attnbench config` before train.precision, tf32,
// deterministic and peak_flops existed.
CATCH_TEST_CASE("run ids of existing configs survive the keys added since") {
  const std::string quickstart_run =  // sweeps/quickstart_run.toml without its comments
      "[model]\npreset = \"tiny\"\ncontext_length = 256\n"
      "[train]\nsteps = 50\nbatch_size = 4\nlr = 2e-3\nwarmup_steps = 10\neval_interval = 25\n"
      "eval_tokens = 16384\ncheckpoint_interval = 25\nlog_interval = 10\n"
      "[eval]\nbatch_size = 32\n";
  CATCH_CHECK(config_hash(parse(quickstart_run)) == "02bded76b70b");
  CATCH_CHECK(config_hash(parse(quickstart_run, {"attention.variant=lazy"})) == "bbec1254c157");
  {
    const std::string dir = ATTNBENCH_SOURCE_DIR;
    CATCH_CHECK(config_hash(load_run_config(dir + "/sweeps/quickstart_run.toml")) == "02bded76b70b");
    // The tiny preset's data paths moved to where the quickstart writes its shards (the old ones
    // named a folder nothing creates); with the old paths its id is the one printed then.
    CATCH_CHECK(config_hash(load_run_config(
                    dir + "/sweeps/presets/tiny.toml",
                    {"data.train=data/shards/wikipedia_en/wikipedia_en_train_*.bin",
                     "data.val=data/shards/wikipedia_en/wikipedia_en_val_*.bin"})) == "468ee22242da");
    CATCH_CHECK(config_hash(load_run_config(dir + "/sweeps/presets/125m.toml")) == "80b3e418adc3");
  }
  // Written out at their defaults, the new keys change nothing either.
  CATCH_CHECK(config_hash(parse(quickstart_run, {"train.precision=fp32", "train.tf32=false",
                                                 "train.deterministic=false",
                                                 "train.peak_flops=0"})) == "02bded76b70b");
}

CATCH_TEST_CASE("precision enters the run id when not fp32 (tf32, deterministic, peak_flops never do)") {
  const std::string a = "[train]\nsteps = 3\n";
  const std::string base = config_hash(parse(a));
  CATCH_CHECK(config_hash(parse(a, {"train.precision=bf16"})) != base);
  CATCH_CHECK(config_hash(parse(a, {"train.tf32=true"})) == base);
  CATCH_CHECK(config_hash(parse(a, {"train.deterministic=true"})) == base);
  CATCH_CHECK(config_hash(parse(a, {"train.peak_flops=9.89e14"})) == base);
  CATCH_CHECK(config_hash(parse(a, {"train.device=cuda"})) == base);
  // Stored with the run all the same, and read back.
  RunConfig c = parse(a, {"train.precision=bf16", "train.tf32=true", "train.peak_flops=1e12"});
  CATCH_CHECK(to_json(c)["train"]["precision"] == "bf16");
  RunConfig r = from_json(to_json(c));
  CATCH_CHECK(r.train.precision == "bf16");
  CATCH_CHECK(r.train.tf32);
  CATCH_CHECK(r.train.peak_flops == 1e12);
  CATCH_CHECK(config_hash(r) == config_hash(c));
  // A config stored before the keys existed reads back with their defaults and its old id.
  nlohmann::json old = to_json(parse(a));
  for (const char* k : {"precision", "tf32", "deterministic", "peak_flops"}) old["train"].erase(k);
  CATCH_CHECK(from_json(old).train.precision == "fp32");
  CATCH_CHECK(config_hash(from_json(old)) == base);
}

CATCH_TEST_CASE("precision and peak_flops are validated") {
  CATCH_CHECK_THAT(error_of("[train]\nprecision = \"bf15\"\n"),
                   Contains("train.precision must be one of fp32, bf16") &&
                       Contains("did you mean 'bf16'"));
  CATCH_CHECK_THAT(error_of("[train]\npeak_flops = -1.0\n"), Contains("train.peak_flops must be in [0, 1e+21]"));
  CATCH_CHECK_THAT(error_of("[train]\ntf32 = 1\n"), Contains("train.tf32 must be of type bool"));
}

}  // namespace config_test
