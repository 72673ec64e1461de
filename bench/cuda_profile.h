// A per-kernel summary of one region of GPU work (docs/gpu.md, "Where the time goes"), taken with
// LibTorch's Kineto profiler (CUPTI): the CUDA kernels, copies and fills grouped by name, with
// count, total device time and share of the region's wall time, and the region's busy fraction
// (device time over wall time; far under 1 means the GPU waits for the host's launches). Names are
// also grouped into classes by the substrings cuBLAS, cuDNN, flash attention and ATen give them.
// Header-only (each bench/*.cpp is its own executable). Only in the CUDA build: Debian's LibTorch
// 1.13 has another profiler API, and no GPU to profile.
#pragma once
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#if defined(ATTNBENCH_CUDA)
#include <torch/csrc/autograd/profiler_kineto.h>
#endif

namespace attnbench::bench {

// The class of a device activity by its name: what a profile is read for first.
inline std::string kernel_class(const std::string& name) {
  auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
  if (has("Memcpy") || has("Memset") || has("memcpy") || has("memset")) return "copy/fill";
  if (has("elastic") || has("family_") || has("flash") || has("fmha") || has("attention") ||
      has("cudnn_generated_fort_native_sdpa") || has("sdpa")) {
    return "attention";
  }
  if (has("gemm") || has("nvjet") || has("xmma") || has("cutlass") || has("sm90_") ||
      has("Kernel2")) {
    return "matrix product";
  }
  if (has("multi_tensor") || has("adam") || has("Adam")) return "optimizer";
  if (has("reduce") || has("Reduce") || has("norm") || has("softmax") || has("Softmax")) {
    return "reduction/norm/softmax";
  }
  if (has("elementwise") || has("vectorized") || has("unrolled") || has("Elementwise")) {
    return "elementwise";
  }
  return "other";
}

// Runs `region` once under the profiler (synchronising before and after) and writes the summary
// as Markdown to `path`, titled `title`. Returns "" or why it could not: a benchmark goes on
// without its profile.
inline std::string write_cuda_kernel_profile(const std::string& path, const std::string& title,
                                             const std::function<void()>& region) {
#if defined(ATTNBENCH_CUDA)
  namespace prof = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  using torch::profiler::impl::ProfilerConfig;
  using torch::profiler::impl::ProfilerState;
  try {
    const ProfilerConfig config(ProfilerState::KINETO);
    const std::set<ActivityType> activities{ActivityType::CUDA};
    prof::prepareProfiler(config, activities);
    torch::cuda::synchronize();
    prof::enableProfiler(config, activities);
    const auto start = std::chrono::steady_clock::now();
    region();
    torch::cuda::synchronize();
    const double wall_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count();
    const auto result = prof::disableProfiler();
    struct Row {
      int64_t count = 0;
      double us = 0;
    };
    std::map<std::string, Row> by_name, by_class;
    double busy_us = 0;
    for (const auto& e : result->events()) {
      if (e.deviceType() != c10::DeviceType::CUDA) continue;
      const double us = static_cast<double>(e.durationNs()) / 1e3;
      busy_us += us;
      for (auto* table : {&by_name, &by_class}) {
        Row& r = (*table)[table == &by_name ? e.name() : kernel_class(e.name())];
        r.count += 1;
        r.us += us;
      }
    }
    if (by_name.empty()) return "the profiler recorded no CUDA activity (no CUPTI?)";
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) return "cannot write " + path;
    auto sorted = [](const std::map<std::string, Row>& m) {
      std::vector<std::pair<std::string, Row>> v(m.begin(), m.end());
      std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second.us > b.second.us; });
      return v;
    };
    std::fprintf(f, "### %s\n\nwall %.1f ms, device busy %.1f ms (%.0f%%), %zu kernel names\n\n",
                 title.c_str(), wall_us / 1e3, busy_us / 1e3, 100 * busy_us / wall_us,
                 by_name.size());
    std::fprintf(f, "| class | launches | device ms | share of wall |\n|---|---:|---:|---:|\n");
    for (const auto& [name, r] : sorted(by_class)) {
      std::fprintf(f, "| %s | %lld | %.2f | %.1f%% |\n", name.c_str(),
                   static_cast<long long>(r.count), r.us / 1e3, 100 * r.us / wall_us);
    }
    std::fprintf(f, "\n| kernel (top 25 by device time) | launches | device ms | share of wall |\n"
                    "|---|---:|---:|---:|\n");
    int shown = 0;
    for (const auto& [name, r] : sorted(by_name)) {
      if (shown++ == 25) break;
      std::string n = name.substr(0, 110);
      std::replace(n.begin(), n.end(), '|', '/');
      std::fprintf(f, "| `%s` | %lld | %.2f | %.1f%% |\n", n.c_str(),
                   static_cast<long long>(r.count), r.us / 1e3, 100 * r.us / wall_us);
    }
    std::fclose(f);
    return "";
  } catch (const c10::Error& e) {
    return std::string("profiler: ") + e.what_without_backtrace();
  }
#else
  (void)path, (void)title, (void)region;
  return "no CUDA build";
#endif
}

}  // namespace attnbench::bench
