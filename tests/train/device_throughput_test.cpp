// Devices, precision switches and throughput figures of the trainer, as far as a machine without a
// GPU can check them: device resolution, the refusals raised before any work, the MFU arithmetic,
// the progress line and the new metrics. The GPU side is tests/train/cuda_gpu_test.cpp.
#include <torch/torch.h>

#include <cmath>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "train/preflight.h"
#include "train/progress.h"
#include "train/throughput.h"
#include "train/trainer.h"
#include "model/checkpoint_model.h"
#include "model/device.h"
#include "model/param_count.h"
#include "tests/train/train_fixture.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace device_throughput_test {

using namespace attnbench;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {
train::TrainOptions quiet() {
  train::TrainOptions o;
  o.quiet = true;
  return o;
}
std::set<std::string> metric_keys(const fs::path& run_dir) {
  std::set<std::string> keys;
  std::ifstream in(run_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) keys.insert(nlohmann::json::parse(line)["key"]);
  return keys;
}
}  // namespace

CATCH_TEST_CASE("train.device resolves: auto takes a GPU only when there is one") {
  CATCH_CHECK(model::resolve_device("cpu").is_cpu());
  if (torch::cuda::is_available()) {
    CATCH_CHECK(model::resolve_device("auto").is_cuda());
    CATCH_CHECK(model::resolve_device("cuda") == torch::Device(torch::kCUDA, 0));
  } else {
    CATCH_CHECK(model::resolve_device("auto").is_cpu());
    CATCH_CHECK_THROWS_AS(model::resolve_device("cuda"), UsageError);
    CATCH_CHECK_THROWS_WITH(model::resolve_device("cuda"),
                            Contains("train.device = \"cuda\"") && Contains("no CUDA device"));
    CATCH_CHECK_THROWS_WITH(model::resolve_device("cuda", "--device"), Contains("--device = \"cuda\""));
  }
  CATCH_CHECK_THROWS_WITH(model::resolve_device("gpu"), Contains("not one of auto, cpu, cuda"));
  CATCH_CHECK(model::device_description(torch::Device(torch::kCPU)) == "cpu");
  CATCH_CHECK(model::gpu_name(torch::Device(torch::kCPU)).empty());
}

CATCH_TEST_CASE("cuda without a GPU and bf16 on the CPU fail before any work") {
  test::ScratchDir dir;
  test::CopyTask task;
  task.write(dir.path(), 300, 50);
  const fs::path run = dir.path() / "run";
  if (!torch::cuda::is_available()) {
    auto cfg = test::copy_task_config(dir.path(), task, "softmax", {"train.device=cuda"});
    CATCH_CHECK_THROWS_AS(train::check_training_config(cfg), UsageError);
    CATCH_CHECK_THROWS_WITH(train::train_run(cfg, run, nullptr, quiet()), Contains("train.device"));
  }
  auto bf16 = test::copy_task_config(dir.path(), task, "softmax",
                                     {"train.device=cpu", "train.precision=bf16"});
  CATCH_CHECK_THROWS_WITH(train::check_training_config(bf16),
                          Contains("train.precision = \"bf16\" needs a CUDA device"));
  CATCH_CHECK_FALSE(fs::exists(run));
}

CATCH_TEST_CASE("model FLOPs per token follow 6 N + 12 L C T, N without an untied embedding") {
  auto cfg = config::parse_run_config("[model]\npreset = \"tiny\"\ncontext_length = 256\n", "t");
  const auto& m = cfg.model;
  const double n = static_cast<double>(model::closed_form_parameter_count(m, cfg.attention)) -
                   static_cast<double>(m.padded_vocab() * m.d_model);
  CATCH_CHECK(train::flops_per_token(cfg) == 6.0 * n + 12.0 * 2 * 128 * 256);
  // Tied: the one matrix is the LM head, counted.
  auto tied = config::parse_run_config("[model]\ntie_embeddings = true\n", "t");
  CATCH_CHECK(train::flops_per_token(tied) ==
              6.0 * static_cast<double>(model::closed_form_parameter_count(tied.model, tied.attention)) +
                  12.0 * 2 * 128 * 256);
}

