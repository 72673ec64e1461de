#include "train/trainer.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/sha256.h"
#include "train/grad_reducer.h"
#include "train/optimizer.h"
#include "train/preflight.h"
#include "train/progress.h"
#include "train/run_lock.h"
#include "train/schedule.h"
#include "train/tensorboard_sink.h"
#include "train/throughput.h"
#include "train/windows.h"
#include "kernels/torch_compat.h"
#include "model/checkpoint.h"
#include "model/checkpoint_dir.h"
#include "model/device.h"
#include "model/finite.h"
#include "model/pretrained/init_from.h"

namespace attnbench::train {

namespace fs = std::filesystem;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Mean next-token cross-entropy of windows [B, T + 1]: inputs are the first T tokens, targets the
// last T (DecoderLMImpl::loss: the head and the loss in chunks of tokens). `bf16`: the forward pass
// under CUDA bf16 autocast (matrix products in bf16, weights stay fp32) and the log-softmax of the
// loss on fp32 logits; off, nothing is cast (the fp32 path).
torch::Tensor window_loss(model::DecoderLMImpl& model, const torch::Tensor& windows,
                          bool bf16 = false) {
  const int64_t t = windows.size(1) - 1;
  kernels::CudaBf16Autocast autocast(bf16);
  return model.loss(windows.slice(1, 0, t), windows.slice(1, 1, t + 1));
}

std::vector<std::string> parameter_names(torch::nn::Module& model) {
  std::vector<std::string> names;
  for (const auto& item : model.named_parameters()) names.push_back(item.key());
  return names;
}

// Mean loss over every validation window (each has T targets, so this is the per-token mean). With
// `comm`, each rank scores an equal share of the windows and the sums are added across ranks.
double validation_loss(model::DecoderLMImpl& model, const ValWindows& val, int64_t batch,
                       int64_t context, const torch::Device& device, bool bf16,
                       Communicator* comm) {
  if (val.count() == 0) return kNaN;
  torch::NoGradGuard no_grad;
  model.eval();
  const int rank = comm ? comm->rank() : 0, world = comm ? comm->size() : 1;
  const int64_t begin = val.count() * rank / world, end = val.count() * (rank + 1) / world;
  std::vector<int64_t> buf;
  double sum = 0.0;
  for (int64_t first = begin; first < end; first += batch) {
    const int64_t n = std::min(batch, end - first);
    buf.resize(static_cast<size_t>(n * (context + 1)));
    val.fill(first, n, buf.data());
    auto w = model::to_device(torch::from_blob(buf.data(), {n, context + 1}, torch::kLong), device);
    sum += window_loss(model, w, bf16).item<double>() * static_cast<double>(n);
  }
  model.train();
  if (comm) {
    auto total = torch::tensor({sum}, torch::kFloat64).to(device);
    comm->allreduce_sum(total, "adding the validation losses");
    sum = total.cpu().item<double>();
  }
  return sum / static_cast<double>(val.count());
}

void write_status(const fs::path& run_dir, const TrainResult& r) {
  auto num = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
  nlohmann::json j = {{"status", r.status}, {"step", r.step}, {"train_loss", num(r.train_loss)},
                      {"val_loss", num(r.val_loss)}};
  model::write_file_atomic(run_dir / "status.json", j.dump(2) + "\n");
}

// A run folder's checkpoint, when it has one, checked against its manifest and against `cfg`: a
// folder belongs to one run, so a checkpoint of another config is refused rather than resumed.
std::optional<fs::path> checkpoint_of_this_run(const config::RunConfig& cfg,
                                               const fs::path& run_dir) {
  auto existing = model::find_checkpoint(run_dir);
  if (existing) {
    model::verify_checkpoint(*existing);
    auto stored = model::read_checkpoint_config(*existing);
    if (config::config_hash(stored) != config::config_hash(cfg)) {
      throw UsageError("run folder " + run_dir.string() + " holds a checkpoint of a different run (" +
                       config::config_hash(stored) + ", this config is " +
                       config::config_hash(cfg) + "); use another --out folder");
    }
  }
  return existing;
}

// The state a run starts from: a fresh one (only the data fingerprint set), or everything the
// checkpoint holds, loaded into `model`, `optimizer` and the generator, with `windows` moved to
// where the checkpointed run left off.
model::TrainState starting_state(const config::RunConfig& cfg, const fs::path& run_dir,
                                 const std::optional<fs::path>& existing,
                                 model::DecoderLMImpl& model, torch::optim::AdamW& optimizer,
                                 TrainWindows& windows, Progress& progress) {
  const uint64_t starts = windows.total_starts(), checksum = windows.contents_checksum();
  model::TrainState state;
  state.train_starts = starts;
  state.train_checksum = checksum;
  if (!existing) {
    // A fresh run continuing a pretrained model starts from its weights (a resumed one from its
    // checkpoint alone), and records which.
    if (!cfg.model.init_from.empty()) {
      state.init_from_sha256 = model::load_init_from(model, cfg);
      // The tokenizer it reads text with, from now on: evaluation refuses another one.
      state.init_from_tokenizer_sha256 =
          sha256_file(std::filesystem::path(cfg.model.init_from) / "tokenizer.json");
      progress.note(fmt::format("starting from {} (weights sha256 {})", cfg.model.init_from,
                                state.init_from_sha256));
    }
    return state;
  }
  state = model::restore_checkpoint(*existing, model, &optimizer);
  // Other data under the same paths would silently train a different run: the same length with
  // other tokens (re-prepared in another document order, say) is caught by the contents checksum,
  // which checkpoints written before it was recorded lack.
  const bool same_length = state.train_starts == starts;
  if (!same_length || state.train_checksum.value_or(checksum) != checksum) {
    throw UsageError(fmt::format(
        "the training shards ({}) changed since the checkpoint in {} was written ({}); resuming "
        "would not reproduce the run", cfg.data.train, existing->string(),
        same_length ? fmt::format("their contents: xxh3 {:016x} then, {:016x} now",
                                  *state.train_checksum, checksum)
                    : fmt::format("{} window starts then, {} now", state.train_starts, starts)));
  }
  state.train_checksum = checksum;  // recorded from now on
  windows.set_cursor(state.data_cursor);
  progress.note(fmt::format("resuming {} at step {}", run_dir.string(), state.step));
  return state;
}

// The loss and gradient norm of one optimizer step, before its update is applied.
struct StepGradients {
  double loss;       // mean over the step's micro-batches
  double grad_norm;  // global norm before clipping
};

// What one run's step loop works on: the objects train_run sets up (in the order the seed and a
// resume depend on), named one by one.
struct LoopParts {
  const config::RunConfig* cfg = nullptr;
  const fs::path* run_dir = nullptr;
  const TrainOptions* opts = nullptr;
  model::DecoderLMImpl* model = nullptr;
  torch::optim::AdamW* optimizer = nullptr;
  TrainWindows* windows = nullptr;
  const ValWindows* val = nullptr;
  Progress* progress = nullptr;
  // Flushed on its own (a checkpoint records its size); null on ranks > 0.
  JsonlMetricSink* jsonl = nullptr;
  MetricSink* metrics = nullptr;     // jsonl and the caller's sink
  model::TrainState* state = nullptr;
  torch::Device device = torch::kCPU;
  double peak_flops = 0;             // all ranks' devices together, for MFU; 0 = unknown
  Communicator* comm = nullptr;      // null: one process
  GradReducer* reducer = nullptr;    // with comm
};

// The step loop of one run. Every step's decisions (log, validate, checkpoint, stop) live here.
struct StepLoop {
  explicit StepLoop(const LoopParts& p)
      : cfg(*p.cfg),
        run_dir(*p.run_dir),
        opts(*p.opts),
        model(*p.model),
        optimizer(*p.optimizer),
        windows(*p.windows),
        val(*p.val),
        progress(*p.progress),
        jsonl(p.jsonl),
        metrics(*p.metrics),
        state(*p.state),
        device(p.device),
        peak_flops(p.peak_flops),
        comm(p.comm),
        reducer(p.reducer) {}

