// Hugging Face tokenizers (core/data/hf_tokenizer.h) against the tokenizers library itself: the
// ids, BOS and decoded text recorded by scripts/make-tokenizer-fixtures in
// tests/fixtures/tokenizers/<layout>/encodings.json, one layout per public model family; then
// what is refused, and with which message.
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/data/hf_tokenizer.h"

namespace fs = std::filesystem;
using attnbench::data::HFTokenizer;
using Ids = std::vector<uint32_t>;
using Json = nlohmann::json;
using Catch::Matchers::Contains;

namespace {

const fs::path kFixtures = fs::path(ATTNBENCH_SOURCE_DIR) / "tests/fixtures/tokenizers";
const std::vector<std::string> kLayouts = {"gpt2",   "llama3", "gpt4o",  "qwen2",
                                           "neox",   "llama2", "mistral", "mixed"};

Json read_json(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Json::parse(in);
}

const HFTokenizer& fixture(const std::string& layout) {
  static std::map<std::string, HFTokenizer> loaded;
  auto it = loaded.find(layout);
  if (it == loaded.end()) it = loaded.emplace(layout, HFTokenizer::load(kFixtures / layout)).first;
  return it->second;
}

// A scratch tokenizer folder: a fixture's files with tokenizer.json (and tokenizer_config.json)
// changed, or a tokenizer.json of its own.
class Edited {
 public:
  Edited(const std::string& layout, const std::function<void(Json&)>& edit_tokenizer,
         const std::function<void(Json&)>& edit_config = nullptr) {
    Json tokenizer = read_json(kFixtures / layout / "tokenizer.json");
    Json config = read_json(kFixtures / layout / "tokenizer_config.json");
    edit_tokenizer(tokenizer);
    if (edit_config) edit_config(config);
    std::ofstream(dir_ / "tokenizer.json") << tokenizer.dump();
    std::ofstream(dir_ / "tokenizer_config.json") << config.dump();
  }
  explicit Edited(const Json& tokenizer) {
    std::ofstream(dir_ / "tokenizer.json") << tokenizer.dump();
  }
  ~Edited() { fs::remove_all(dir_); }
  const fs::path& dir() const { return dir_; }

 private:
  static inline int counter_ = 0;
  fs::path dir_ = [] {
    fs::path d = fs::temp_directory_path() /
                 ("ab_hf_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::create_directories(d);
    return d;
  }();
};

}  // namespace

CATCH_TEST_CASE("HF tokenizers encode and decode as the tokenizers library", "[hf_tokenizer]") {
  for (const std::string& layout : kLayouts) {
    const HFTokenizer& t = fixture(layout);
    const Json fixture_file = read_json(kFixtures / layout / "encodings.json");
    const Json& cases = fixture_file["cases"];
    CATCH_REQUIRE(cases.size() >= 40);
    for (const Json& d : fixture_file["decodes"]) {  // arbitrary ids: lossy bytes, specials
      CATCH_INFO(layout << ": decode " << d["ids"].dump());
      CATCH_CHECK(t.decode(d["ids"].get<Ids>()) == d["decoded"].get<std::string>());
    }
    for (const Json& c : cases) {
      const std::string text = c["text"].get<std::string>();
      const Ids ids = c["ids"].get<Ids>();
      CATCH_INFO(layout << ": " << Json(text).dump());
      CATCH_CHECK(t.encode(text) == ids);
      Ids with_special = ids;
      if (t.adds_bos()) with_special.insert(with_special.begin(), *t.bos_id());
      CATCH_CHECK(with_special == c["ids_with_special"].get<Ids>());
      CATCH_CHECK(t.decode(ids) == c["decoded"].get<std::string>());
    }
  }
}

CATCH_TEST_CASE("HF tokenizers merge by merge rank and honour ignore_merges", "[hf_tokenizer]") {
  // Expected ids as tokenizers 0.23.3 gives them for these files.
  auto pairs = [](std::initializer_list<std::pair<const char*, const char*>> list) {
    Json merges = Json::array();
    for (const auto& [a, b] : list) merges.push_back(Json::array({a, b}));
    return merges;
  };
  auto bpe = [](Json vocab, Json merges, bool ignore_merges) {
    return Json{{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges},
                           {"ignore_merges", ignore_merges}}}};
  };
  // The pair merged first is the one listed first, although "bc" has the lower id: tiktoken's rule
  // (core/data/tokenizer.h) would give [a, bc].
  Edited rank(bpe({{"a", 0}, {"b", 1}, {"c", 2}, {"bc", 3}, {"ab", 4}},
                  pairs({{"a", "b"}, {"b", "c"}}), false));
  CATCH_CHECK(HFTokenizer::load(rank.dir()).encode("abc") == Ids{4, 2});
  // "abc" is a token no merge makes: only ignore_merges gives it; "x" is unknown, without an
  // unk_token it is dropped.
  const Json vocab = {{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"bc", 4}, {"abc", 5}};
  Edited merged(bpe(vocab, pairs({{"b", "c"}, {"a", "b"}}), false));
  Edited whole(bpe(vocab, pairs({{"b", "c"}, {"a", "b"}}), true));
  CATCH_CHECK(HFTokenizer::load(merged.dir()).encode("abc") == Ids{0, 4});
  CATCH_CHECK(HFTokenizer::load(whole.dir()).encode("abc") == Ids{5});
  CATCH_CHECK(HFTokenizer::load(merged.dir()).encode("abcxab") == Ids{0, 4, 3});
}