CATCH_TEST_CASE("MFU is achieved over peak FLOP/s, the peak comes from the override or the GPU") {
  CATCH_CHECK(train::gpu_peak_flops("NVIDIA H100 80GB HBM3") == 989e12);
  CATCH_CHECK(train::gpu_peak_flops("NVIDIA H200") == 989e12);
  CATCH_CHECK(train::gpu_peak_flops("NVIDIA H100 PCIe") == 756e12);
  CATCH_CHECK(train::gpu_peak_flops("") == 0.0);
  CATCH_CHECK(train::gpu_peak_flops("Some GPU") == 0.0);
  config::TrainConfig t;
  CATCH_CHECK(train::peak_flops(t, "") == 0.0);  // CPU: unknown
  CATCH_CHECK(train::peak_flops(t, "NVIDIA H100 80GB HBM3") == 989e12);
  t.peak_flops = 1e12;
  CATCH_CHECK(train::peak_flops(t, "NVIDIA H100 80GB HBM3") == 1e12);  // the override wins
  // 1e9 FLOPs per token at 1e5 tokens/s on a 1e15 peak: 10%.
  CATCH_CHECK(train::mfu(1e9, 1e5, 1e15) == Approx(0.1));
  CATCH_CHECK(std::isnan(train::mfu(1e9, 1e5, 0.0)));
  CATCH_CHECK(train::format_mfu(0.4123) == "41.2%");
  CATCH_CHECK(train::format_mfu(train::mfu(1e9, 1e5, 0.0)) == "-");
  CATCH_CHECK(train::peak_memory_mib(torch::Device(torch::kCPU)) > 0.0);  // peak RSS
}

CATCH_TEST_CASE("the progress line shows time per step, MFU and peak memory") {
  train::Progress p(100, 10, /*live=*/false, /*quiet=*/true, /*flops_per_token=*/1e9,
                    /*peak_flops=*/1e15);
  p.step(1, 3.5, 1e-3, 1000, 0.01);  // 1e5 tokens/s
  CATCH_CHECK(p.line(1, 3.5, 1e-3, 1000, 512.0) ==
              "step 1/100 | loss 3.5000 | lr 1.00e-03 | 100000 tok/s | 10.0 ms/step | MFU 10.0% | "
              "mem 512 MiB | ETA 1s");
  train::Progress cpu(100, 10, false, true, 1e9, 0.0);
  cpu.step(1, 3.5, 1e-3, 1000, 0.01);
  CATCH_CHECK_THAT(cpu.line(1, 3.5, 1e-3, 1000, -1.0), Contains("| MFU - | ETA"));
}

CATCH_TEST_CASE("a CPU run logs step time and peak memory, MFU only with a known peak") {
  test::ScratchDir dir;
  test::CopyTask task;
  task.write(dir.path(), 300, 50);
  auto cfg = test::copy_task_config(dir.path(), task, "softmax",
                                    {"train.steps=4", "train.log_interval=2", "train.device=auto"});
  train::train_run(cfg, dir.path() / "a", nullptr, quiet());
  auto keys = metric_keys(dir.path() / "a");
  for (const char* k : {"train/loss", "train/lr", "train/grad_norm", "train/tokens_per_s",
                        "train/step_time_s", "train/peak_memory_mib"}) {
    CATCH_CHECK(keys.count(k) == 1);
  }
  if (!torch::cuda::is_available()) CATCH_CHECK(keys.count("train/mfu") == 0);
  cfg.train.peak_flops = 1e12;  // execution-only: the same run id, a fresh folder
  train::train_run(cfg, dir.path() / "b", nullptr, quiet());
  CATCH_CHECK(metric_keys(dir.path() / "b").count("train/mfu") == 1);
  // The trained checkpoint loads on the CPU with an explicit device, and refuses a missing GPU.
  auto loaded = model::load_model(dir.path() / "a", "cpu", "--device");
  CATCH_CHECK(loaded.device.is_cpu());
  CATCH_CHECK(loaded.model->parameters().front().is_cpu());
  if (!torch::cuda::is_available()) {
    CATCH_CHECK_THROWS_WITH(model::load_model(dir.path() / "a", "cuda", "--device"),
                            Contains("--device = \"cuda\""));
  }
}

}  // namespace device_throughput_test
