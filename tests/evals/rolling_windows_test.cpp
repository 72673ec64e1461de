// lm-eval's rolling windows (lm_eval/utils.py), on examples worked out by hand from its definition
// and docstring.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "evals/request_plan.h"
#include "evals/rolling_windows.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace rolling_windows_test {

using namespace attnbench::evals;
using V = std::vector<int64_t>;

CATCH_TEST_CASE("rolling windows match lm-eval's docstring example (max_seq_len 3, context_len 2)") {
  // Tokens 0..8, prefix P: windows (P 0 1 | 0 1 2), (1 2 3 | 3 4), (3 4 5 | 5 6), (5 6 7 | 7 8).
  const int64_t P = 99;
  auto w = rolling_token_windows({0, 1, 2, 3, 4, 5, 6, 7, 8}, P, 3, 2);
  CATCH_REQUIRE(w.size() == 4);
  CATCH_CHECK(w[0].input == V{P, 0, 1});
  CATCH_CHECK(w[0].predicted == V{0, 1, 2});
  CATCH_CHECK(w[1].input == V{1, 2, 3});
  CATCH_CHECK(w[1].predicted == V{3, 4});
  CATCH_CHECK(w[2].input == V{3, 4, 5});
  CATCH_CHECK(w[2].predicted == V{5, 6});
  CATCH_CHECK(w[3].input == V{5, 6, 7});
  CATCH_CHECK(w[3].predicted == V{7, 8});
  // Disjoint: input[: len(input) - len(pred) + 1].
  TokenWindow d = make_disjoint_window(w[1]);
  CATCH_CHECK(d.input == V{1, 2});
  CATCH_CHECK(d.predicted == V{3, 4});
}

CATCH_TEST_CASE("rolling windows with context_len 1 as loglikelihood_rolling uses them") {
  // Tokens 0..6, max_seq_len 3: pred_len = 3. First (P 0 1 | 0 1 2); then window_end 6:
  // input tokens[2:5] = 2 3 4, pred tokens[3:6] = 3 4 5; then window_end 7: input 3 4 5, pred 6.
  const int64_t P = 50256;
  auto w = rolling_token_windows({0, 1, 2, 3, 4, 5, 6}, P, 3, 1);
  CATCH_REQUIRE(w.size() == 3);
  std::vector<TokenWindow> d;
  for (const auto& x : w) d.push_back(make_disjoint_window(x));
  CATCH_CHECK(d[0].input == V{P});
  CATCH_CHECK(d[0].predicted == V{0, 1, 2});
  CATCH_CHECK(d[1].input == V{2});
  CATCH_CHECK(d[1].predicted == V{3, 4, 5});
  CATCH_CHECK(d[2].input == V{3, 4, 5});
  CATCH_CHECK(d[2].predicted == V{6});
  // Each becomes a request whose model input is the window's input again: (ctx + cont)[-4:][:-1].
  CATCH_CHECK(model_input({d[1].input, d[1].predicted}, 3).tokens == V{2, 3, 4});
  CATCH_CHECK(model_input({d[2].input, d[2].predicted}, 3).tokens == V{3, 4, 5});
  CATCH_CHECK(model_input({d[0].input, d[0].predicted}, 3).tokens == V{P, 0, 1});

  // Every token is predicted exactly once, in order.
  V all;
  for (const auto& x : d) all.insert(all.end(), x.predicted.begin(), x.predicted.end());
  CATCH_CHECK(all == V{0, 1, 2, 3, 4, 5, 6});
}

CATCH_TEST_CASE("rolling windows of short and empty documents") {
  CATCH_CHECK(rolling_token_windows({}, 7, 4, 1).empty());
  auto w = rolling_token_windows({5, 6}, 7, 4, 1);
  CATCH_REQUIRE(w.size() == 1);
  CATCH_CHECK(w[0].input == V{7, 5});
  CATCH_CHECK(w[0].predicted == V{5, 6});
  CATCH_CHECK_THROWS(rolling_token_windows({1}, 7, 4, 5));
  CATCH_CHECK_THROWS(rolling_token_windows({1}, 7, 4, 0));
}

}  // namespace rolling_windows_test
