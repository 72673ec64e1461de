// Greedy generation (evals/generate.h, docs/generation.md): the model's cache generates exactly the
// tokens that recomputing every row gives, on random tiny models of several variants; and lm-eval's
// generate_until rules (max_gen_toks, end-of-text, stop strings and their lookback window, the
// order of the cut, left truncation) on a stub whose greedy continuation is a script, decoded with
// the real GPT-2 tokenizer ($ATTNBENCH_DATA: skipped when unset, failing when a file is missing).
#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/config/run_config.h"
#include "core/data/tokenizer.h"
#include "evals/decoder_lm_adapter.h"
#include "evals/decoding.h"
#include "evals/generate.h"
#include "model/decoder.h"
#include "tests/test_skip.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace generate_test {

using namespace attnbench;
using namespace attnbench::evals;

namespace {

constexpr int64_t kGpt2Vocab = 50257;
constexpr int64_t kEot = data::Tokenizer::kEndOfText;

// A DecodingState that records what it is fed and the logits it returns.
class Recorded : public DecodingState {
 public:
  explicit Recorded(std::unique_ptr<DecodingState> inner) : inner_(std::move(inner)) {}
  int64_t length() const override { return inner_->length(); }
  torch::Tensor feed_states(const torch::Tensor& tokens, const torch::Tensor& positions) override {
    fed.push_back(tokens.size(1));
    return inner_->feed_states(tokens, positions);
  }
  torch::Tensor logits(const torch::Tensor& states) override {
    torch::Tensor out = inner_->logits(states);
    seen.push_back(out.to(torch::kCPU));
    return out;
  }
  std::unique_ptr<DecodingState> select(const std::vector<int64_t>& rows) const override {
    return inner_->select(rows);
  }
  std::vector<int64_t> fed;  // tokens per feed
  std::vector<torch::Tensor> seen;  // logits per feed

 private:
  std::unique_ptr<DecodingState> inner_;
};

// A model whose greedy continuation of a `prompt_len`-token prompt is `script`: position t
// predicts script[t + 1 - prompt_len] (past its end, the last entry). Logits are 0 but 1 at the
// scripted token (none for -1: every token ties) and 100 at a padding column beyond the
// vocabulary, which greedy search must never pick. `rows` holds every row it is given.
class ScriptStub : public LanguageModel {
 public:
  ScriptStub(int64_t max_length, int64_t prompt_len, std::vector<int64_t> script,
             int64_t vocab = kGpt2Vocab)
      : max_length_(max_length), prompt_len_(prompt_len), script_(std::move(script)),
        vocab_(vocab) {}
  int64_t max_length() const override { return max_length_; }
  int64_t vocab_size() const override { return vocab_; }
  torch::Tensor logits(const torch::Tensor& tokens) override {
    const int64_t B = tokens.size(0), T = tokens.size(1);
    torch::Tensor out = torch::zeros({B, T, vocab_ + 1}, torch::kFloat32);
    out.select(2, vocab_).fill_(100.0f);
    for (int64_t t = 0; t < T; ++t) {
      const int64_t i = std::clamp<int64_t>(t + 1 - prompt_len_, 0, script_.size() - 1);
      if (script_[i] >= 0) out.select(1, t).select(1, script_[i]).fill_(1.0f);
    }
    for (int64_t b = 0; b < B; ++b) {
      auto row = tokens[b].contiguous();
      rows.emplace_back(row.data_ptr<int64_t>(), row.data_ptr<int64_t>() + T);
    }
    return out;
  }
  std::vector<std::vector<int64_t>> rows;

