// Bit-identity with tiktoken's "gpt2" encoding (the tokenizer's acceptance test, docs/tokenizer.md,
// "Tests and speed"). Hidden from the default run (tag [.]): tests/harness/cli/tokenize_tiktoken.sh
// generates the golden ids with tests/core/data/tiktoken_oracle.py in a throwaway venv, then runs
// this case with ATTNBENCH_TIKTOKEN_GOLDEN pointing at them.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/data/tokenizer.h"
#include "tests/core/data/test_support.h"

namespace {

using attnbench::data::Tokenizer;
namespace fs = std::filesystem;

struct Golden {
  std::vector<std::string> texts;
  std::vector<std::vector<uint32_t>> ids;
};

uint32_t read_u32(std::istream& in) {
  uint32_t v = 0;
  in.read(reinterpret_cast<char*>(&v), 4);
  return v;
}

Golden read_golden(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  Golden g;
  while (in.peek() != EOF) {
    std::string text(read_u32(in), '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    std::vector<uint32_t> ids(read_u32(in));
    in.read(reinterpret_cast<char*>(ids.data()), static_cast<std::streamsize>(ids.size() * 4));
    if (!in) throw std::runtime_error(p.string() + ": truncated record");
    g.texts.push_back(std::move(text));
    g.ids.push_back(std::move(ids));
  }
  return g;
}

std::string show(const std::vector<uint32_t>& v, size_t from) {
  std::ostringstream s;
  for (size_t i = from; i < v.size() && i < from + 8; ++i) s << v[i] << ' ';
  return s.str();
}

}  // namespace

CATCH_TEST_CASE("token ids equal tiktoken gpt2 on every golden corpus", "[.tiktoken]") {
  const char* dir = std::getenv("ATTNBENCH_TIKTOKEN_GOLDEN");
  CATCH_REQUIRE(dir != nullptr);
  auto root = attnbench::data::testing::data_root_or_skip("tiktoken golden");
  CATCH_REQUIRE(root.has_value());
  const Tokenizer& tok = attnbench::data::testing::gpt2(*root);

  std::ifstream listing(fs::path(dir) / "corpora.txt");
  CATCH_REQUIRE(listing.good());
  std::string name;
  size_t count = 0, corpora = 0;
  while (listing >> name >> count) {
    ++corpora;
    Golden g = read_golden(fs::path(dir) / (name + ".golden"));
    CATCH_INFO("corpus " << name);
    CATCH_REQUIRE(g.texts.size() == count);
    auto ours = tok.encode_batch(g.texts, 2);
    size_t mismatches = 0, tokens = 0;
    for (size_t i = 0; i < g.texts.size(); ++i) {
      tokens += g.ids[i].size();
      if (ours[i] != g.ids[i]) {
        if (mismatches++ < 3) {
          size_t k = 0;
          while (k < ours[i].size() && k < g.ids[i].size() && ours[i][k] == g.ids[i][k]) ++k;
          CATCH_WARN(name << " text " << i << ": first difference at token " << k << ": ours "
                          << show(ours[i], k) << "| tiktoken " << show(g.ids[i], k)
                          << "| text near: '"
                          << tok.decode(std::vector<uint32_t>(
                                 g.ids[i].begin() + static_cast<std::ptrdiff_t>(k),
                                 g.ids[i].begin() +
                                     static_cast<std::ptrdiff_t>(std::min(k + 8, g.ids[i].size()))))
                          << "'");
        }
      }
      if (tok.decode(g.ids[i]) != g.texts[i]) ++mismatches;
    }
    std::cerr << name << ": " << g.texts.size() << " texts, " << tokens << " tokens, "
              << mismatches << " mismatches\n";
    CATCH_CHECK(mismatches == 0);
  }
  CATCH_CHECK(corpora == 15);  // tinyshakespeare, wikipedia, the 12 tasks (wikitext2 included), stress
}