CATCH_TEST_CASE("HF tokenizers report BOS, EOS and the vocabulary size", "[hf_tokenizer]") {
  struct Expect {
    std::string layout;
    bool adds_bos;
    std::string bos, eos;  // "" = none
  };
  for (const Expect& e : std::vector<Expect>{
           {"gpt2", false, "<|endoftext|>", "<|endoftext|>"},
           {"llama3", true, "<|begin_of_text|>", "<|end_of_text|>"},
           {"gpt4o", false, "<|endoftext|>", "<|endoftext|>"},
           {"qwen2", false, "", "<|endoftext|>"},
           {"neox", false, "<|endoftext|>", "<|endoftext|>"},
           {"llama2", true, "<s>", "</s>"},
           {"mistral", true, "<s>", "</s>"},
           {"mixed", false, "", "[SEP]"}}) {
    CATCH_INFO(e.layout);
    const HFTokenizer& t = fixture(e.layout);
    const Json spec = read_json(kFixtures / e.layout / "tokenizer.json");
    auto id_of = [&](const std::string& token) -> std::optional<uint32_t> {
      if (token.empty()) return std::nullopt;
      for (const Json& a : spec["added_tokens"])
        if (a["content"] == token) return a["id"].get<uint32_t>();
      return spec["model"]["vocab"][token].get<uint32_t>();
    };
    size_t end = 0;
    for (const auto& [token, id] : spec["model"]["vocab"].items())
      end = std::max<size_t>(end, id.get<size_t>() + 1);
    for (const Json& a : spec["added_tokens"])
      end = std::max<size_t>(end, a["id"].get<size_t>() + 1);
    CATCH_CHECK(t.adds_bos() == e.adds_bos);
    CATCH_CHECK(t.bos_id() == id_of(e.bos));
    CATCH_CHECK(t.eos_id() == id_of(e.eos));
    CATCH_CHECK(t.vocab_size() == end);
    for (const Json& a : spec["added_tokens"])
      CATCH_CHECK(t.is_special(a["id"].get<uint32_t>()) == a["special"].get<bool>());
  }
}

