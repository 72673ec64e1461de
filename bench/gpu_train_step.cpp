// Training-step throughput on a CUDA GPU (docs/gpu.md, "What it costs"):
//   gpu_train_step/<preset>/T:<T>/<variant>    preset tiny | 125m, T 1024 | 4096, variant softmax |
//                                              lazy (eager) | lazy+fused (the fused CUDA Elastic
//                                              kernels, attention.backend = "fused"); one small
//                                              micro-batch per step (8k-16k tokens)
//   gpu_train_step/340m/T:4096/lazy[+fused]    the paper's size, lazy attention only
//   gpu_train_step/<125m|340m>/T:4096/256k/<softmax|lazy+fused>
//                                              the paper's context at a realistic batch: 262,144
//                                              tokens a step through micro-batches of 16 (125m) or
//                                              8 (340m) windows and gradient accumulation; 125m
//                                              softmax also at 32 windows (B:32)
// One iteration = one optimizer step as the trainer (train/trainer.cpp, StepLoop) runs it: each
// micro-batch's forward under bf16 autocast (train.precision = "bf16"), cross-entropy, backward of
// the loss over the micro-batch count; gradient clipping to 1.0, AdamW with the schedule's lr.
// softmax runs LibTorch's SDPA through the "cuda" kernel (kernels/cuda); lazy (distance bias +
// Elastic-Softmax) runs the eager reference, which materialises [B, H, T, T] tensors: at 125m and
// T = 4096 that is tens of GiB, and a case that runs out of memory is reported as an error of that
// case, not a crash.
// Counters: tokens_per_s, peak_memory_MiB (the caching allocator's peak during the timed steps,
// torch.cuda.max_memory_allocated), mfu (model FLOPs per token x tokens/s over the GPU's dense bf16
// peak, train/throughput.h; absent when the GPU is not in its table), batch, T, accumulation,
// params.
// With ATTNBENCH_PROFILE_DIR set, each 256k case then profiles one more step and writes its
// per-kernel summary there (bench/cuda_profile.h; scripts/gpu-check's bench stage reports it).
//
// Compiled in every build; without a CUDA device (the Debian CPU build always) it says so and
// exits 0. Run: bench_gpu_train_step [--benchmark_filter=tiny/] (scripts/gpu-check runs it).
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/cuda_profile.h"
#include "core/config/run_config.h"
#include "train/optimizer.h"
#include "train/schedule.h"
#include "train/throughput.h"
#include "kernels/torch_compat.h"
#include "model/decoder.h"