  const config::RunConfig& cfg;
  const fs::path& run_dir;
  const TrainOptions& opts;
  model::DecoderLMImpl& model;
  torch::optim::AdamW& optimizer;
  TrainWindows& windows;
  const ValWindows& val;
  Progress& progress;
  JsonlMetricSink* jsonl;
  MetricSink& metrics;
  model::TrainState& state;
  const torch::Device device;
  const double peak_flops;
  Communicator* comm;
  GradReducer* reducer;

  const config::TrainConfig& tc = cfg.train;
  const int64_t T = cfg.model.context_length, B = tc.batch_size;
  const int64_t micro_steps = accumulation_steps(tc, cfg.model);
  const int64_t tokens_per_step = micro_steps * B * T;
  const bool bf16 = tc.precision == "bf16";
  const double model_flops_per_token = flops_per_token(cfg);
  const bool leader = !comm || comm->rank() == 0;  // writes the run folder
  // This rank's windows of every step; for one process, the step's micro-batches in order.
  const std::vector<MicroBatch> plan =
      rank_micro_batches(B, micro_steps, comm ? comm->rank() : 0, comm ? comm->size() : 1);
  std::vector<int64_t> buf = std::vector<int64_t>(static_cast<size_t>(B * (T + 1)));
  std::vector<torch::Tensor> params = model.parameters();
  std::vector<std::string> names = parameter_names(model);  // for the replica check's message
  bool stop_agreed = false;  // with comm: some rank was asked to stop during this step

