// End-to-end scoring against stub models whose log-probabilities are known by construction
// (stub_model.h): each expected value below is arithmetic on the stub's probability table.
#include <torch/torch.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "evals/evaluator.h"
#include "evals/scorer.h"
#include "evals/tasks/task.h"
#include "stub_model.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace scoring_test {

using namespace attnbench::evals;
using attnbench::evals::testing::BigramStub;
using Catch::Detail::Approx;

namespace {

// Characters "abcdefgh ." are tokens 0..9.
const std::string kAlphabet = "abcdefgh .";
constexpr int64_t kV = 10;

TextEncoder char_encoder() {
  return [](std::string_view text) {
    std::vector<int64_t> ids;
    for (char c : text) {
      auto pos = kAlphabet.find(c);
      if (pos == std::string::npos) throw std::logic_error("stub encoder: unknown character");
      ids.push_back(static_cast<int64_t>(pos));
    }
    return ids;
  };
}

// p(next | cur) = 1/2 for the successor (cur + 1) mod V, 1/18 for each of the 9 others.
double successor_prob(int64_t cur, int64_t next) {
  return next == (cur + 1) % kV ? 0.5 : 0.5 / 9.0;
}
const double s = std::log(0.5);        // log-prob of the successor (the greedy token)
const double q = std::log(0.5 / 9.0);  // log-prob of any other token

Doc mc_doc(int64_t index, const std::string& context, const std::vector<std::string>& choices,
           int gold) {
  Doc d;
  d.index = index;
  for (const auto& c : choices) d.requests.push_back({context, " " + c});  // target delimiter " "
  d.choices = choices;
  d.gold = gold;
  return d;
}

EvalOptions options(int64_t batch_size = 32) {
  EvalOptions o;
  o.batch_size = batch_size;
  o.bootstrap_iters = 1000;
  o.log_samples = true;
  return o;
}

}  // namespace

CATCH_TEST_CASE("multiple choice: acc and acc_norm disagree, ties go to the first choice") {
  BigramStub model(kV, 64, successor_prob);
  // Doc 0, context "a": " b" = [space, b]: p(space|a) = q, p(b|space) = q -> 2q, 1 char: 2q per char.
  //   " bcd" = q + q + s + s (b->c, c->d successors), 3 chars: (2q + 2s) / 3 per char.
  //   2q > 2q + 2s, so acc picks "b"; (2q + 2s)/3 > 2q, so acc_norm picks "bcd" (gold).
  // Doc 1: two identical choices tie; gold is the second, both metrics pick the first.
  std::vector<Doc> docs{mc_doc(0, "a", {"b", "bcd"}, 1), mc_doc(1, "a", {"c", "c"}, 1)};
  TaskReport r = evaluate_docs(model, char_encoder(), "mc", OutputType::MultipleChoice,
                               {"acc", "acc_norm"}, docs, options());
  CATCH_REQUIRE(r.samples.size() == 4);
  CATCH_CHECK(r.samples[0].loglikelihood == Approx(2 * q).epsilon(1e-6));
  CATCH_CHECK(r.samples[1].loglikelihood == Approx(2 * q + 2 * s).epsilon(1e-6));
  CATCH_CHECK(r.samples[1].tokens == 4);
  CATCH_CHECK(r.samples[1].is_gold);
  // Each sample keeps its choice's length, acc_norm's denominator, for the paired tests.
  CATCH_CHECK(r.samples[0].choice_chars == std::optional<int64_t>{1});
  CATCH_CHECK(r.samples[1].choice_chars == std::optional<int64_t>{3});
  CATCH_CHECK(sample_rows(r)[1].choice_chars == std::optional<int64_t>{3});
  CATCH_CHECK(r.find("acc")->value == 0.0);
  CATCH_CHECK(r.find("acc_norm")->value == 0.5);
  // stderr of [1, 0]: sample sd sqrt(0.5) over sqrt(2) = 0.5.
  CATCH_CHECK(*r.find("acc_norm")->std_error == Approx(0.5));
  CATCH_CHECK(r.n == 2);
}

