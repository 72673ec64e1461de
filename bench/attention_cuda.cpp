// Attention throughput on a CUDA GPU (docs/kernels.md, "CUDA kernels"), bf16, causal:
//   attention_cuda/<impl>/<mode>/T:<T>/D:<D>
//   impl  ours_softmax, ours_lazy    attnbench's fused kernels (softmax; distance bias +
//                                    Elastic-Softmax, tau / n_i)
//         sdpa_flash                 LibTorch's FlashAttention-2
//                                    (at::_scaled_dot_product_flash_attention)
//         eager_softmax, eager_lazy  the eager reference, [B, H, T, T] materialised
//   mode  fwd, fwd_bwd;  T 1024, 4096, 16384;  D 64, 128
// Batches of 16k tokens and 2048 / D heads (FlashAttention's benchmark shape). Counter TFLOPs: the
// causal attention FLOPs of standard attention (forward 2 B H T^2 D, i.e. half of 4 B H T^2 D;
// backward 2.5x the forward, FlashAttention's convention) over the time, for every impl alike, so
// the ratios compare throughput. A case that runs out of memory is reported as an error of that
// case. Compiled in every build; outside the CUDA build or without a device it says so and exits 0.
// Run: bench_attention_cuda [--benchmark_filter=T:4096/D:64] (scripts/gpu-check runs it).
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

#include "kernels/attention_family.h"
#include "kernels/torch_compat.h"
#include "variants/eager.h"
#if defined(ATTNBENCH_CUDA)
#include "kernels/cuda/family_cuda.h"

namespace {

using attnbench::kernels::FamilySpec;
using attnbench::kernels::Normalizer;
using Attention = std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&,
                                              const torch::Tensor&, const FamilySpec&)>;

torch::Tensor flash(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                    const FamilySpec&) {
  return std::get<0>(at::_scaled_dot_product_flash_attention(q, k, v, 0.0, /*is_causal=*/true));
}

torch::Tensor ours(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                   const FamilySpec& s) {
  return attnbench::kernels::gpu::family_cuda_attention(q, k, v, s);
}

torch::Tensor eager(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                    const FamilySpec& s) {
  return attnbench::variants::eager_family_attention(q, k, v, s);
}

// Lazy Attention's attention part: distance bias (window 512) and Elastic-Softmax, tau / n_i.
FamilySpec lazy_spec(int64_t H, const torch::Device& device) {
  FamilySpec s;
  auto f32 = torch::TensorOptions().device(device).dtype(torch::kFloat);
  s.distance_bias = (torch::randn({H, 512}, f32) * 0.1).requires_grad_(true);
  s.normalizer = Normalizer::Elastic;
  s.tau = torch::full({H}, -1.0, f32).requires_grad_(true);
  return s;
}

void attention_cuda(benchmark::State& state, const Attention& attention, bool lazy, bool backward,
                    int64_t T, int64_t D) {
  const torch::Device cuda(torch::kCUDA, 0);
  const int64_t B = std::max<int64_t>(1, 16384 / T), H = 2048 / D;
  try {
    auto opts = torch::TensorOptions().device(cuda).dtype(torch::kBFloat16);
    auto q = torch::randn({B, H, T, D}, opts).requires_grad_(backward);
    auto k = torch::randn({B, H, T, D}, opts).requires_grad_(backward);
    auto v = torch::randn({B, H, T, D}, opts).requires_grad_(backward);
    auto g = torch::randn({B, H, T, D}, opts);
    const FamilySpec spec = lazy ? lazy_spec(H, cuda) : FamilySpec{};
    auto once = [&] {
      auto out = attention(q, k, v, spec);
      if (backward) out.backward(g);
      torch::cuda::synchronize();
    };
    once();  // warm-up: allocator, kernel attributes, plans
    for (auto _ : state) once();
    const double fwd = 2.0 * static_cast<double>(B * H * T * T * D);  // causal: half of 4 B H T^2 D
    state.counters["TFLOPs"] = benchmark::Counter((backward ? 3.5 : 1.0) * fwd / 1e12,
                                                  benchmark::Counter::kIsIterationInvariantRate);
    state.SetLabel(attnbench::kernels::cuda_device_name(0));
  } catch (const c10::Error& e) {  // c10::OutOfMemoryError derives from it
    const std::string what = e.what_without_backtrace();
    state.SkipWithError(what.find("out of memory") != std::string::npos
                            ? "out of memory (CUDA)"
                            : ("error: " + what.substr(0, 200)).c_str());
  }
}

}  // namespace
#endif

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
#if !defined(ATTNBENCH_CUDA)
  std::puts("bench_attention_cuda: the CUDA kernels exist only in the CUDA build (skipped)");
  return 0;
#else
  if (!torch::cuda::is_available()) {
    std::puts("bench_attention_cuda: no CUDA device, nothing to measure (skipped)");
    return 0;
  }
  struct Impl {
    const char* name;
    Attention attention;
    bool lazy;
  };
  const Impl impls[] = {{"ours_softmax", ours, false}, {"ours_lazy", ours, true},
                        {"sdpa_flash", flash, false},  {"eager_softmax", eager, false},
                        {"eager_lazy", eager, true}};
  for (const Impl& impl : impls)
    for (const bool backward : {false, true})
      for (const int64_t T : {1024, 4096, 16384})
        for (const int64_t D : {64, 128}) {
          const std::string name = std::string("attention_cuda/") + impl.name + "/" +
                                   (backward ? "fwd_bwd" : "fwd") + "/T:" + std::to_string(T) +
                                   "/D:" + std::to_string(D);
          benchmark::RegisterBenchmark(name.c_str(), attention_cuda, impl.attention, impl.lazy,
                                       backward, T, D)
              ->Unit(benchmark::kMillisecond)
              ->UseRealTime()
              ->Iterations(5);
        }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
#endif
}
