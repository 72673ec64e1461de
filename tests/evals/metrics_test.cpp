// Scoring rules and aggregations of lm-eval (task.py process_results, metrics.py), with expected
// values worked out by hand or taken from CPython's random module.
#include <torch/torch.h>

#include <cmath>

#include <catch2/catch.hpp>

#include "evals/metrics.h"
#include "evals/python_random.h"
#include "evals/text_units.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace metrics_test {

using namespace attnbench::evals;
using Catch::Detail::Approx;

CATCH_TEST_CASE("argmax takes the first maximum, as numpy does") {
  CATCH_CHECK(argmax_first({-1.0, -0.5, -0.5}) == 1);
  CATCH_CHECK(argmax_first({-2.0, -2.0}) == 0);
  CATCH_CHECK(argmax_first({-1.0, NAN, 0.0}) == 1);
}

CATCH_TEST_CASE("acc and acc_norm disagree when lengths differ, acc_norm counts characters") {
  // lls -2 (choice "ab", 2 chars: -1 per char) and -3 ("abcd", 4 chars: -0.75 per char).
  MultipleChoiceOutcome o = score_multiple_choice({-2.0, -3.0}, {"ab", "abcd"}, 1);
  CATCH_CHECK(o.pred == 0);
  CATCH_CHECK(o.pred_norm == 1);
  CATCH_CHECK(o.acc == 0.0);
  CATCH_CHECK(o.acc_norm == 1.0);
  // Characters, not bytes: lls -3 for "\u00e9\u00e9" (2 characters, 4 bytes) and -4 for "abc".
  // Per character -1.5 vs -1.33 picks choice 1; per byte (-0.75 vs -1.33) would pick choice 0.
  MultipleChoiceOutcome u = score_multiple_choice({-3.0, -4.0}, {"\u00e9\u00e9", "abc"}, 1);
  CATCH_CHECK(u.pred_norm == 1);  // by bytes it would be 0
  CATCH_CHECK(codepoint_length("\u00e9\u00e9") == 2);
  // Ties go to the first choice for both metrics.
  MultipleChoiceOutcome t = score_multiple_choice({-1.0, -1.0}, {"x", "y"}, 1);
  CATCH_CHECK(t.pred == 0);
  CATCH_CHECK(t.pred_norm == 0);
  CATCH_CHECK(t.acc == 0.0);
}

CATCH_TEST_CASE("mean stderr is the sample standard deviation over sqrt(n)") {
  // [1, 0, 1, 1]: mean 0.75; squared deviations 3 * 0.0625 + 0.5625 = 0.75; / (n-1) = 0.25;
  // sd 0.5; stderr 0.5 / 2 = 0.25.
  std::vector<double> items{1, 0, 1, 1};
  CATCH_CHECK(mean(items) == 0.75);
  CATCH_CHECK(sample_stddev(items) == Approx(0.5).epsilon(1e-15));
  CATCH_CHECK(mean_stderr(items) == Approx(0.25).epsilon(1e-15));
  CATCH_CHECK(std::isnan(mean_stderr({1.0})));
}

CATCH_TEST_CASE("perplexity, weighted perplexity and bits per byte") {
  // LAMBADA: exp(-mean) of per-document log-likelihoods: -(-1 - 3) / 2 = 2.
  CATCH_CHECK(perplexity({-1.0, -3.0}) == Approx(std::exp(2.0)));
  // WikiText: (ll, weight) = (-2, 1), (-4, 3): weighted mean -6/4 = -1.5.
  std::vector<WeightedLoglikelihood> items{{-2.0, 1.0}, {-4.0, 3.0}};
  CATCH_CHECK(weighted_perplexity(items) == Approx(std::exp(1.5)));
  CATCH_CHECK(bits_per_byte(items) == Approx(1.5 / std::log(2.0)));
}

CATCH_TEST_CASE("bits per byte stderr: the delta method for a ratio of sums") {
  // (-2, 1), (-4, 3): R = -6/4 = -1.5; residuals -2 + 1.5 = -0.5 and -4 + 4.5 = 0.5; sum of
  // squares 0.5; sqrt(2 / 1 * 0.5) / 4 = 0.25 nats per byte.
  std::vector<WeightedLoglikelihood> items{{-2.0, 1.0}, {-4.0, 3.0}};
  CATCH_CHECK(bits_per_byte_stderr(items) == Approx(0.25 / std::log(2.0)).epsilon(1e-15));
  // Every item at the same rate per byte: no spread, no error.
  CATCH_CHECK(bits_per_byte_stderr({{-1.0, 2.0}, {-3.0, 6.0}, {-0.5, 1.0}}) == 0.0);
  // Equal weights: the mean's stderr of ll / bytes, in bits ([-1, -3, -2] / 2: sd 0.5, n 3).
  CATCH_CHECK(bits_per_byte_stderr({{-1.0, 2.0}, {-3.0, 2.0}, {-2.0, 2.0}}) ==
              Approx(mean_stderr({-0.5, -1.5, -1.0}) / std::log(2.0)).epsilon(1e-12));
  CATCH_CHECK(std::isnan(bits_per_byte_stderr({{-1.0, 2.0}})));
}

CATCH_TEST_CASE("character counts and whitespace follow Python") {
  CATCH_CHECK(codepoint_length("a\u00e9\u4e2d\U0001F600") == 4);
  CATCH_CHECK(rstrip_length("ab \n\u00a0") == 2);
  CATCH_CHECK_THROWS(codepoint_length("\xc3"));
}

CATCH_TEST_CASE("PythonRandom reproduces CPython's random.Random") {
  // Values printed by CPython 3.11: random.Random(s).random().
  CATCH_CHECK(PythonRandom(0).random() == 0.8444218515250481);
  CATCH_CHECK(PythonRandom(1).random() == 0.13436424411240122);
  CATCH_CHECK(PythonRandom(42).random() == 0.6394267984578837);
  CATCH_CHECK(PythonRandom((uint64_t{1} << 40) + 7).random() == 0.6137037779936511);
  // random.Random(3).choices(range(10), k=8)
  CATCH_CHECK(PythonRandom(3).choices(10, 8) == std::vector<size_t>{2, 5, 3, 6, 6, 0, 0, 8});
}

CATCH_TEST_CASE("bootstrap stderr draws lm-eval's resamples") {
  // lm-eval's bootstrap_stderr(perplexity, xs, iters) run in CPython 3.11 (single-process path:
  // chunk i seeded with random.Random(i)): 4.304357975600961 for 2000 and for 2500 iterations
  // (2500 // 1000 = 2 chunks).
  std::vector<double> xs{-1.5, -0.25, -3.0, -2.0, -0.75, -4.5, -1.0};
  auto ppl = [](const std::vector<double>& v) { return perplexity(v); };
  CATCH_CHECK(bootstrap_stderr(ppl, xs, 2000) == Approx(4.304357975600961).epsilon(1e-12));
  CATCH_CHECK(bootstrap_stderr(ppl, xs, 2500) == Approx(4.304357975600961).epsilon(1e-12));
  CATCH_CHECK(std::isnan(bootstrap_stderr(ppl, xs, 0)));
}

}  // namespace metrics_test