CATCH_TEST_CASE("loglikelihood: greedy flag, multi-token sums, perplexity") {
  BigramStub model(kV, 64, successor_prob);
  // "abc" + "de": d, e are successors: greedy, ll 2s. "abc" + "dg": g is not the successor of d.
  Doc a, b;
  a.index = 0;
  a.requests = {{"abc", "de"}};
  b.index = 1;
  b.requests = {{"abc", "dg"}};
  TaskReport r = evaluate_docs(model, char_encoder(), "lambada", OutputType::Loglikelihood,
                               {"perplexity", "acc"}, {a, b}, options());
  CATCH_CHECK(r.samples[0].is_greedy);
  CATCH_CHECK_FALSE(r.samples[1].is_greedy);
  CATCH_CHECK_FALSE(r.samples[0].choice_chars.has_value());  // no choices: stored as NULL
  CATCH_CHECK_FALSE(sample_rows(r)[0].choice_chars.has_value());
  CATCH_CHECK(r.samples[0].loglikelihood == Approx(2 * s).epsilon(1e-6));
  CATCH_CHECK(r.samples[1].loglikelihood == Approx(s + q).epsilon(1e-6));
  CATCH_CHECK(r.find("acc")->value == 0.5);
  CATCH_CHECK(r.find("perplexity")->value == Approx(std::exp(-(3 * s + q) / 2)).epsilon(1e-6));
  CATCH_REQUIRE(r.find("perplexity")->std_error.has_value());
  CATCH_CHECK(*r.find("perplexity")->std_error > 0);
  CATCH_CHECK(r.metrics[0].name == "perplexity");  // the task's order
}

CATCH_TEST_CASE("gold signals: log-likelihood and bits per byte of the gold continuation") {
  BigramStub model(kV, 64, successor_prob);
  // Doc 0 (gold "bcd"): " bcd" = 2q + 2s over 4 bytes (the delimiter counts). Doc 1 (gold "c"):
  // " c" = 2q over 2 bytes (" h" ties with it: the first wins). Wrong choices play no part.
  std::vector<Doc> docs{mc_doc(0, "a", {"b", "bcd"}, 1), mc_doc(1, "a", {"c", "h"}, 0)};
  TaskReport r = evaluate_docs(model, char_encoder(), "mc", OutputType::MultipleChoice,
                               {"acc", "acc_norm"}, docs, options());
  CATCH_REQUIRE(r.metrics.size() == 4);
  CATCH_CHECK(r.metrics[2].name == "logprob");  // after the task's metrics, in this order
  CATCH_CHECK(r.metrics[3].name == "bits_per_byte");
  const double ll0 = 2 * q + 2 * s, ll1 = 2 * q;
  CATCH_CHECK(r.find("logprob")->value == Approx((ll0 + ll1) / 2).epsilon(1e-6));
  // stderr of two items: |ll0 - ll1| / 2.
  CATCH_CHECK(*r.find("logprob")->std_error == Approx(std::abs(ll0 - ll1) / 2).epsilon(1e-6));
  const double ln2 = std::log(2.0), rate = (ll0 + ll1) / 6;  // nats per byte
  CATCH_CHECK(r.find("bits_per_byte")->value == Approx(-rate / ln2).epsilon(1e-6));
  // Delta method: residuals ll_i - rate * bytes_i; sqrt(2 / 1 * sum r^2) / 6 bytes.
  const double r0 = ll0 - rate * 4, r1 = ll1 - rate * 2;
  CATCH_CHECK(*r.find("bits_per_byte")->std_error ==
              Approx(std::sqrt(2 * (r0 * r0 + r1 * r1)) / 6 / ln2).epsilon(1e-6));
  // The lm-eval metrics are those of the same documents without the signals.
  CATCH_CHECK(r.find("acc")->value == 0.5);
  CATCH_CHECK(r.find("acc_norm")->value == 1.0);
}