 private:
  int64_t max_length_, prompt_len_;
  std::vector<int64_t> script_;
  int64_t vocab_;
};

const StopCriterion never = [](const std::vector<int64_t>&) { return false; };

// The GPT-2 tokenizer from $ATTNBENCH_DATA (loaded once), or nullptr with the case reported
// Skipped when it is unset (tests/test_skip.h); a missing file throws UsageError, which fails it.
const data::TextTokenizer* tokenizer_or_skip() {
  if (!attnbench::testing::data_root_or_skip("the GPT-2 tokenizer")) return nullptr;
  static const auto tokenizer = data::gpt2_text_tokenizer(data::gpt2_tokenizer_dir());
  return tokenizer.get();
}

// GPT-2's prefix and EOS token (end-of-text for both).
const GenerationTokens kGpt2Tokens{kEot, kEot};

// A tokenizer whose only token that matters is its EOS, "</s>" (id 2): for the stop strings.
class EosOnly : public data::TextTokenizer {
 public:
  std::vector<uint32_t> encode(std::string_view) const override { return {}; }
  std::string decode(const std::vector<uint32_t>& ids) const override {
    return ids == std::vector<uint32_t>{2} ? "</s>" : "?";
  }
  size_t vocab_size() const override { return 3; }
  bool is_special(uint32_t id) const override { return id == 2; }
  std::optional<uint32_t> bos_id() const override { return std::nullopt; }
  std::optional<uint32_t> eos_id() const override { return 2; }
  bool adds_bos() const override { return false; }
  bool decodes_every_id() const override { return true; }
};

std::vector<int64_t> ids(const data::TextTokenizer& tok, const std::string& text) {
  const std::vector<uint32_t> e = tok.encode(text);
  return {e.begin(), e.end()};
}

// One token per character of `chars` (ASCII letters and digits are single byte tokens).
std::vector<int64_t> char_tokens(const data::TextTokenizer& tok, const std::string& chars) {
  std::vector<int64_t> out;
  for (char c : chars) out.push_back(ids(tok, std::string(1, c)).at(0));
  return out;
}

config::RunConfig tiny_config(const std::string& variant, const std::string& backend) {
  return config::parse_run_config("[model]\npreset = \"tiny\"\ncontext_length = 48\n"
                                  "[attention]\nvariant = \"" + variant + "\"\nbackend = \"" +
                                      backend + "\"\n",
                                  "generate-test");
}

}  // namespace

CATCH_TEST_CASE("greedy generation on the model's cache equals recomputing every row") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"softmax", "auto"}, {"lazy", "auto"}, {"forgetting", "auto"}, {"stick_breaking", "eager"}};
  for (const auto& [variant, backend] : cases) {
    CATCH_SECTION(variant + " " + backend) {
      torch::manual_seed(7);
      config::RunConfig cfg = tiny_config(variant, backend);
      DecoderLMAdapter lm(model::DecoderLM(cfg).ptr());
      const torch::Tensor prompt = torch::randint(0, kGpt2Vocab, {11}, torch::kInt64);
      const std::vector<int64_t> context(prompt.data_ptr<int64_t>(),
                                         prompt.data_ptr<int64_t>() + 11);

      std::unique_ptr<DecodingState> own = lm.start_decoding();
      CATCH_REQUIRE(own != nullptr);  // the adapter has a cache: this compares two paths
      Recorded cached(std::move(own));
      Recorded recomputed(std::make_unique<RecomputeDecoding>(lm));
      const auto a = greedy_tokens(lm, cached, context, kGpt2Tokens, 20, never);
      const auto b = greedy_tokens(lm, recomputed, context, kGpt2Tokens, 20, never);
      CATCH_CHECK(a == b);
      CATCH_CHECK(a.size() == 20);
      // The context is fed once, then one token per step (the last token is not fed).
      CATCH_CHECK(cached.fed == std::vector<int64_t>{11, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                                     1, 1, 1, 1, 1});
      CATCH_REQUIRE(cached.seen.size() == recomputed.seen.size());
      double worst = 0;
      for (size_t i = 0; i < cached.seen.size(); ++i) {
        worst = std::max(worst, (cached.seen[i] - recomputed.seen[i]).abs().max().item<double>());
      }
      CATCH_INFO("largest logit difference " << worst);
      CATCH_CHECK(worst <= 1e-4);

      if (const data::TextTokenizer* tok = tokenizer_or_skip()) {
        GenerationRequest request{context, {"\n\n"}, 20};
        Generation g_cached = generate_until(lm, *tok, request);
        RecomputeDecoding recompute(lm);
        Generation g_recomputed = generate_until(lm, recompute, *tok, request);
        CATCH_CHECK(g_cached.tokens == g_recomputed.tokens);
        CATCH_CHECK(g_cached.text == g_recomputed.text);
      }
    }
  }
}