CATCH_TEST_CASE("HF tokenizers refuse invalid UTF-8, unknown ids decode to nothing", "[hf_tokenizer]") {
  const HFTokenizer& t = fixture("llama3");
  for (const std::string& bad : {std::string("abc\xff"), std::string("caf\xc3"),
                                 std::string("\xed\xa0\x80 surrogate")}) {
    CATCH_CHECK_THROWS_AS(t.encode(bad), attnbench::UsageError);
    CATCH_CHECK_THROWS_WITH(t.encode(bad), Contains("not valid UTF-8"));
  }
  // The library's decode skips an id no token has (a padded model vocabulary can generate one).
  const Ids hi = t.encode("hi");
  Ids with_unknown = hi;
  with_unknown.insert(with_unknown.begin() + 1, static_cast<uint32_t>(t.vocab_size()));
  CATCH_CHECK(t.decode(with_unknown) == t.decode(hi));
  CATCH_CHECK(t.decode(hi) == "hi");
  // Bytes that are not UTF-8 as a whole decode to U+FFFD, as the library's from_utf8_lossy.
  Ids euro = t.encode("\xe2\x82\xac");
  CATCH_REQUIRE(euro.size() > 1);
  CATCH_CHECK(t.decode({euro[0]}) == "\xef\xbf\xbd");
}

CATCH_TEST_CASE("HF tokenizers encode long runs and agree across threads", "[hf_tokenizer]") {
  // llama2 has no pre-tokenizer: the whole text is one piece for BPE (heap-ordered merges, not a
  // quadratic scan); the others run their regexes over long runs of one character class.
  std::string words;
  for (int i = 0; i < 20000; ++i) words += "the king ";
  CATCH_CHECK(fixture("llama2").encode(words).size() < words.size() / 3);
  for (const auto& [layout, text] : std::vector<std::pair<std::string, std::string>>{
           {"llama2", words},
           {"gpt2", std::string(100000, ' ') + "x"},
           {"llama3", std::string(100000, '\n')},
           {"gpt4o", std::string(20000, '7')},
           {"mistral", std::string(50000, 'a')}}) {
    CATCH_INFO(layout);
    const HFTokenizer& t = fixture(layout);
    CATCH_CHECK(t.decode(t.encode(text)) == text);
  }
  const HFTokenizer& t = fixture("qwen2");
  std::vector<std::string> texts;
  const Json encodings = read_json(kFixtures / "qwen2/encodings.json");
  for (const Json& c : encodings["cases"]) texts.push_back(c["text"].get<std::string>());
  std::vector<std::vector<Ids>> results(4);
  std::vector<std::thread> threads;
  for (auto& r : results) {
    threads.emplace_back([&] {
      for (const std::string& s : texts) r.push_back(t.encode(s));
    });
  }
  for (auto& th : threads) th.join();
  for (size_t i = 0; i < texts.size(); ++i) CATCH_CHECK(results[0][i] == t.encode(texts[i]));
  for (const auto& r : results) CATCH_CHECK(r == results[0]);
}