CATCH_TEST_CASE("gold signals of a loglikelihood task count the target's bytes, a rolling task adds none") {
  BigramStub model(kV, 64, successor_prob);
  Doc a, b;
  a.requests = {{"abc", "de"}};     // 2s over 2 bytes
  b.index = 1;
  b.requests = {{"abc", "dg.."}};   // s + q (d->g) + q (g->.) + q (.->.) over 4 bytes
  TaskReport r = evaluate_docs(model, char_encoder(), "lambada", OutputType::Loglikelihood,
                               {"perplexity", "acc"}, {a, b}, options());
  const double ll0 = 2 * s, ll1 = s + 3 * q;
  CATCH_CHECK(r.find("logprob")->value == Approx((ll0 + ll1) / 2).epsilon(1e-6));
  // perplexity is exp(-logprob) of the same items: the two must agree.
  CATCH_CHECK(r.find("perplexity")->value == Approx(std::exp(-r.find("logprob")->value)));
  CATCH_CHECK(r.find("bits_per_byte")->value ==
              Approx(-(ll0 + ll1) / 6 / std::log(2.0)).epsilon(1e-6));
  CATCH_CHECK(reported_metrics(OutputType::LoglikelihoodRolling, {"bits_per_byte"}) ==
              std::vector<std::string>{"bits_per_byte"});
  CATCH_CHECK(reported_metrics(OutputType::Loglikelihood, {"logprob", "acc"}) ==
              std::vector<std::string>{"logprob", "acc", "bits_per_byte"});
}

CATCH_TEST_CASE("left truncation keeps the last max_length tokens of context + continuation") {
  BigramStub model(kV, 4, successor_prob);
  Doc d;
  d.requests = {{"abcdefg", "h"}};  // tokens 0..7; input (0..7)[-5:][:-1] = 3 4 5 6
  TaskReport r = evaluate_docs(model, char_encoder(), "t", OutputType::Loglikelihood, {"acc"},
                               {d}, options());
  CATCH_REQUIRE(model.rows.size() == 1);
  CATCH_CHECK(model.rows[0] == std::vector<int64_t>{3, 4, 5, 6});
  CATCH_CHECK(r.samples[0].loglikelihood == Approx(s).epsilon(1e-6));
  // A continuation longer than the model's window cannot be scored.
  Doc too_long;
  too_long.requests = {{"a", "bcdef"}};
  CATCH_CHECK_THROWS(evaluate_docs(model, char_encoder(), "t", OutputType::Loglikelihood, {"acc"},
                                   {too_long}, options()));
}

CATCH_TEST_CASE("an empty context is scored after the end-of-text token, greedy uses the first max") {
  // A uniform model over GPT-2's vocabulary: every token ties, so the argmax is token 0 ("a").
  const int64_t V = 50257;
  BigramStub model(V, 16, [V](int64_t, int64_t) { return 1.0 / static_cast<double>(V); });
  Doc aa, ab;
  aa.requests = {{"", "aa"}};
  ab.index = 1;
  ab.requests = {{"", "ab"}};
  TaskReport r = evaluate_docs(model, char_encoder(), "t", OutputType::Loglikelihood, {"acc"},
                               {aa, ab}, options());
  for (const auto& row : model.rows) CATCH_CHECK(row.front() == kEndOfText);
  CATCH_CHECK(r.samples[0].loglikelihood == Approx(2 * std::log(1.0 / V)).epsilon(1e-6));
  CATCH_CHECK(r.samples[0].is_greedy);        // "a" = token 0 is the first maximum
  CATCH_CHECK_FALSE(r.samples[1].is_greedy);  // "b" ties with "a", which comes first
}

CATCH_TEST_CASE("single-token continuations sharing a context use one forward row") {
  BigramStub model(kV, 64, successor_prob);
  // Context "ab", continuations " c", " d", " e": inputs (ctx + cont)[:-1] = "ab " for all three.
  std::vector<Doc> docs{mc_doc(0, "ab", {"c", "d", "e"}, 0)};
  TaskReport r = evaluate_docs(model, char_encoder(), "mc", OutputType::MultipleChoice, {"acc"},
                               docs, options());
  CATCH_CHECK(model.calls == 1);
  CATCH_CHECK(model.rows.size() == 1);
  CATCH_CHECK(r.forward.rows == 1);
  // p(space | b) = q; p(c | space): space (8) -> successor 9 ("."), so c is q; likewise d, e.
  for (const auto& sample : r.samples) CATCH_CHECK(sample.loglikelihood == Approx(2 * q).epsilon(1e-6));
}