CATCH_TEST_CASE("max_gen_toks must leave room for the context") {
  ScriptStub stub(16, 3, {-1});
  RecomputeDecoding state(stub);
  for (int64_t bad : {int64_t{16}, int64_t{17}, int64_t{0}, int64_t{-1}}) {
    CATCH_INFO("max_gen_toks " << bad);
    try {
      greedy_tokens(stub, state, {1, 2, 3}, kGpt2Tokens, bad, never);
      CATCH_FAIL("accepted");
    } catch (const UsageError& e) {
      CATCH_CHECK_THAT(e.what(), Catch::Contains("max_gen_toks = " + std::to_string(bad)) &&
                                     Catch::Contains("max_length 16"));
    }
  }
  CATCH_CHECK(stub.rows.empty());  // refused before any forward pass
}

CATCH_TEST_CASE("greedy_tokens left-truncates the context, ties go to the first id, not padding") {
  // lm-eval: max_ctx_len = max_length - max_gen_toks = 12; the 20-token context keeps its last 12.
  std::vector<int64_t> context;
  for (int64_t i = 0; i < 20; ++i) context.push_back(100 + i);
  ScriptStub stub(16, 12, {-1});  // every token ties: the first (id 0) wins, padding never
  Recorded state(std::make_unique<RecomputeDecoding>(stub));
  const auto got = greedy_tokens(stub, state, context, kGpt2Tokens, 4, never);
  CATCH_CHECK(got == std::vector<int64_t>{0, 0, 0, 0});
  CATCH_REQUIRE(!stub.rows.empty());
  CATCH_CHECK(stub.rows.front() == std::vector<int64_t>(context.end() - 12, context.end()));
  CATCH_CHECK(stub.rows.back().size() == 15);  // 12 + 3 fed: within max_length
  CATCH_CHECK(state.fed == std::vector<int64_t>{12, 1, 1, 1});
  // A state that has been fed is refused: generation starts fresh.
  CATCH_CHECK_THROWS_AS(greedy_tokens(stub, state, context, kGpt2Tokens, 4, never), std::invalid_argument);
}

CATCH_TEST_CASE("an empty context starts from the prefix token, end-of-text") {
  ScriptStub stub(16, 1, {5});
  RecomputeDecoding state(stub);
  CATCH_CHECK(greedy_tokens(stub, state, {}, kGpt2Tokens, 2, never) == std::vector<int64_t>{5, 5});
  CATCH_CHECK(stub.rows.front() == std::vector<int64_t>{kEot});
}

CATCH_TEST_CASE("stop sequences: the decoded EOS appended once, the cut in lm-eval's order") {
  using V = std::vector<std::string>;
  const EosOnly tok;
  CATCH_CHECK(stop_sequences({}, tok) == V{"</s>"});
  CATCH_CHECK(stop_sequences({"\n", "Q:"}, tok) == V{"\n", "Q:", "</s>"});
  CATCH_CHECK(stop_sequences({"</s>", "\n"}, tok) == V{"</s>", "\n"});
  CATCH_CHECK(cut_at_stop_sequences("one\ntwo Q: x", {"Q:", "\n"}) == "one");
  CATCH_CHECK(cut_at_stop_sequences("abc", {"", "z"}) == "abc");  // "" is ignored
  // Each term cuts what the previous left: "bc" no longer occurs once "c" has cut "xabc" to "xab".
  CATCH_CHECK(cut_at_stop_sequences("xabc", {"c", "bc"}) == "xab");
  CATCH_CHECK(cut_at_stop_sequences("xabc", {"bc", "c"}) == "xa");
}

