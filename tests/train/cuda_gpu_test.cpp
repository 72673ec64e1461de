// GPU checks of training and evaluation (gpu tag): the tiny preset trained 50 steps on the CPU and
// on CUDA from the same seed and data, fp32 losses within 1e-4 relative and bf16 within 2e-2, every
// registered variant trained a few steps on CUDA through the backend users get ("auto"), and
// every request's log-likelihood of the trained model within 1e-3 on both devices. An executable of
// its own (tests/CMakeLists.txt, attnbench_gpu_test) that exits 77, which CTest reports as
// Skipped, where no CUDA device is usable.
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include "evals/decoder_lm_adapter.h"
#include "evals/loglikelihood.h"
#include "train/trainer.h"
#include "variants/registry.h"
#include "model/checkpoint_model.h"
#include "tests/train/train_fixture.h"

using namespace attnbench;
namespace fs = std::filesystem;

namespace {

std::vector<double> losses(const fs::path& run_dir) {
  std::vector<double> out;
  std::ifstream in(run_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["key"] == "train/loss") out.push_back(j["value"].get<double>());
  }
  return out;
}

fs::path train_run_in(const fs::path& dir, const test::CopyTask& task, const std::string& name,
               const std::vector<std::string>& sets) {
  std::vector<std::string> all = {"train.steps=50", "train.eval_interval=0"};
  all.insert(all.end(), sets.begin(), sets.end());
  auto cfg = test::copy_task_config(dir, task, "lazy", all);
  train::TrainOptions o;
  o.quiet = true;
  const fs::path run = dir / name;
  CATCH_REQUIRE(train::train_run(cfg, run, nullptr, o).status == "finished");
  return run;
}

void check_close(const std::vector<double>& a, const std::vector<double>& b, double rel) {
  CATCH_REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CATCH_INFO("step " << i + 1 << ": " << a[i] << " vs " << b[i]);
    CATCH_CHECK(std::abs(a[i] - b[i]) <= rel * std::abs(a[i]));
  }
}

}  // namespace

CATCH_TEST_CASE("training on CUDA follows the CPU: fp32 to 1e-4, bf16 to 2e-2", "[gpu]") {
  test::ScratchDir dir;
  test::CopyTask task;
  task.write(dir.path(), 2000, 100);
  const auto cpu = losses(train_run_in(dir.path(), task, "cpu", {"train.device=cpu"}));
  const auto fp32 = losses(train_run_in(dir.path(), task, "cuda", {"train.device=cuda"}));
  const auto bf16 =
      losses(train_run_in(dir.path(), task, "bf16", {"train.device=cuda", "train.precision=bf16"}));
  CATCH_REQUIRE(cpu.size() == 50);
  check_close(cpu, fp32, 1e-4);
  check_close(cpu, bf16, 2e-2);
}

CATCH_TEST_CASE("every registered variant trains on CUDA", "[gpu]") {
  test::ScratchDir dir;
  test::CopyTask task;
  task.write(dir.path(), 500, 50);
  for (const auto& name : variants::registered_variants()) {
    CATCH_CAPTURE(name);
    auto cfg = test::copy_task_config(
        dir.path(), task, name,
        {"train.steps=5", "train.eval_interval=0", "train.device=cuda", "attention.backend=auto"});
    train::TrainOptions o;
    o.quiet = true;
    const fs::path run = dir.path() / ("variant-" + name);
    CATCH_CHECK(train::train_run(cfg, run, nullptr, o).status == "finished");
    const auto l = losses(run);
    CATCH_CHECK(l.size() == 5);
    for (double x : l) CATCH_CHECK(std::isfinite(x));
  }
}

CATCH_TEST_CASE("a checkpoint scores the same requests on CPU and CUDA to 1e-3", "[gpu]") {
  test::ScratchDir dir;
  test::CopyTask task;
  task.write(dir.path(), 2000, 100);
  const fs::path run = train_run_in(dir.path(), task, "cuda", {"train.device=cuda"});
  // Requests over the copy task's own documents: a context and a one- to eight-token continuation.
  std::vector<evals::TokenRequest> requests;
  const auto docs = task.documents(20, 7);
  for (size_t i = 0; i + 18 <= docs.size(); i += 18) {
    evals::TokenRequest r;
    r.context.assign(docs.begin() + static_cast<std::ptrdiff_t>(i),
                     docs.begin() + static_cast<std::ptrdiff_t>(i + 10));
    r.continuation.assign(docs.begin() + static_cast<std::ptrdiff_t>(i + 10),
                          docs.begin() + static_cast<std::ptrdiff_t>(i + 11 + (i / 18) % 8));
    requests.push_back(r);
  }
  auto score = [&](const std::string& device) {
    model::LoadedModel loaded = model::load_model(run, device, "--device");
    evals::DecoderLMAdapter lm(loaded.model.ptr());
    return evals::compute_loglikelihoods(lm, requests, 4);
  };
  const auto on_cpu = score("cpu"), on_cuda = score("cuda");
  CATCH_REQUIRE(on_cpu.size() == requests.size());
  for (size_t i = 0; i < on_cpu.size(); ++i) {
    CATCH_INFO("request " << i);
    CATCH_CHECK(std::abs(on_cpu[i].logprob - on_cuda[i].logprob) <=
                1e-3 * std::max(1.0, std::abs(on_cpu[i].logprob)));
  }
}

CATCH_TEST_CASE("a checkpoint written on CUDA resumes on CUDA and loads on the CPU", "[gpu]") {
  test::ScratchDir dir;
  test::CopyTask task;
  task.write(dir.path(), 500, 50);
  const fs::path run = train_run_in(dir.path(), task, "cuda", {"train.device=cuda"});
  CATCH_CHECK(model::load_model(run, "cpu").model->parameters().front().is_cpu());
  CATCH_CHECK(model::load_model(run, "cuda").model->parameters().front().is_cuda());
  // The same command again restores model, optimizer and both generators onto CUDA (a finished run
  // resumed reports its result again).
  train::TrainOptions o;
  o.quiet = true;
  auto cfg = test::copy_task_config(dir.path(), task, "lazy",
                                    {"train.steps=50", "train.eval_interval=0", "train.device=cuda"});
  CATCH_CHECK(train::train_run(cfg, run, nullptr, o).status == "finished");
}