CATCH_TEST_CASE("requests run longest first and results do not depend on the batch size") {
  std::vector<Doc> docs{mc_doc(0, "a", {"b", "bcdef", "hh"}, 0), mc_doc(1, "abcd", {"e", "f"}, 1),
                        mc_doc(2, "h", {"abc", "a b", "."}, 2)};
  BigramStub one(kV, 64, successor_prob), two(kV, 64, successor_prob), all(kV, 64, successor_prob);
  TaskReport r1 = evaluate_docs(one, char_encoder(), "mc", OutputType::MultipleChoice,
                                {"acc", "acc_norm"}, docs, options(1));
  TaskReport r2 = evaluate_docs(two, char_encoder(), "mc", OutputType::MultipleChoice,
                                {"acc", "acc_norm"}, docs, options(2));
  TaskReport r32 = evaluate_docs(all, char_encoder(), "mc", OutputType::MultipleChoice,
                                 {"acc", "acc_norm"}, docs, options(32));
  for (size_t i = 1; i < one.rows.size(); ++i) CATCH_CHECK(one.rows[i - 1].size() >= one.rows[i].size());
  CATCH_CHECK(all.calls == 1);
  CATCH_CHECK(one.calls == static_cast<int>(one.rows.size()));
  for (size_t i = 0; i < r1.samples.size(); ++i) {
    CATCH_CHECK(r1.samples[i].loglikelihood == r2.samples[i].loglikelihood);
    CATCH_CHECK(r1.samples[i].loglikelihood == r32.samples[i].loglikelihood);
  }
}

CATCH_TEST_CASE("partial evaluation: one continuation scored after several contexts (winogrande)") {
  BigramStub model(kV, 64, successor_prob);
  Doc d;
  d.requests = {{"ab", " cd"}, {"ag", " cd"}};  // choices differ in the context only; acc only
  d.gold = 1;
  TaskReport r = evaluate_docs(model, char_encoder(), "winogrande", OutputType::MultipleChoice,
                               {"acc"}, {d}, options());
  // Both: p(space|b or g) = q, p(c|space) = q, p(d|c) = s -> tie; the first wins, gold is 1.
  CATCH_CHECK(r.samples[0].loglikelihood == Approx(2 * q + s).epsilon(1e-6));
  CATCH_CHECK(r.find("acc")->value == 0.0);
  CATCH_CHECK_THROWS(evaluate_docs(model, char_encoder(), "winogrande",
                                   OutputType::MultipleChoice, {"acc_norm"}, {d}, options()));
}

CATCH_TEST_CASE("text a tokenizer turns into no tokens is refused, naming the task and document, "
                "not scored as certain") {
  BigramStub model(kV, 64, successor_prob);
  // A tokenizer that reads only the alphabet and drops whatever else (no unk token, no byte
  // fallback): "XY" is no tokens. lm-eval stops on the empty continuation.
  const TextEncoder lossy = [](std::string_view text) {
    std::vector<int64_t> ids;
    for (char c : text) {
      if (auto pos = kAlphabet.find(c); pos != std::string::npos) ids.push_back(static_cast<int64_t>(pos));
    }
    return ids;
  };
  Doc a;
  a.index = 7;
  a.requests = {{"abc", "XY"}};
  CATCH_CHECK_THROWS_AS(evaluate_docs(model, lossy, "lambada", OutputType::Loglikelihood, {"acc"},
                                      {a}, options()),
                        attnbench::UsageError);
  CATCH_CHECK_THROWS_WITH(evaluate_docs(model, lossy, "lambada", OutputType::Loglikelihood,
                                        {"acc"}, {a}, options()),
                          Catch::Contains("task lambada: document 7, request 0: the continuation "
                                          "'XY' encodes to no tokens"));
  Doc page;
  page.index = 3;
  page.text = "XYZ";
  page.word_count = 1;
  page.byte_count = 3;
  CATCH_CHECK_THROWS_WITH(evaluate_docs(model, lossy, "wikitext", OutputType::LoglikelihoodRolling,
                                        {"word_perplexity"}, {page}, options()),
                          Catch::Contains("task wikitext: document 3: its text 'XYZ' encodes to "
                                          "no tokens"));
}