CATCH_TEST_CASE("HF tokenizers refuse what they do not implement", "[hf_tokenizer]") {
  struct Case {
    std::string layout;
    std::function<void(Json&)> edit;
    std::string message;
  };
  auto regex = [](const std::string& pattern) {
    return [pattern](Json& j) {
      j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = pattern;
    };
  };
  const std::vector<Case> cases = {
      {"gpt2", [](Json& j) { j["normalizer"] = {{"type", "BertNormalizer"}}; },
       "tokenizer.json: normalizer.type \"BertNormalizer\" is not supported (supported: NFC, "
       "Prepend, Replace, Sequence)"},
      {"llama2", [](Json& j) { j["normalizer"]["normalizers"][1] = {{"type", "NFKC"}}; },
       "normalizer.normalizers[1].type \"NFKC\" is not supported"},
      {"llama3", [](Json& j) { j["pre_tokenizer"]["pretokenizers"][0] = {{"type", "Whitespace"}}; },
       "pre_tokenizer.pretokenizers[0].type \"Whitespace\" is not supported"},
      {"llama3",
       [](Json& j) { j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "MergedWithPrevious"; },
       "pre_tokenizer.pretokenizers[0].behavior \"MergedWithPrevious\" is not supported"},
      {"llama3", [](Json& j) { j["pre_tokenizer"]["pretokenizers"][0]["invert"] = true; },
       "pre_tokenizer.pretokenizers[0].invert true is not supported"},
      {"llama3", regex("\\p{N}{1,3}+"), "an interval followed by '+'"},
      {"llama3", regex("\\bx|\\s+"), "pretokenizers[0].pattern.Regex \"\\bx|\\s+\": \\b"},
      {"llama3", regex("^\\s+"), "'^'"},
      {"llama3", regex("[[:alpha:]]+"), "a nested class or POSIX bracket"},
      {"llama3", regex("\\h+"), "\\h (offset 0) is not supported"},
      {"llama3", regex("(a"), "PCRE2 rejected the pattern"},
      {"gpt2", [](Json& j) { j["model"]["type"] = "WordPiece"; },
       "model.type \"WordPiece\" is not supported (supported: BPE)"},
      {"gpt2", [](Json& j) { j["model"]["merges"][3] = "\xc4\xa0 zzz"; },
       "model.merges[3] names 'zzz', which is not in model.vocab"},
      {"llama3", [](Json& j) { j["model"]["merges"][5] = {"a", "?"}; },
       "model.merges[5] makes 'a?', which is not in model.vocab"},
      {"gpt2", [](Json& j) { j["model"]["merges"][0] = "abc"; },
       "model.merges[0] \"abc\" is not a merge"},
      {"gpt2", [](Json& j) { j["model"]["dropout"] = 0.1; }, "model.dropout 0.1 is not supported"},
      {"gpt2", [](Json& j) { j["model"]["continuing_subword_prefix"] = "##"; },
       "model.continuing_subword_prefix \"##\" is not supported"},
      {"gpt2", [](Json& j) { j["model"]["unk_token"] = "<nope>"; },
       "model.unk_token '<nope>' is not in model.vocab"},
      {"gpt2", [](Json& j) { j["added_tokens"][0]["single_word"] = true; },
       "added_tokens[0].single_word true is not supported"},
      {"llama3", [](Json& j) { j["added_tokens"][1]["id"] = 5000; },
       "added_tokens[1].id is 5000 but the tokenizers library gives \"<|end_of_text|>\" the id"},
      {"gpt2", [](Json& j) { j["post_processor"] = {{"type", "RobertaProcessing"}}; },
       "post_processor.type \"RobertaProcessing\" is not supported"},
      {"llama2",
       [](Json& j) {
         j["post_processor"]["single"].push_back(
             {{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}});
       },
       "post_processor.single[1] is followed by tokens after the text"},
      {"gpt2", [](Json& j) { j["decoder"] = {{"type", "WordPiece"}}; },
       "decoder.type \"WordPiece\" is not supported"},
      {"mistral", [](Json& j) { j["pre_tokenizer"]["prepend_scheme"] = "sometimes"; },
       "pre_tokenizer.prepend_scheme \"sometimes\" is not supported (supported: always, first, "
       "never)"},
      {"gpt2", [](Json& j) { j["version"] = "2.0"; }, "version \"2.0\" is not supported"},
  };
  for (const Case& c : cases) {
    CATCH_INFO(c.layout << ": " << c.message);
    Edited dir(c.layout, c.edit);
    CATCH_CHECK_THROWS_AS(HFTokenizer::load(dir.dir()), attnbench::InputError);
    CATCH_CHECK_THROWS_WITH(HFTokenizer::load(dir.dir()), Contains(c.message));
  }
}

