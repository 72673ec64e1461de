// A diverged run's checkpoint is never scored: evals::load_scored_model (eval, attn-stats,
// generate, a sweep's evaluation) refuses a checkpoint holding a NaN weight, naming it and the
// tensor (model/finite.h), where it used to evaluate it into an accuracy.
#include <filesystem>
#include <limits>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/config/run_config.h"
#include "evals/scored_model.h"
#include "model/tiny_checkpoint.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace nonfinite_model_test {

using namespace attnbench;

CATCH_TEST_CASE("scored model: a checkpoint with a NaN weight is refused, the tensor named") {
  testing::TinyCheckpoint t("ab_nonfinite");
  t.save(3);
  CATCH_CHECK_NOTHROW(evals::load_scored_model(t.run, "cpu", "--device", ""));
  {
    torch::NoGradGuard no_grad;
    t.net->named_parameters()["final_norm.weight"].view(-1)[2] = std::numeric_limits<float>::quiet_NaN();
  }
  t.save(4);
  std::string message;
  try {
    evals::load_scored_model(t.run, "cpu", "--device", "");
  } catch (const UsageError&) {
    CATCH_FAIL("a usage error (exit 2); a diverged model is a runtime failure (exit 1)");
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  CATCH_CHECK_THAT(message, Catch::Contains(t.checkpoint().string()) &&
                                Catch::Contains("tensor final_norm.weight (1 of") &&
                                Catch::Contains("not scored"));
}

}  // namespace nonfinite_model_test