  TrainResult run() {
    if (state.step >= tc.steps) return finish("finished");
    check_replicas();
    // A fresh run's step 0: the loss (and attention) of the model it starts from, the reference a
    // retrofit is read against (a continued pretrained model's own validation loss).
    if (state.step == 0 && tc.eval_interval > 0) validate();
    using clock = std::chrono::steady_clock;
    while (state.step < tc.steps) {
      auto start = clock::now();
      if (comm) comm->set_step(state.step);
      const double lr = learning_rate(tc, state.step);
      set_learning_rate(optimizer, lr, tc);
      const StepGradients g = accumulate_gradients();
      if (!std::isfinite(g.loss) || !std::isfinite(g.grad_norm)) return diverged(g);
      optimizer.step();
      // CUDA runs asynchronously: wait for the step's kernels, or the clock would time only their
      // launch.
      if (device.is_cuda()) torch::cuda::synchronize();
      state.step += 1;
      state.train_loss = g.loss;
      log_step(lr, g, std::chrono::duration<double>(clock::now() - start).count());

      const bool last = state.step == tc.steps;
      if (last || due(tc.log_interval)) check_replicas();
      if (last || due(tc.eval_interval)) validate();
      const bool stop = !last && (comm ? stop_agreed : opts.should_stop && opts.should_stop());
      if (last || stop || due(tc.checkpoint_interval)) {
        // A finite loss and gradient can still step into an overflow: no checkpoint is written
        // from non-finite weights, so the last one on disk stays a model that can be scored.
        if (std::string bad = model::first_non_finite_tensor(model); !bad.empty()) {
          return diverged_weights(bad);
        }
        checkpoint();
      }
      if (stop) return interrupted();
    }
    return finish("finished");
  }

  // The caller's attention probe on the first validation window (TrainOptions::attention_probe).
  void probe_attention() {
    if (!opts.attention_probe || val.count() == 0) return;
    std::vector<int64_t> window(static_cast<size_t>(T + 1));
    val.fill(0, 1, window.data());
    const auto tokens = model::to_device(
        torch::from_blob(window.data(), {T}, torch::kLong), device);
    model.eval();
    for (const auto& [name, value] : opts.attention_probe(model, tokens)) {
      metrics.log_metric(name, state.step, value);
    }
    model.train();
  }

  // True on every `interval`-th step; 0 = never (the last step is handled by the caller).
  bool due(int64_t interval) const { return interval > 0 && state.step % interval == 0; }