CATCH_TEST_CASE("HF tokenizers bound what they read: nesting refused before it is walked, added "
                "tokens found whatever their number",
                "[hf_tokenizer]") {
  // A pre-tokenizer Sequence nested 20,000 deep (0.8 MB): refused at once, naming the file.
  std::string nested;
  for (int i = 0; i < 20000; ++i) nested += R"({"type": "Sequence", "pretokenizers": [)";
  nested += R"({"type": "ByteLevel", "add_prefix_space": false, "use_regex": true})";
  for (int i = 0; i < 20000; ++i) nested += "]}";
  {
    Edited dir("gpt2", [&](Json& t) { t["pre_tokenizer"] = nullptr; });
    std::string text;
    {
      std::ifstream in(dir.dir() / "tokenizer.json");
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const std::string null_value = "\"pre_tokenizer\":null";
    CATCH_REQUIRE(text.find(null_value) != std::string::npos);
    text.replace(text.find(null_value), null_value.size(), "\"pre_tokenizer\":" + nested);
    std::ofstream(dir.dir() / "tokenizer.json") << text;
    CATCH_CHECK_THROWS_WITH(HFTokenizer::load(dir.dir()),
                            Contains("tokenizer.json: the file nests objects or arrays") &&
                                Contains("more than the 65 it can have"));
  }
  // A Split regex PCRE2 gives up on (catastrophic backtracking past its match limit): the pattern
  // named in tokenizer.json, in one line.
  {
    Edited dir("gpt2", [](Json& t) {
      t["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(a+)+(b|c)"}}},
                            {"behavior", "Isolated"}, {"invert", false}};
    });
    const HFTokenizer bad = HFTokenizer::load(dir.dir());
    const std::string text = std::string(40, 'a') + "d";
    CATCH_CHECK_THROWS_AS(bad.encode(text), attnbench::InputError);
    CATCH_CHECK_THROWS_WITH(bad.encode(text),
                            Contains("tokenizer.json") && Contains("pattern") &&
                                Contains("cannot be matched on this text") &&
                                Contains("limit"));
  }
  // 100,000 added tokens (the library numbers them after the vocabulary): each found by its id and
  // in text, the load linear in their number.
  Edited many("gpt2", [](Json& t) {
    for (uint32_t i = 0; i < 100000; ++i) {
      t["added_tokens"].push_back({{"id", 801 + i}, {"content", "<tok" + std::to_string(i) + ">"},
                                   {"single_word", false}, {"lstrip", false}, {"rstrip", false},
                                   {"normalized", false}, {"special", true}});
    }
  });
  const HFTokenizer t = HFTokenizer::load(many.dir());
  CATCH_CHECK(t.vocab_size() == 100801);
  CATCH_CHECK(t.encode("a<tok99999>b<tok7>") ==
              Ids{t.encode("a")[0], 100800, t.encode("b")[0], 808});
}

CATCH_TEST_CASE("HF tokenizers check tokenizer_config.json and the files' presence",
                "[hf_tokenizer]") {
  auto same = [](Json&) {};
  {
    Edited dir("llama2", same, [](Json& c) { c["add_bos_token"] = false; });
    CATCH_CHECK_THROWS_WITH(HFTokenizer::load(dir.dir()),
                            Contains("tokenizer_config.json: add_bos_token is false but "
                                     "tokenizer.json's post_processor adds BOS"));
  }
  {
    Edited dir("qwen2", same, [](Json& c) { c["add_bos_token"] = true; });
    CATCH_CHECK_THROWS_WITH(HFTokenizer::load(dir.dir()), Contains("adds no BOS"));
  }
  {
    Edited dir("gpt2", same, [](Json& c) { c["eos_token"] = {{"content", "<nope>"}}; });
    CATCH_CHECK_THROWS_WITH(HFTokenizer::load(dir.dir()),
                            Contains("eos_token \"<nope>\" is not a token of tokenizer.json"));
  }
  {
    Edited dir("llama3", same, [](Json& c) { c["bos_token"] = "<|eot_id|>"; });
    CATCH_CHECK_THROWS_WITH(HFTokenizer::load(dir.dir()), Contains("post_processor puts token"));
  }
  {
    Edited dir("gpt2", same);
    fs::remove(dir.dir() / "tokenizer_config.json");  // optional: no BOS / EOS known
    HFTokenizer t = HFTokenizer::load(dir.dir());
    CATCH_CHECK(!t.bos_id());
    CATCH_CHECK(!t.eos_id());
    std::ofstream(dir.dir() / "tokenizer.json") << "{\"model\": ";
    CATCH_CHECK_THROWS_WITH(HFTokenizer::load(dir.dir()),
                            Contains("tokenizer.json: the file is not valid JSON: parse error") &&
                                !Contains("json.exception"));
    fs::remove(dir.dir() / "tokenizer.json");
    CATCH_CHECK_THROWS_AS(HFTokenizer::load(dir.dir()), attnbench::UsageError);
    CATCH_CHECK_THROWS_WITH(HFTokenizer::load(dir.dir()),
                            Contains((dir.dir() / "tokenizer.json").string()));
  }
}
