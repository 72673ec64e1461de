// `data prepare`: shards hold exactly [end-of-text] + encode(doc) for every document in input
// order, split into whole-document validation and fixed-size train shards; manifest counts and
// checksums; malformed JSONL stops the run (nothing written) or is skipped under skip_bad.
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/sha256.h"
#include "core/data/hf_tokenizer.h"
#include "core/data/prepare.h"
#include "core/data/shard.h"
#include "core/data/tokenizer.h"
#include "tests/core/data/test_support.h"

namespace {

namespace fs = std::filesystem;
using attnbench::data::Tokenizer;
using attnbench::data::testing::data_root_or_skip;
using attnbench::data::testing::gpt2;

struct Scratch {
  fs::path dir;
  Scratch() {
    static int n = 0;
    dir = fs::temp_directory_path() /
          ("ab_prepare_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
};

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

// gzip with the text split over two members (readers must continue after the first).
void write_gzip(const fs::path& p, const std::string& bytes) {
  gzFile f = gzopen(p.c_str(), "wb");
  size_t half = bytes.size() / 2;
  gzwrite(f, bytes.data(), static_cast<unsigned>(half));
  gzclose(f);
  f = gzopen(p.c_str(), "ab");
  gzwrite(f, bytes.data() + half, static_cast<unsigned>(bytes.size() - half));
  gzclose(f);
}

void write_zstd(const fs::path& p, const std::string& bytes) {
  std::string out(ZSTD_compressBound(bytes.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), 3);
  CATCH_REQUIRE(!ZSTD_isError(n));
  out.resize(n);
  write_file(p, out);
}

std::vector<std::string> read_lines(const fs::path& p, size_t skip, size_t count) {
  std::ifstream in(p);
  std::vector<std::string> out;
  std::string line;
  for (size_t i = 0; i < skip + count && std::getline(in, line); ++i)
    if (i >= skip) out.push_back(line);
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

std::vector<uint32_t> read_shard(const fs::path& p) {
  attnbench::data::ShardReader r(p);
  std::vector<int64_t> wide(static_cast<size_t>(r.size()));
  r.read(0, r.size(), wide.data());
  return std::vector<uint32_t>(wide.begin(), wide.end());
}

attnbench::data::PrepareOptions options(const fs::path& root, const fs::path& out) {
  attnbench::data::PrepareOptions o;
  o.out = out;
  o.tokenizer_dir = root / "gpt2_tokenizer";
  o.jobs = 2;
  return o;
}

}  // namespace

CATCH_TEST_CASE("data prepare: shards are end-of-text + encoding of every document, in order",
                "[prepare]") {
  auto root = data_root_or_skip("data prepare");
  if (!root) return;
  const Tokenizer& tok = gpt2(*root);
  Scratch s;
  auto wiki = *root / "pretrain_wikipedia_en/wiki_pages_000.jsonl";
  auto a = read_lines(wiki, 0, 60), b = read_lines(wiki, 60, 60), c = read_lines(wiki, 120, 60);
  CATCH_REQUIRE(c.size() == 60);
  write_file(s.dir / "a.jsonl", joined(a) + "\n  \n");  // blank lines are skipped
  write_gzip(s.dir / "b.jsonl.gz", joined(b));
  write_zstd(s.dir / "c.jsonl.zst", joined(c));
  std::string shakespeare;
  {
    std::ifstream f(*root / "tinyshakespeare/input.txt", std::ios::binary);
    shakespeare.resize(30000);
    f.read(shakespeare.data(), 30000);
  }
  write_file(s.dir / "d.txt", shakespeare + "\xff\xfe invalid UTF-8 stays byte-exact");

  std::vector<std::string> docs;
  for (const auto* part : {&a, &b, &c})
    for (const auto& line : *part) docs.push_back(nlohmann::json::parse(line)["text"]);
  docs.push_back(shakespeare + "\xff\xfe invalid UTF-8 stays byte-exact");
  std::vector<uint32_t> expected;
  int64_t encoded_sum = 0;
  for (const auto& d : docs) {
    auto ids = tok.encode(d);
    encoded_sum += static_cast<int64_t>(ids.size());
    expected.push_back(Tokenizer::kEndOfText);
    expected.insert(expected.end(), ids.begin(), ids.end());
  }

  auto o = options(*root, s.dir / "out");
  o.inputs = {s.dir / "a.jsonl", s.dir / "b.jsonl.gz", s.dir / "c.jsonl.zst", s.dir / "d.txt"};
  o.val_tokens = 20000;
  o.shard_tokens = 30000;
  o.name = "wiki";
  int progress_calls = 0;
  o.progress = [&](const attnbench::data::PrepareProgress&) { ++progress_calls; };
  auto summary = attnbench::data::prepare_shards(o);

  CATCH_CHECK(progress_calls >= 2);
  CATCH_CHECK(summary.documents == static_cast<int64_t>(docs.size()));
  CATCH_CHECK(summary.tokens == encoded_sum + static_cast<int64_t>(docs.size()));
  CATCH_REQUIRE(summary.shards.size() >= 3);
  CATCH_CHECK(summary.shards[0].file == "wiki_val_000000.bin");
  CATCH_CHECK(summary.shards[1].file == "wiki_train_000001.bin");
  CATCH_CHECK(summary.shards[2].file == "wiki_train_000002.bin");

  std::vector<uint32_t> all;
  for (size_t i = 0; i < summary.shards.size(); ++i) {
    auto tokens = read_shard(s.dir / "out" / summary.shards[i].file);
    CATCH_CHECK(static_cast<int64_t>(tokens.size()) == summary.shards[i].tokens);
    if (summary.shards[i].split == "train" && i + 1 < summary.shards.size())
      CATCH_CHECK(tokens.size() == 30000u);
    all.insert(all.end(), tokens.begin(), tokens.end());
  }
  CATCH_CHECK(all == expected);

  // Validation: whole documents, the first ones, until at least val_tokens.
  auto val = read_shard(s.dir / "out/wiki_val_000000.bin");
  CATCH_CHECK(val.size() >= 20000u);
  CATCH_CHECK(val.front() == Tokenizer::kEndOfText);
  CATCH_CHECK(all[val.size()] == Tokenizer::kEndOfText);  // train starts at a document boundary
  CATCH_CHECK(summary.val_documents + summary.train_documents == summary.documents);

  nlohmann::json m;
  std::ifstream(s.dir / "out/manifest.json") >> m;
  CATCH_CHECK(m["documents"] == docs.size());
  CATCH_CHECK(m["tokens"] == summary.tokens);
  CATCH_CHECK(m["magic"] == 20240520);
  CATCH_CHECK(m["tokenizer"]["vocab_size"] == 50257);
  CATCH_CHECK(m["tokenizer"]["files"][0]["sha256"] ==
              attnbench::sha256_file(*root / "gpt2_tokenizer/encoder.json"));
  CATCH_REQUIRE(m["sources"].size() == 4);
  CATCH_CHECK(m["sources"][1]["format"] == "jsonl.gz");
  CATCH_CHECK(m["sources"][1]["documents"] == 60);
  CATCH_CHECK(m["sources"][2]["sha256"] == attnbench::sha256_file(s.dir / "c.jsonl.zst"));
  CATCH_CHECK(m["sources"][3]["documents"] == 1);
  CATCH_CHECK(m["shards"].size() == summary.shards.size());
  CATCH_CHECK(m["shards"][0]["sha256"] == attnbench::sha256_file(s.dir / "out/wiki_val_000000.bin"));
  CATCH_CHECK(m["splits"]["val"]["tokens"] == val.size());
}

CATCH_TEST_CASE("data prepare: a model folder's tokenizer.json encodes every document after its "
                "BOS and the manifest names it",
                "[prepare]") {
  const fs::path folder =
      fs::path(ATTNBENCH_SOURCE_DIR) / "tests" / "fixtures" / "hf" / "llama_sharded";
  const auto tok = attnbench::data::HFTokenizer::load(folder);
  CATCH_REQUIRE(tok.bos_id().has_value());
  Scratch s;
  const std::vector<std::string> docs = {"The quick brown fox.", "jumps over\nthe lazy dog",
                                         "caf\u00e9 <|endoftext|> end"};
  std::string jsonl;
  for (const auto& d : docs) jsonl += nlohmann::json({{"text", d}}).dump() + "\n";
  write_file(s.dir / "docs.jsonl", jsonl);
  write_file(s.dir / "bad.txt", "not UTF-8: \xff");

  attnbench::data::PrepareOptions o;
  o.out = s.dir / "out";
  o.tokenizer_dir = folder;
  o.jobs = 2;
  o.val_tokens = 0;
  o.inputs = {s.dir / "docs.jsonl", s.dir / "bad.txt"};
  // Text the tokenizer cannot read is a bad document, located; --skip-bad skips it.
  CATCH_CHECK_THROWS_WITH(attnbench::data::prepare_shards(o),
                          Catch::Matchers::Contains("bad.txt") &&
                              Catch::Matchers::Contains("UTF-8"));
  o.skip_bad = true;
  const auto summary = attnbench::data::prepare_shards(o);
  CATCH_CHECK(summary.skipped == 1);

  std::vector<uint32_t> expected;
  for (const auto& d : docs) {
    expected.push_back(*tok.bos_id());
    for (uint32_t id : tok.encode(d)) expected.push_back(id);
  }
  CATCH_REQUIRE(summary.shards.size() == 1);
  CATCH_CHECK(read_shard(s.dir / "out" / summary.shards[0].file) == expected);
  nlohmann::json m;
  std::ifstream(s.dir / "out/manifest.json") >> m;
  CATCH_CHECK(m["tokenizer"]["name"] == "llama_sharded");
  CATCH_CHECK(m["tokenizer"]["vocab_size"] == tok.vocab_size());
  CATCH_CHECK(m["tokenizer"]["files"][0]["sha256"] ==
              attnbench::sha256_file(folder / "tokenizer.json"));
  CATCH_CHECK(m["document_start"] == *tok.bos_id());
  CATCH_CHECK(m["version"] == 1);
  CATCH_CHECK(m["token_dtype"] == "uint16");
}

CATCH_TEST_CASE("data prepare: a BOS past 65535 from a post-processor is written whole, in uint32 "
                "shards, though the vocabulary would fit uint16",
                "[prepare]") {
  const fs::path fixture =
      fs::path(ATTNBENCH_SOURCE_DIR) / "tests" / "fixtures" / "hf" / "llama_sharded";
  Scratch s;
  const fs::path folder = s.dir / "tokenizer";
  fs::create_directories(folder);
  nlohmann::json spec;
  std::ifstream(fixture / "tokenizer.json") >> spec;
  spec["post_processor"]["special_tokens"]["<|begin_of_text|>"]["ids"] = {65541};
  std::ofstream(folder / "tokenizer.json") << spec.dump();  // no tokenizer_config.json: no check
  const auto tok = attnbench::data::HFTokenizer::load(folder);
  CATCH_REQUIRE(tok.vocab_size() <= 65536);
  write_file(s.dir / "docs.jsonl", nlohmann::json({{"text", "The quick brown fox."}}).dump() + "\n");
  attnbench::data::PrepareOptions o;
  o.out = s.dir / "out";
  o.tokenizer_dir = folder;
  o.val_tokens = 0;
  o.inputs = {s.dir / "docs.jsonl"};
  const auto summary = attnbench::data::prepare_shards(o);
  CATCH_REQUIRE(summary.shards.size() == 1);
  const std::vector<uint32_t> tokens = read_shard(s.dir / "out" / summary.shards[0].file);
  CATCH_REQUIRE(!tokens.empty());
  CATCH_CHECK(tokens.front() == 65541);  // not 65541 mod 65536 = 5
  nlohmann::json m;
  std::ifstream(s.dir / "out/manifest.json") >> m;
  CATCH_CHECK(m["version"] == 2);
  CATCH_CHECK(m["token_dtype"] == "uint32");
  // The shard writer itself never narrows an id that does not fit.
  CATCH_CHECK_THROWS_WITH(attnbench::data::write_shard(s.dir / "x.bin", {1, 65536}, 1),
                          Catch::Matchers::Contains("token 65536 does not fit"));
}

CATCH_TEST_CASE("data prepare: a malformed JSONL line stops the run with file:line, writing nothing",
                "[prepare]") {
  auto root = data_root_or_skip("data prepare malformed");
  if (!root) return;
  Scratch s;
  write_file(s.dir / "bad.jsonl",
             "{\"text\": \"one\"}\n{\"text\": \"two\"}\n{\"text\": \"three\"\n{\"body\": \"x\"}\n"
             "[1, 2]\n{\"text\": 5}\n{\"text\": \"last\"}\n");
  auto o = options(*root, s.dir / "out");
  o.inputs = {s.dir / "bad.jsonl"};
  o.val_tokens = 0;
  CATCH_REQUIRE_THROWS_AS(attnbench::data::prepare_shards(o), attnbench::InputError);
  CATCH_REQUIRE_THROWS_WITH(attnbench::data::prepare_shards(o),
                            Catch::Matchers::Contains("bad.jsonl:3:") &&
                                Catch::Matchers::Contains("expected one JSON object per line"));
  CATCH_CHECK(!fs::exists(s.dir / "out"));
  for (auto& e : fs::directory_iterator(s.dir))  // no temporary folder left behind
    CATCH_CHECK(e.path().filename().string().find(".tmp") == std::string::npos);

  o.skip_bad = true;
  auto summary = attnbench::data::prepare_shards(o);
  CATCH_CHECK(summary.skipped == 4);
  CATCH_CHECK(summary.documents == 3);
  CATCH_REQUIRE(summary.skipped_examples.size() == 4);
  CATCH_CHECK_THAT(summary.skipped_examples[1],
                   Catch::Matchers::Contains("bad.jsonl:4") &&
                       Catch::Matchers::Contains("no field \"text\"") &&
                       Catch::Matchers::Contains("body"));
  CATCH_CHECK_THAT(summary.skipped_examples[2], Catch::Matchers::Contains("expected a JSON object"));
  CATCH_CHECK_THAT(summary.skipped_examples[3],
                   Catch::Matchers::Contains("bad.jsonl:6") && Catch::Matchers::Contains("number"));
  nlohmann::json m;
  std::ifstream(s.dir / "out/manifest.json") >> m;
  CATCH_CHECK(m["skipped_lines"] == 4);
  CATCH_CHECK(m["sources"][0]["skipped_lines"] == 4);
}

CATCH_TEST_CASE("data prepare: bad options and inputs fail before any work", "[prepare]") {
  auto root = data_root_or_skip("data prepare options");
  if (!root) return;
  Scratch s;
  write_file(s.dir / "ok.jsonl", "{\"text\": \"hello\"}\n{\"text\": \"world\"}\n");
  auto o = options(*root, s.dir / "out");
  o.inputs = {s.dir / "ok.jsonl"};
  o.val_tokens = 0;

  auto bad = o;
  bad.inputs = {s.dir / "missing.jsonl"};
  CATCH_REQUIRE_THROWS_WITH(attnbench::data::prepare_shards(bad),
                            Catch::Matchers::Contains("missing.jsonl"));
  write_file(s.dir / "x.csv", "a,b\n");
  bad.inputs = {s.dir / "x.csv"};
  CATCH_REQUIRE_THROWS_WITH(attnbench::data::prepare_shards(bad),
                            Catch::Matchers::Contains("unsupported file type"));
  bad = o;
  bad.shard_tokens = 0;
  CATCH_REQUIRE_THROWS_AS(attnbench::data::prepare_shards(bad), attnbench::UsageError);
  bad = o;
  bad.val_tokens = 1000;  // everything would be validation
  CATCH_REQUIRE_THROWS_WITH(attnbench::data::prepare_shards(bad),
                            Catch::Matchers::Contains("validation split"));
  bad = o;
  bad.text_field = "body";
  bad.skip_bad = true;
  CATCH_REQUIRE_THROWS_WITH(attnbench::data::prepare_shards(bad),
                            Catch::Matchers::Contains("no documents") &&
                                Catch::Matchers::Contains("all 2 lines were malformed"));
  CATCH_CHECK(!fs::exists(s.dir / "out"));

  // Truncated compressed input is an error, not a silently shorter corpus.
  std::string big;
  for (int i = 0; i < 2000; ++i) big += "{\"text\": \"line " + std::to_string(i) + "\"}\n";
  write_gzip(s.dir / "t.jsonl.gz", big);
  fs::resize_file(s.dir / "t.jsonl.gz", fs::file_size(s.dir / "t.jsonl.gz") - 20);
  bad = o;
  bad.inputs = {s.dir / "t.jsonl.gz"};
  CATCH_REQUIRE_THROWS_WITH(attnbench::data::prepare_shards(bad), Catch::Matchers::Contains("t.jsonl.gz"));
  write_zstd(s.dir / "t.jsonl.zst", big);
  fs::resize_file(s.dir / "t.jsonl.zst", fs::file_size(s.dir / "t.jsonl.zst") - 5);
  bad.inputs = {s.dir / "t.jsonl.zst"};
  CATCH_REQUIRE_THROWS_WITH(attnbench::data::prepare_shards(bad), Catch::Matchers::Contains("truncated"));

  // An existing, non-empty output folder is kept unless --force.
  attnbench::data::prepare_shards(o);
  CATCH_REQUIRE_THROWS_WITH(attnbench::data::prepare_shards(o), Catch::Matchers::Contains("--force"));
  o.force = true;
  o.name = "again";
  attnbench::data::prepare_shards(o);
  CATCH_CHECK(fs::exists(s.dir / "out/again_train_000001.bin"));
  CATCH_CHECK(!fs::exists(s.dir / "out/out_train_000001.bin"));
  // --force replaces only what data prepare wrote: a folder holding anything else is named and
  // kept whole (a project, a run folder), and the working folder never.
  write_file(s.dir / "out/README.md", "mine");
  CATCH_REQUIRE_THROWS_WITH(attnbench::data::prepare_shards(o),
                            Catch::Matchers::Contains("holds README.md, which data prepare does "
                                                      "not write"));
  CATCH_CHECK(fs::exists(s.dir / "out/README.md"));
  CATCH_CHECK(fs::exists(s.dir / "out/again_train_000001.bin"));
  const fs::path cwd = fs::current_path();
  fs::current_path(s.dir / "out");
  o.out = ".";
  CATCH_REQUIRE_THROWS_WITH(attnbench::data::prepare_shards(o),
                            Catch::Matchers::Contains("is the working folder or holds it"));
  fs::current_path(cwd);
  CATCH_CHECK(fs::exists(s.dir / "out/README.md"));
}