  // Gradients of one optimizer step, accumulated over this rank's micro-batches (each loss scaled
  // by 1 / their number, so the sum is the gradient of the mean), averaged over the ranks by the
  // reducer during the last backward pass, then clipped.
  StepGradients accumulate_gradients() {
    optimizer.zero_grad();
    // The losses are added on the device, in float64 as the host did: reading each one would make
    // the host wait for every micro-batch's kernels before it launches the next one's.
    auto loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat64).device(device));
    const auto n = static_cast<double>(plan.size());
    for (size_t m = 0; m < plan.size(); ++m) {
      windows.peek(plan[m].first, plan[m].count, buf.data());
      auto w = model::to_device(
          torch::from_blob(buf.data(), {plan[m].count, T + 1}, torch::kLong), device);
      auto loss = window_loss(model, w, bf16);
      if (reducer && m + 1 == plan.size()) reducer->arm();
      (loss / n).backward();
      loss_sum += loss.detach().to(torch::kFloat64);
    }
    windows.advance(micro_steps * B);
    if (reducer) reducer->finish();
    const double loss = mean_over_ranks(loss_sum.item<double>() / n);
    // Clip to grad_clip (0 = off: the norm is still measured, for the log and the guard).
    const double grad_norm = torch::nn::utils::clip_grad_norm_(
        params, tc.grad_clip > 0 ? tc.grad_clip : std::numeric_limits<double>::infinity());
    return {loss, grad_norm};
  }

  // The mean of every rank's loss (equal shares of the batch: the global batch's mean loss); with it,
  // whether any rank was asked to stop, so that all stop after the same step.
  double mean_over_ranks(double loss) {
    if (!comm) return loss;
    const bool stop = opts.should_stop && opts.should_stop();
    auto t = torch::tensor({loss, stop ? 1.0 : 0.0}, torch::kFloat64).to(device);
    comm->allreduce_sum(t, "adding the ranks' losses");
    const auto host = t.cpu();
    stop_agreed = host[1].item<double>() > 0;
    return host[0].item<double>() / comm->size();
  }

  // Data-parallel replicas must hold the same parameters: checked at the start and every log
  // interval (a few all-reduced sums; docs/distributed.md, "Checks").
  void check_replicas() {
    if (!comm) return;
    check_parameters_identical(*comm, names, params, state.step);
  }

  // Divergence guard: no update from a non-finite loss or gradient; the last checkpoint stays.
  TrainResult diverged(const StepGradients& g) {
    state.train_loss = g.loss;
    metrics.log_metric("train/loss", state.step + 1, g.loss);
    progress.note(fmt::format("diverged at step {}: loss {}, gradient norm {}; the last good "
                              "checkpoint is kept",
                              state.step + 1, g.loss, g.grad_norm));
    return finish("diverged");
  }

  TrainResult diverged_weights(const std::string& tensor) {
    progress.note(fmt::format("diverged at step {}: the weights are no longer finite ({}); the "
                              "last good checkpoint is kept",
                              state.step, tensor));
    return finish("diverged");
  }

  void log_step(double lr, const StepGradients& g, double seconds) {
    metrics.log_metric("train/loss", state.step, g.loss);
    metrics.log_metric("train/lr", state.step, lr);
    metrics.log_metric("train/grad_norm", state.step, g.grad_norm);
    const double memory = peak_memory_mib(device);
    if (state.step % std::max<int64_t>(1, tc.log_interval) == 0) {
      const double tokens_per_s = static_cast<double>(tokens_per_step) / seconds;
      metrics.log_metric("train/tokens_per_s", state.step, tokens_per_s);
      metrics.log_metric("train/step_time_s", state.step, seconds);
      const double utilisation = mfu(model_flops_per_token, tokens_per_s, peak_flops);
      if (std::isfinite(utilisation)) metrics.log_metric("train/mfu", state.step, utilisation);
      if (memory >= 0) metrics.log_metric("train/peak_memory_mib", state.step, memory);
    }
    progress.step(state.step, g.loss, lr, tokens_per_step, seconds, memory);
  }

  void validate() {
    state.val_loss = validation_loss(model, val, B, T, device, bf16, comm);
    if (std::isfinite(state.val_loss)) {
      metrics.log_metric("val/loss", state.step, state.val_loss);
      progress.note(fmt::format("step {}: val loss {:.4f}", state.step, state.val_loss));
    }
    probe_attention();
  }

  // Rank 0 writes; the replicas are identical (check_replicas), so its state is every rank's.
  void checkpoint() {
    if (!leader) return;
    state.metrics_bytes = jsonl->flush();
    state.data_cursor = windows.cursor();
    model::save_checkpoint(run_dir, cfg, model, optimizer, state);
  }

  TrainResult interrupted() {
    progress.note(fmt::format("interrupted at step {}; checkpoint saved, run the same command "
                              "to resume",
                              state.step));
    return finish("interrupted");
  }

  TrainResult finish(const std::string& status) {
    progress.finish();
    TrainResult r{status, state.step, state.train_loss, state.val_loss};
    if (leader) {
      jsonl->flush();
      write_status(run_dir, r);
    }
    return r;
  }
};

