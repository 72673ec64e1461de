// The sweeps and presets shipped in sweeps/ expand without error, and the paper's ablation has the
// cells its design calls for.
#include <torch/torch.h>  // before catch.hpp (docs/toolchain.md: glog's CHECK)

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "core/config/run_config.h"
#include "harness/sweep/expand.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace shipped_test {

namespace fs = std::filesystem;
using namespace attnbench;

namespace {
const fs::path kSweeps = fs::path(ATTNBENCH_SOURCE_DIR) / "sweeps";

// sweeps/ also holds plain run configs (e.g. the quickstart's); a sweep file has a [sweep] table.
bool is_sweep_file(const fs::path& p) {
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("[sweep]", 0) == 0) return true;
  }
  return false;
}
}

CATCH_TEST_CASE("every shipped sweep expands") {
  int n = 0;
  for (auto& entry : fs::directory_iterator(kSweeps)) {
    if (entry.path().extension() != ".toml" || !is_sweep_file(entry.path())) continue;
    CATCH_INFO(entry.path().string());
    auto e = sweep::expand(sweep::parse_sweep_file(entry.path()));
    CATCH_CHECK_FALSE(e.cells.empty());
    ++n;
  }
  CATCH_CHECK(n >= 1);
}

CATCH_TEST_CASE("every preset is a valid run config of its size") {
  for (std::string size : {"tiny", "small", "125m", "340m", "760m"}) {
    CATCH_INFO(size);
    auto cfg = config::load_run_config(kSweeps / "presets" / (size + ".toml"));
    CATCH_CHECK(cfg.model.preset == size);
    CATCH_CHECK_FALSE(cfg.data.train.empty());
    CATCH_CHECK_FALSE(cfg.data.val.empty());
    if (cfg.train.batch_tokens > 0) {
      CATCH_CHECK(cfg.train.batch_tokens % (cfg.train.batch_size * cfg.model.context_length) == 0);
    }
  }
}

CATCH_TEST_CASE("lazy_ablation has the paper's cells") {
  auto e = sweep::expand(sweep::parse_sweep_file(kSweeps / "lazy_ablation.toml"));
  // Elastic variants: {elastic, lazy} x tau_form {per_head_over_len, per_token} x renormalize
  // {false, true} x tau_init {-1, 0} = 16; softmax-normalised: softmax, alibi, rope_bias = 3;
  // times 3 seeds.
  const size_t expected = (2 * 2 * 2 * 2 + 3) * 3;
  CATCH_CHECK(e.cells.size() == expected);
  std::set<std::string> ids;
  std::map<std::string, int> per_variant;
  std::set<std::string> nine = {"piqa", "hellaswag", "winogrande", "arc_easy", "arc_challenge",
                                "boolq", "sciq", "copa", "openbookqa"};
  for (auto& c : e.cells) {
    ids.insert(c.id);
    ++per_variant[c.config.attention.variant];
    CATCH_CHECK(c.config.model.context_length == 4096);
    CATCH_CHECK(c.config.train.steps == 2000);  // included cells too
    CATCH_CHECK(std::set<std::string>(c.config.eval.tasks.begin(), c.config.eval.tasks.end()) == nine);
    const bool elastic = c.config.attention.get_string("normalizer") == "elastic";
    CATCH_CHECK(elastic == (c.config.attention.variant == "elastic" ||
                            c.config.attention.variant == "lazy"));
    CATCH_CHECK(c.config.attention.has("tau_form") == elastic);
  }
  CATCH_CHECK(ids.size() == expected);
  CATCH_CHECK(per_variant["elastic"] == 8 * 3);
  CATCH_CHECK(per_variant["lazy"] == 8 * 3);
  CATCH_CHECK(per_variant["softmax"] == 3);
  CATCH_CHECK(per_variant["alibi"] == 3);
  CATCH_CHECK(per_variant["rope_bias"] == 3);
}

}  // namespace shipped_test
