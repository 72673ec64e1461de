// GPT-2 tokenizer throughput: MB/s of encode_batch over the Wikipedia pretraining sample
// (pretrain_wikipedia_en/wiki_pages_000.jsonl, ~24 MB of JSONL, 2168 documents), on 1 and 2 threads.
// Each iteration uses a freshly loaded tokenizer, so the piece cache starts cold, as in one
// `data prepare` pass. Target (docs/ARCHITECTURE.md, "Performance targets"): >= 10 MB/s on 2
// threads.
//   ATTNBENCH_DATA=/path/to/data ./bench_tokenizer
#include <benchmark/benchmark.h>

#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/data/tokenizer.h"

namespace {

using attnbench::data::Tokenizer;

const std::vector<std::string>& wikipedia_docs() {
  static const std::vector<std::string> docs = [] {
    std::vector<std::string> out;
    auto file = attnbench::data::gpt2_tokenizer_dir().parent_path() /
                "pretrain_wikipedia_en/wiki_pages_000.jsonl";
    std::ifstream in(file);
    if (!in) throw std::runtime_error("missing " + file.string());
    for (std::string line; std::getline(in, line);)
      out.push_back(nlohmann::json::parse(line).at("text").get<std::string>());
    return out;
  }();
  return docs;
}

void BM_EncodeWikipedia(benchmark::State& state) {
  const auto& docs = wikipedia_docs();
  size_t bytes = 0;
  for (const auto& d : docs) bytes += d.size();
  const auto dir = attnbench::data::gpt2_tokenizer_dir();
  size_t tokens = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Tokenizer tok = Tokenizer::load(dir);
    state.ResumeTiming();
    auto ids = tok.encode_batch(docs, static_cast<int>(state.range(0)));
    benchmark::DoNotOptimize(ids.data());
    tokens = 0;
    for (const auto& v : ids) tokens += v.size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["tokens"] = static_cast<double>(tokens);
  state.counters["documents"] = static_cast<double>(docs.size());
}
BENCHMARK(BM_EncodeWikipedia)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()
    ->Unit(benchmark::kMillisecond)->MinTime(3.0);

}  // namespace

BENCHMARK_MAIN();