CATCH_TEST_CASE("generate_until: max_gen_toks, end-of-text and stop strings") {
  const data::TextTokenizer* tok = tokenizer_or_skip();
  if (!tok) return;
  const std::vector<int64_t> prompt = ids(*tok, "Q: say something\nA:");
  const auto P = static_cast<int64_t>(prompt.size());
  auto run = [&](std::vector<int64_t> script, std::vector<std::string> until, int64_t max_gen) {
    ScriptStub stub(64, P, std::move(script));
    return generate_until(stub, *tok, GenerationRequest{prompt, std::move(until), max_gen});
  };

  CATCH_SECTION("max_gen_toks tokens when nothing stops") {
    Generation g = run({ids(*tok, " a").at(0)}, {}, 5);
    CATCH_CHECK(g.tokens.size() == 5);
    CATCH_CHECK(g.text == " a a a a a");
  }
  CATCH_SECTION("end-of-text stops, is returned, and adds no text") {
    std::vector<int64_t> script = ids(*tok, " Hello world");
    script.push_back(kEot);
    script.push_back(ids(*tok, "x").at(0));
    Generation g = run(script, {}, 10);
    CATCH_CHECK(g.tokens == std::vector<int64_t>(script.begin(), script.end() - 1));
    CATCH_CHECK(g.text == " Hello world");
  }
  CATCH_SECTION("a stop string stops at the token that completes it and is cut off") {
    std::vector<int64_t> script = ids(*tok, " one two");
    script.push_back(ids(*tok, "\n\n").at(0));  // one token
    const std::vector<int64_t> stopped = script;
    for (int64_t t : ids(*tok, "three four")) script.push_back(t);
    Generation g = run(script, {"\n\n"}, 20);
    CATCH_CHECK(g.tokens == stopped);
    CATCH_CHECK(g.text == " one two");
  }
  CATCH_SECTION("\"\\n\" \"\\n\" generated as two tokens stops on \"\\n\\n\" (two spare tokens)") {
    std::vector<int64_t> script = char_tokens(*tok, "x\n\nyz");
    Generation g = run(script, {"\n\n"}, 20);
    CATCH_CHECK(g.tokens.size() == 3);
    CATCH_CHECK(g.text == "x");
  }
  CATCH_SECTION("a stop string spread over more tokens than its window does not stop") {
    // MultiTokenEOSCriteria looks back len(encode(term)) + 2 tokens only; the cut still applies.
    CATCH_REQUIRE(ids(*tok, "abcdef").size() + 2 < 6);
    Generation g = run(char_tokens(*tok, "zabcdefgh"), {"abcdef"}, 12);
    CATCH_CHECK(g.tokens.size() == 12);
    CATCH_CHECK(g.text == "z");
  }
  CATCH_SECTION("the generation stops on the first stop string; the cut follows their order") {
    Generation g = run(char_tokens(*tok, "xabcd"), {"c", "bc"}, 10);
    CATCH_CHECK(g.tokens.size() == 4);
    CATCH_CHECK(g.text == "xab");
  }
  CATCH_SECTION("an empty stop string stops after one token and cuts nothing") {
    Generation g = run({ids(*tok, " a").at(0)}, {""}, 10);
    CATCH_CHECK(g.tokens.size() == 1);
    CATCH_CHECK(g.text == " a");
  }
}

CATCH_TEST_CASE("GPT-2's TextTokenizer encodes \"<|endoftext|>\" as the end-of-text token") {
  const data::TextTokenizer* tok = tokenizer_or_skip();
  if (!tok) return;
  const data::Tokenizer plain = data::Tokenizer::load(data::gpt2_tokenizer_dir());
  const std::vector<int64_t> got = ids(*tok, "a<|endoftext|>b<|endoftext|>");
  CATCH_CHECK(got == std::vector<int64_t>{ids(*tok, "a")[0], kEot, ids(*tok, "b")[0], kEot});
  const std::vector<uint32_t> ordinary = plain.encode("plain text");
  CATCH_CHECK(ids(*tok, "plain text") == std::vector<int64_t>(ordinary.begin(), ordinary.end()));
}

CATCH_TEST_CASE("generate_until refuses a vocabulary the tokenizer cannot decode") {
  const data::TextTokenizer* tok = tokenizer_or_skip();
  if (!tok) return;
  ScriptStub stub(16, 1, {-1}, kGpt2Vocab + 1);
  CATCH_CHECK_THROWS_WITH(generate_until(stub, *tok, GenerationRequest{{1}, {}, 2}),
                          Catch::Contains("larger than the tokenizer's"));
  CATCH_CHECK(stub.rows.empty());
}

}  // namespace generate_test