CATCH_TEST_CASE("rolling log-likelihood predicts every token once with its true predecessor") {
  BigramStub model(kV, 4, successor_prob);
  Doc d;
  d.text = "ab cd efgh";  // 10 characters (tokens)
  d.word_count = 3;       // counted on the original page by the task; used as given
  d.byte_count = 12;
  TaskReport r = evaluate_docs(model, char_encoder(), "wikitext", OutputType::LoglikelihoodRolling,
                               {"word_perplexity", "byte_perplexity", "bits_per_byte"}, {d},
                               options());
  // A bigram model only sees the previous token, so the rolling windows must give exactly
  // log p(t0 | end-of-text) + sum_i log p(t_i | t_{i-1}).
  auto ids = char_encoder()(d.text);
  double ll = std::log(successor_prob(kEndOfText, ids[0]));
  for (size_t i = 1; i < ids.size(); ++i) ll += std::log(successor_prob(ids[i - 1], ids[i]));
  CATCH_CHECK(r.samples.size() == 3);  // windows of 4, 4 and 2 predicted tokens
  CATCH_CHECK(r.find("word_perplexity")->value == Approx(std::exp(-ll / 3)).epsilon(1e-6));
  CATCH_CHECK(r.find("byte_perplexity")->value == Approx(std::exp(-ll / 12)).epsilon(1e-6));
  CATCH_CHECK(r.find("bits_per_byte")->value == Approx(-ll / 12 / std::log(2.0)).epsilon(1e-6));
  CATCH_CHECK_FALSE(r.find("bits_per_byte")->std_error.has_value());
  for (const auto& row : model.rows) CATCH_CHECK(row.size() <= 4);
}

CATCH_TEST_CASE("request records are lm-eval's Instance arguments") {
  std::vector<Doc> docs{mc_doc(7, "Q: x\nA:", {"yes", "no"}, 0)};
  auto rec = request_records("boolq", OutputType::MultipleChoice, docs);
  CATCH_REQUIRE(rec.size() == 2);
  CATCH_CHECK(rec[1].doc == 7);
  CATCH_CHECK(rec[1].request == 1);
  CATCH_CHECK(rec[1].context == "Q: x\nA:");
  CATCH_CHECK(rec[1].continuation == " no");
  CATCH_CHECK(apply_limit(docs, 0).size() == 1);
  CATCH_CHECK(apply_limit({docs[0], docs[0], docs[0]}, 2).size() == 2);
}

CATCH_TEST_CASE("an answer longer than the model's context is refused naming the task and document") {
  // The longest of the answers that do not fit is named, with the count of documents that have one.
  // lm-eval never truncates a continuation: a PIQA answer longer than a small model's context
  // used to fail mid-sweep after training, without naming the task.
  BigramStub model(kV, 4, successor_prob);  // a context of 4 tokens
  const std::vector<Doc> docs = {mc_doc(0, "a", {"bc", "de"}, 0), mc_doc(7, "a", {"b", "bcdefg"}, 1)};
  const std::string expected = "task mc: document 7 has an answer of 7 tokens, longer than the "
                               "model's context of 4 tokens (documents with such an answer: 1 of 2)";
  CATCH_CHECK_THROWS_WITH(evaluate_docs(model, char_encoder(), "mc", OutputType::MultipleChoice,
                                        {"acc"}, docs, options()),
                          Catch::Contains(expected));
  TaskSpec spec;
  spec.name = "mc";
  spec.type = OutputType::MultipleChoice;
  const LoadedTask task{&spec, docs, 0};
  CATCH_CHECK_THROWS_AS(require_answers_fit(task, char_encoder(), options(), 4), attnbench::UsageError);
  CATCH_CHECK_THROWS_WITH(require_answers_fit(task, char_encoder(), options(), 4),
                          Catch::Contains(expected));
  CATCH_CHECK_NOTHROW(require_answers_fit(task, char_encoder(), options(), 7));
}

}  // namespace scoring_test
