// Training-step throughput on a CUDA GPU (docs/gpu.md, "What it costs"):
//   gpu_train_step/<preset>/T:<T>/<variant>    preset tiny | 125m, T 1024 | 4096, variant softmax |
//                                              lazy (eager) | lazy+fused (the fused CUDA Elastic
//                                              kernels, attention.backend = "fused")
//   gpu_train_step/340m/T:4096/lazy[+fused]    the paper's size, lazy attention only
// One iteration = one optimizer step as the trainer (train/) runs it: forward under bf16 autocast
// (train.precision = "bf16"), cross-entropy, backward, gradient clipping to 1.0, AdamW with the
// schedule's lr. softmax runs LibTorch's SDPA through the "cuda" kernel (kernels/cuda); lazy
// (distance bias + Elastic-Softmax) runs the eager reference, which materialises [B, H, T, T]
// tensors: at 125m and T = 4096 that is tens of GiB, and a case that runs out of memory is
// reported as an error of that case, not a crash.
// Counters: tokens_per_s, peak_memory_MiB (the caching allocator's peak during the timed steps,
// torch.cuda.max_memory_allocated), mfu (model FLOPs per token x tokens/s over the GPU's dense bf16
// peak, train/throughput.h; absent when the GPU is not in its table), batch, T, params.
//
// Compiled in every build; without a CUDA device (the Debian CPU build always) it says so and
// exits 0. Run: bench_gpu_train_step [--benchmark_filter=tiny/] (scripts/gpu-check runs it).
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdio>
#include <string>

#include "core/config/run_config.h"
#include "train/optimizer.h"
#include "train/schedule.h"
#include "train/throughput.h"
#include "kernels/torch_compat.h"
#include "model/decoder.h"

namespace {

using namespace attnbench;

void gpu_train_step(benchmark::State& state, const std::string& preset, int64_t T, int64_t B,
                    const std::string& variant, const std::string& backend) {
  const torch::Device cuda(torch::kCUDA, 0);
  auto cfg = config::parse_run_config("[model]\npreset = \"" + preset + "\"\ncontext_length = " +
                                          std::to_string(T) + "\n[attention]\nvariant = \"" +
                                          variant + "\"\nbackend = \"" + backend + "\"\n",
                                      "bench.toml");
  try {
    torch::manual_seed(0);
    model::DecoderLM m(cfg);
    m->to(cuda);
    m->train();
    auto opt = train::make_adamw(*m, cfg.train);
    auto params = m->parameters();
    auto tokens = torch::randint(0, cfg.model.vocab_size, {B, T + 1},
                                 torch::TensorOptions().dtype(torch::kLong).device(cuda));
    auto x = tokens.slice(1, 0, T), y = tokens.slice(1, 1, T + 1);
    int64_t step = 0;
    auto one_step = [&] {
      train::set_learning_rate(*opt, train::learning_rate(cfg.train, step++), cfg.train);
      opt->zero_grad();
      torch::Tensor loss;
      {
        kernels::CudaBf16Autocast autocast(true);
        loss = m->loss(x, y);  // the trainer's loss (train/trainer.cpp, window_loss)
      }
      loss.backward();
      torch::nn::utils::clip_grad_norm_(params, 1.0);
      opt->step();
      return loss.item<double>();  // waits for the GPU: the step is timed whole
    };
    one_step();  // warm-up: allocator pools, optimizer state, SDPA/cuBLAS plans
    kernels::reset_cuda_peak_allocated(0);
    for (auto _ : state) benchmark::DoNotOptimize(one_step());
    const double peak_mib =
        static_cast<double>(kernels::cuda_peak_allocated_bytes(0)) / (1024.0 * 1024.0);
    state.counters["tokens_per_s"] = benchmark::Counter(
        static_cast<double>(B * T), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["peak_memory_MiB"] = peak_mib;
    state.counters["batch"] = static_cast<double>(B);
    state.counters["T"] = static_cast<double>(T);
    state.counters["params"] = static_cast<double>(m->num_parameters());
    // MFU needs the rate, which Google Benchmark computes after the run: from the iteration time.
    const double peak = train::gpu_peak_flops(kernels::cuda_device_name(0));
    if (peak > 0) {
      state.counters["mfu"] = benchmark::Counter(
          train::flops_per_token(cfg) * static_cast<double>(B * T) / peak,
          benchmark::Counter::kIsIterationInvariantRate);
    }
    state.SetLabel(kernels::cuda_device_name(0));
  } catch (const c10::Error& e) {  // c10::OutOfMemoryError derives from it
    const std::string what = e.what_without_backtrace();
    state.SkipWithError(what.find("out of memory") != std::string::npos
                            ? "out of memory (CUDA)"
                            : ("error: " + what.substr(0, 200)).c_str());
    // No loop after this: Google Benchmark accepts a case that stopped with an error.
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (!torch::cuda::is_available()) {
    std::puts("bench_gpu_train_step: no CUDA device, nothing to measure (skipped)");
    return 0;
  }
  struct Case {
    const char* preset;
    int64_t T, B;
  };
  // Batches of 16k tokens (tiny) and 8k / 4k tokens (125m): small enough for eager lazy at 1024.
  // Each case three ways: softmax (SDPA through the "cuda" kernel), lazy on the eager reference and
  // lazy on the fused CUDA Elastic kernels (attention.backend = "fused").
  struct Variant {
    const char *label, *variant, *backend;
  };
  const Variant variants[] = {{"softmax", "softmax", "auto"},
                              {"lazy", "lazy", "eager"},
                              {"lazy+fused", "lazy", "fused"}};
  for (const Case c : {Case{"tiny", 1024, 16}, Case{"tiny", 4096, 4}, Case{"125m", 1024, 8},
                       Case{"125m", 4096, 1}, Case{"340m", 4096, 1}}) {
    for (const Variant& v : variants) {
      // The paper's size with lazy attention only (eager: tens of GiB of [B, H, T, T] tensors;
      // out of memory is reported as that case's error).
      if (c.preset == std::string("340m") && v.variant != std::string("lazy")) continue;
      const std::string name = std::string("gpu_train_step/") + c.preset + "/T:" +
                               std::to_string(c.T) + "/" + v.label;
      benchmark::RegisterBenchmark(name.c_str(), gpu_train_step, std::string(c.preset), c.T, c.B,
                                   std::string(v.variant), std::string(v.backend))
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->Iterations(c.T >= 4096 ? 3 : 10);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
