// A diverged run's checkpoint is never scored: evals::load_scored_model (eval, attn-stats,
// generate, a sweep's evaluation) refuses a checkpoint holding a NaN weight, naming it and the
// tensor (model/finite.h), where it used to evaluate it into an accuracy.
#include <unistd.h>

#include <filesystem>
#include <limits>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/config/run_config.h"
#include "evals/scored_model.h"
#include "model/checkpoint.h"
#include "model/decoder.h"

using namespace attnbench;
namespace fs = std::filesystem;

CATCH_TEST_CASE("scored model: a checkpoint with a NaN weight is refused, the tensor named") {
  const fs::path run = fs::temp_directory_path() / ("ab_nonfinite_" + std::to_string(::getpid()));
  fs::remove_all(run);
  fs::create_directories(run);
  const config::RunConfig cfg = config::parse_run_config(
      "[model]\npreset = \"tiny\"\nvocab_size = 32\ncontext_length = 16\n[attention]\n"
      "variant = \"softmax\"\nbackend = \"eager\"\n[data]\nfixed_token_id = 0\n",
      "test.toml");
  model::DecoderLM net(cfg);
  torch::optim::AdamW adamw(net->parameters());
  model::TrainState state;
  state.step = 3;
  model::save_checkpoint(run, cfg, *net, adamw, state);
  CATCH_CHECK_NOTHROW(evals::load_scored_model(run, "cpu", "--device", ""));

  {
    torch::NoGradGuard no_grad;
    net->named_parameters()["final_norm.weight"].view(-1)[2] = std::numeric_limits<float>::quiet_NaN();
  }
  state.step = 4;
  model::save_checkpoint(run, cfg, *net, adamw, state);
  std::string message;
  try {
    evals::load_scored_model(run, "cpu", "--device", "");
  } catch (const UsageError&) {
    CATCH_FAIL("a usage error (exit 2); a diverged model is a runtime failure (exit 1)");
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  CATCH_CHECK_THAT(message, Catch::Contains((run / "checkpoint").string()) &&
                                Catch::Contains("tensor final_norm.weight (1 of") &&
                                Catch::Contains("not scored"));
  fs::remove_all(run);
}