// The seed is set right before the model is built: the initial weights depend on it alone (every
// data-parallel rank builds the same model). The model is built on the CPU and then moved, so a run
// starts from the same weights on any device.
model::DecoderLM build_model(const config::RunConfig& cfg, const torch::Device& device) {
  torch::manual_seed(static_cast<uint64_t>(cfg.train.seed));
  model::DecoderLM model(cfg);
  if (!device.is_cpu()) {
    model->to(device);
    kernels::reset_cuda_peak_allocated(device.index());
  }
  model->train();
  return model;
}

}  // namespace

TrainResult train_run(const config::RunConfig& cfg, const fs::path& run_dir, MetricSink* sink,
                      const TrainOptions& opts) {
  return train_run(cfg, preflight(cfg), run_dir, sink, opts);
}

TrainResult train_run(const config::RunConfig& cfg, TrainingData data, const fs::path& run_dir,
                      MetricSink* sink, const TrainOptions& opts) {
  const auto& tc = cfg.train;
  Communicator* comm = opts.comm;
  const bool leader = !comm || comm->rank() == 0;  // one writer per run folder
  const torch::Device device = comm ? comm->device() : model::resolve_device(tc.device);

  fs::create_directories(run_dir);
  std::optional<RunLock> lock;
  if (leader) lock.emplace(run_dir);
  const auto existing = checkpoint_of_this_run(cfg, run_dir);
  if (tc.threads > 0) torch::set_num_threads(static_cast<int>(tc.threads));
  model::apply_numerics(tc);

  model::DecoderLM model = build_model(cfg, device);
  auto optimizer = make_adamw(*model, tc);
  TrainWindows windows(&data.train, cfg.model.context_length, static_cast<uint64_t>(tc.seed),
                       cfg.data.fixed_token_position, cfg.data.fixed_token_id);
  ValWindows val(&data.val, cfg.model.context_length, tc.eval_tokens);

  const double peak = peak_flops(tc, model::gpu_name(device)) * (comm ? comm->size() : 1);
  Progress progress(tc.steps, tc.log_interval, Progress::stderr_is_terminal(),
                    opts.quiet || !leader, flops_per_token(cfg), peak);
  model::TrainState state =
      starting_state(cfg, run_dir, existing, *model, *optimizer, windows, progress);
  // A fresh run starts an empty metrics file; a resumed one drops what was logged after its
  // checkpoint (those steps are about to be redone, identically).
  std::optional<JsonlMetricSink> jsonl;
  std::optional<TensorBoardSink> events;
  if (leader) {
    model::write_file_atomic(run_dir / "config.json", config::to_json(cfg).dump(2) + "\n");
    jsonl.emplace(run_dir / "metrics.jsonl", existing ? state.metrics_bytes : 0);
    events.emplace(run_dir, state.step + 1);  // a new event file (train/tensorboard_sink.h)
  }
  TeeSink metrics({jsonl ? &*jsonl : nullptr, events ? &*events : nullptr, leader ? sink : nullptr});
  std::optional<GradReducer> reducer;
  if (comm) reducer.emplace(parameter_names(*model), model->parameters(), *comm);

  LoopParts parts;
  parts.cfg = &cfg;
  parts.run_dir = &run_dir;
  parts.opts = &opts;
  parts.model = model.get();
  parts.optimizer = optimizer.get();
  parts.windows = &windows;
  parts.val = &val;
  parts.progress = &progress;
  parts.jsonl = jsonl ? &*jsonl : nullptr;
  parts.metrics = &metrics;
  parts.state = &state;
  parts.device = device;
  parts.peak_flops = peak;
  parts.comm = comm;
  parts.reducer = reducer ? &*reducer : nullptr;
  return StepLoop(parts).run();
}

}  // namespace attnbench::train
