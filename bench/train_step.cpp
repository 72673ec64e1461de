// Training-step throughput of the C++ trainer's model and optimizer (docs/ARCHITECTURE.md,
// "Performance targets": CPU training throughput at least that of the same model in Python
// PyTorch):
//   train_step/<preset>_<backend>   tiny 8 x 256, small 16 x 1,024, 125m 8 x 256 tokens, GPT-2
//                                   vocabulary (50257 padded to 50304)
// One iteration = one optimizer step exactly as the trainer (train/) runs it: the model's loss
// (DecoderLMImpl::loss: the LM head and cross-entropy in chunks of tokens), backward, gradient
// clipping to 1.0, AdamW (matrix-only weight decay) with the schedule's lr set. Presets tiny, small
// and 125m.
// Counters: tokens_per_s (wall clock) and the model's parameter count. The softmax variant (RoPE +
// causal softmax) with the eager backend is the like-for-like comparison with
// scripts/bench-train-python.py, which runs this binary and the Python loop in one go and reports
// the ratio.
//
// Run: OMP_NUM_THREADS=2 bench_train_step --benchmark_filter=tiny   (threads: default all cores)
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "core/config/run_config.h"
#include "train/optimizer.h"
#include "train/schedule.h"
#include "model/decoder.h"

namespace {

using namespace attnbench;

void set_threads() {
  int n = 0;
  if (const char* env = std::getenv("OMP_NUM_THREADS")) n = std::atoi(env);
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  torch::set_num_threads(n > 0 ? n : 1);
}

void train_step(benchmark::State& state, const std::string& preset, const std::string& backend,
                int64_t B, int64_t T) {
  set_threads();
  auto cfg = config::parse_run_config("[model]\npreset = \"" + preset + "\"\ncontext_length = " +
                                          std::to_string(T) + "\n[attention]\nvariant = "
                                          "\"softmax\"\nbackend = \"" + backend + "\"\n",
                                      "bench.toml");
  torch::manual_seed(0);
  model::DecoderLM m(cfg);
  m->train();
  auto opt = train::make_adamw(*m, cfg.train);
  auto params = m->parameters();
  auto tokens = torch::randint(0, cfg.model.vocab_size, {B, T + 1}, torch::kLong);
  auto x = tokens.slice(1, 0, T), y = tokens.slice(1, 1, T + 1);
  int64_t step = 0;
  auto one_step = [&] {
    train::set_learning_rate(*opt, train::learning_rate(cfg.train, step++), cfg.train);
    opt->zero_grad();
    auto loss = m->loss(x, y);  // the trainer's loss (train/trainer.cpp, window_loss)
    loss.backward();
    torch::nn::utils::clip_grad_norm_(params, 1.0);
    opt->step();
    return loss.item<double>();
  };
  one_step();  // warm-up: allocator pools, optimizer state
  for (auto _ : state) benchmark::DoNotOptimize(one_step());
  state.counters["tokens_per_s"] =
      benchmark::Counter(static_cast<double>(B * T), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["params"] = static_cast<double>(m->num_parameters());
  state.counters["threads"] = torch::get_num_threads();
}

}  // namespace

// tiny and small at their presets' own micro-batches (sweeps/presets: 8 x 256 and 16 x 1,024);
// 125m at 8 x 256 (its preset's 8 x 4,096 takes minutes a step on a CPU).
BENCHMARK_CAPTURE(train_step, tiny_eager, "tiny", "eager", 8, 256)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(5.0);
BENCHMARK_CAPTURE(train_step, tiny_auto, "tiny", "auto", 8, 256)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(5.0);
BENCHMARK_CAPTURE(train_step, small_eager, "small", "eager", 16, 1024)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK_CAPTURE(train_step, small_auto, "small", "auto", 16, 1024)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK_CAPTURE(train_step, 125m_eager, "125m", "eager", 8, 256)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK_CAPTURE(train_step, 125m_auto, "125m", "auto", 8, 256)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

BENCHMARK_MAIN();