namespace {

using namespace attnbench;

// One benchmark case: B windows of T tokens per micro-batch, `accumulation` micro-batches a step.
struct StepCase {
  std::string name;  // as registered
  std::string preset;
  int64_t T = 0, B = 0, accumulation = 1;
  std::string variant, backend;
  bool profile = false;  // write a per-kernel profile when ATTNBENCH_PROFILE_DIR is set
};

void gpu_train_step(benchmark::State& state, const StepCase& c) {
  const torch::Device cuda(torch::kCUDA, 0);
  const int64_t T = c.T, B = c.B;
  auto cfg = config::parse_run_config("[model]\npreset = \"" + c.preset +
                                          "\"\ncontext_length = " + std::to_string(T) +
                                          "\n[attention]\nvariant = \"" + c.variant +
                                          "\"\nbackend = \"" + c.backend + "\"\n",
                                      "bench.toml");
  try {
    torch::manual_seed(0);
    model::DecoderLM m(cfg);
    m->to(cuda);
    m->train();
    auto opt = train::make_adamw(*m, cfg.train);
    auto params = m->parameters();
    // Distinct windows for each micro-batch, drawn once: the timed steps read no host memory.
    auto tokens = torch::randint(0, cfg.model.vocab_size, {c.accumulation, B, T + 1},
                                 torch::TensorOptions().dtype(torch::kLong).device(cuda));
    int64_t step = 0;
    auto one_step = [&] {
      train::set_learning_rate(*opt, train::learning_rate(cfg.train, step++), cfg.train);
      opt->zero_grad();
      auto loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat).device(cuda));
      for (int64_t micro = 0; micro < c.accumulation; ++micro) {
        auto w = tokens[micro];
        torch::Tensor loss;
        {
          kernels::CudaBf16Autocast autocast(true);
          loss = m->loss(w.slice(1, 0, T), w.slice(1, 1, T + 1));  // the trainer's window_loss
        }
        (loss / static_cast<double>(c.accumulation)).backward();
        loss_sum += loss.detach();
      }
      torch::nn::utils::clip_grad_norm_(params, 1.0);
      opt->step();
      return loss_sum.item<double>();  // waits for the GPU: the step is timed whole
    };
    one_step();  // warm-up: allocator pools, optimizer state, SDPA/cuBLAS plans
    kernels::reset_cuda_peak_allocated(0);
    for (auto _ : state) benchmark::DoNotOptimize(one_step());
    const double peak_mib =
        static_cast<double>(kernels::cuda_peak_allocated_bytes(0)) / (1024.0 * 1024.0);
    state.counters["tokens_per_s"] = benchmark::Counter(
        static_cast<double>(c.accumulation * B * T), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["peak_memory_MiB"] = peak_mib;
    state.counters["batch"] = static_cast<double>(B);
    state.counters["accumulation"] = static_cast<double>(c.accumulation);
    state.counters["T"] = static_cast<double>(T);
    state.counters["params"] = static_cast<double>(m->num_parameters());
    // MFU needs the rate, which Google Benchmark computes after the run: from the iteration time.
    const double peak = train::gpu_peak_flops(kernels::cuda_device_name(0));
    if (peak > 0) {
      state.counters["mfu"] = benchmark::Counter(
          train::flops_per_token(cfg) * static_cast<double>(c.accumulation * B * T) / peak,
          benchmark::Counter::kIsIterationInvariantRate);
    }
    state.SetLabel(kernels::cuda_device_name(0));
    if (const char* dir = std::getenv("ATTNBENCH_PROFILE_DIR"); dir && c.profile) {
      std::string file = c.name;
      for (char& ch : file) {
        if (ch == '/' || ch == ':' || ch == '+') ch = '_';
      }
      const std::string why = bench::write_cuda_kernel_profile(
          std::string(dir) + "/" + file + ".md", c.name + ", one step", [&] { one_step(); });
      if (!why.empty()) std::fprintf(stderr, "%s: no profile: %s\n", c.name.c_str(), why.c_str());
    }
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
  struct Variant {
    const char *label, *variant, *backend;
  };
  const Variant softmax{"softmax", "softmax", "auto"}, lazy{"lazy", "lazy", "eager"},
      lazy_fused{"lazy+fused", "lazy", "fused"};
  auto add = [](const std::string& name, StepCase c, int iterations) {
    c.name = name;
    benchmark::RegisterBenchmark(name.c_str(), gpu_train_step, c)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Iterations(iterations);
  };
  auto step_case = [](const char* preset, int64_t T, int64_t B, int64_t accumulation,
                      const Variant& v) {
    StepCase c;
    c.preset = preset;
    c.T = T;
    c.B = B;
    c.accumulation = accumulation;
    c.variant = v.variant;
    c.backend = v.backend;
    return c;
  };
  // Small batches (16k tokens for tiny, 8k / 4k for 125m: small enough for eager lazy at 1024),
  // each three ways: softmax (SDPA through the "cuda" kernel), lazy on the eager reference, lazy on
  // the fused CUDA Elastic kernels. The paper's size with lazy attention only (eager: tens of GiB
  // of [B, H, T, T] tensors; out of memory is reported as that case's error).
  struct Small {
    const char* preset;
    int64_t T, B;
  };
  for (const Small s : {Small{"tiny", 1024, 16}, Small{"tiny", 4096, 4}, Small{"125m", 1024, 8},
                        Small{"125m", 4096, 1}, Small{"340m", 4096, 1}}) {
    for (const Variant& v : {softmax, lazy, lazy_fused}) {
      if (s.preset == std::string("340m") && v.variant != std::string("lazy")) continue;
      add(std::string("gpu_train_step/") + s.preset + "/T:" + std::to_string(s.T) + "/" + v.label,
          step_case(s.preset, s.T, s.B, 1, v), s.T >= 4096 ? 3 : 10);
    }
  }
  // The paper's context at a realistic batch: 262,144 tokens a step (64 windows of 4096) through
  // gradient accumulation; the eager reference cannot hold these micro-batches.
  struct Large {
    const char* preset;
    int64_t B;
  };
  for (const Large l : {Large{"125m", 16}, Large{"340m", 8}}) {
    for (const Variant& v : {softmax, lazy_fused}) {
      StepCase c = step_case(l.preset, 4096, l.B, 64 / l.B, v);
      c.profile = true;
      add(std::string("gpu_train_step/") + l.preset + "/T:4096/256k/" + v.label, c, 2);
    }
  }
  // The same step at twice the micro-batch: how much of the step is per-launch overhead.
  add("gpu_train_step/125m/T:4096/256k/B:32/softmax", step_case("125m", 4096, 32, 2, softmax), 2);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
