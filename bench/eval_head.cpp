// The LM head of evaluation (docs/evaluation.md, "Throughput"): the scores of every scored position
// (log p(target) and the greedy flag, evals/token_scores.h) from N output states through a
// [50304, C] head, as the flush of evals/loglikelihood.cpp computes them:
//   eval_head/materialised/<C>   logits [N, V] by one product, then token_scores
//   eval_head/chunked/<C>        head_token_scores: the vocabulary in chunks, reduced in cache
//   eval_head/product_only/<C>   the [N, C] x [C, V] product alone: the floor of both
// N = 512 states (kPendingStateRows), C = 128 (tiny) and 384 (small). Counter: positions_per_s.
//
// Run: OMP_NUM_THREADS=2 bench_eval_head
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdlib>
#include <thread>

#include "evals/token_scores.h"

namespace {

using namespace attnbench;

constexpr int64_t kRows = 512, kVocab = 50257, kPadded = 50304;

void set_threads() {
  int n = 0;
  if (const char* env = std::getenv("OMP_NUM_THREADS")) n = std::atoi(env);
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  torch::set_num_threads(n > 0 ? n : 1);
}

struct Inputs {
  torch::Tensor states, weight, rows, targets;
  explicit Inputs(int64_t C) {
    torch::manual_seed(0);
    states = torch::randn({kRows, C});
    weight = torch::randn({kPadded, C}) * 0.02;
    rows = torch::arange(kRows, torch::kInt64);
    targets = torch::randint(0, kVocab, {kRows}, torch::kInt64);
  }
};

void report(benchmark::State& state) {
  state.counters["positions_per_s"] =
      benchmark::Counter(static_cast<double>(kRows), benchmark::Counter::kIsIterationInvariantRate);
}

void materialised(benchmark::State& state) {
  set_threads();
  torch::NoGradGuard no_grad;
  const Inputs in(state.range(0));
  for (auto _ : state) {
    auto s = evals::token_scores(torch::mm(in.states, in.weight.t()), in.rows, in.targets, kVocab);
    benchmark::DoNotOptimize(s.logprob.data_ptr());
  }
  report(state);
}

void chunked(benchmark::State& state) {
  set_threads();
  const Inputs in(state.range(0));
  for (auto _ : state) {
    auto s = evals::head_token_scores(in.states, in.weight, in.rows, in.targets, kVocab);
    benchmark::DoNotOptimize(s.logprob.data_ptr());
  }
  report(state);
}

void product_only(benchmark::State& state) {
  set_threads();
  torch::NoGradGuard no_grad;
  const Inputs in(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(torch::mm(in.states, in.weight.t()).data_ptr());
  report(state);
}

}  // namespace

BENCHMARK(materialised)->Name("eval_head/materialised")->Arg(128)->Arg(384)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(chunked)->Name("eval_head/chunked")->Arg(128)->Arg(384)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(product_only)->Name("eval_head/product_only")->Arg(128)->Arg(384)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

BENCHMARK_MAIN();
