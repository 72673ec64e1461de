#include "model/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <fstream>
#include <mutex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "model/checkpoint_dir.h"

namespace attnbench::model {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json number_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }
double number_or_nan(const json& j) {
  return j.is_number() ? j.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

// state.json's train_checksum: 16 lowercase hex digits (a JSON number would lose 64-bit values in
// many readers).
uint64_t parse_checksum(const json& j, const fs::path& file) {
  const std::string s = j.is_string() ? j.get<std::string>() : "";
  if (s.size() != 16 || s.find_first_not_of("0123456789abcdef") != std::string::npos) {
    throw UsageError(file.string() + ": train_checksum must be 16 hex digits, got " + j.dump());
  }
  return std::stoull(s, nullptr, 16);
}

json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read " + path.string());
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw UsageError(path.string() + ": not valid JSON (" + e.what() + ")");
  }
}

// The device a model's parameters are on (CPU for a model without any).
torch::Device device_of(torch::nn::Module& model) {
  auto params = model.parameters();
  return params.empty() ? torch::Device(torch::kCPU) : params.front().device();
}

// A generator's state, read under its lock (another thread may draw from it).
torch::Tensor generator_state(at::Generator gen) {  // a handle: copies share the generator
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}

// Loads a torch archive with every tensor mapped onto `device` as it is read (map_location): a
// checkpoint written on CUDA loads on a machine without one, and on CUDA the model's parameters are
// refilled in place (their identity, which the optimizer holds, is kept) with the optimizer's
// moments beside them. CPU tensors mapped to the CPU are not copied.
// Then `read` takes what it needs from the archive. A file that is not such an archive, or lacks a
// tensor the model has, is a corrupt checkpoint named with its file (its manifest may have been
// edited to match it), not LibTorch's "PytorchStreamReader failed reading zip archive".
void load_archive(const fs::path& path, const torch::Device& device,
                  const std::function<void(torch::serialize::InputArchive&)>& read) {
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path.string(), device);
    read(archive);
  } catch (const c10::Error& e) {
    std::string cause = e.what_without_backtrace();
    cause = cause.substr(0, cause.find('\n'));
    throw UsageError(path.string() + ": cannot be read as this run's checkpoint (corrupt, or not "
                     "written by attnbench for this model): " + cause);
  }
}

void write_text(const fs::path& path, const std::string& text) {
  CheckedFile out(path);
  out.write(text.data(), text.size());
  out.finish();
}

// A torch archive is streamed through CheckedFile rather than written by torch to a path: torch
// reports a failed write as a c10::Error in the middle of the archive, without the file or errno;
// this way every byte goes through checked writes and finish() names both.
void write_archive(const fs::path& path, torch::serialize::OutputArchive& archive) {
  CheckedFile out(path);
  archive.save_to([&out](const void* data, size_t n) { return out.write(data, n); });
  out.finish();
}

// What went wrong, without the C++ backtrace a c10::Error carries in what().
std::string cause_of(const std::exception& e) {
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) return c10->what_without_backtrace();
  return e.what();
}

void write_checkpoint_files(const fs::path& dir, const config::RunConfig& cfg,
                            model::DecoderLMImpl& model, torch::optim::Optimizer& optimizer,
                            const TrainState& state) {
  {
    torch::serialize::OutputArchive archive;
    model.save(archive);
    write_archive(dir / "model.pt", archive);
  }
  {
    torch::serialize::OutputArchive archive;
    optimizer.save(archive);
    write_archive(dir / "optimizer.pt", archive);
  }
  {
    torch::serialize::OutputArchive archive;
    archive.write("cpu_generator", generator_state(at::detail::getDefaultCPUGenerator()));
    // The CUDA generator only when the run is on CUDA: a CPU checkpoint stays as it was, and a
    // CUDA one resumed on the CPU simply has no use for it. Its state is a CPU byte tensor.
    const torch::Device device = device_of(model);
    if (device.is_cuda()) {
      archive.write("cuda_generator",
                    generator_state(at::globalContext().defaultGenerator(device)));
    }
    write_archive(dir / "rng.pt", archive);
  }
  json s = {{"step", state.step},
            {"data_cursor", state.data_cursor},
            {"metrics_bytes", state.metrics_bytes},
            {"train_loss", number_or_null(state.train_loss)},
            {"val_loss", number_or_null(state.val_loss)},
            {"train_starts", state.train_starts}};
  if (state.train_checksum) s["train_checksum"] = fmt::format("{:016x}", *state.train_checksum);
  if (!state.init_from_sha256.empty()) s["init_from_sha256"] = state.init_from_sha256;
  if (!state.init_from_tokenizer_sha256.empty()) {
    s["init_from_tokenizer_sha256"] = state.init_from_tokenizer_sha256;
  }
  write_text(dir / "state.json", s.dump(2) + "\n");
  write_text(dir / "config.json", config::to_json(cfg).dump(2) + "\n");
  write_manifest(dir, state.step);
}

}  // namespace

void save_checkpoint(const fs::path& run_dir, const config::RunConfig& cfg,
                     model::DecoderLMImpl& model, torch::optim::Optimizer& optimizer,
                     const TrainState& state) {
  // Any failure (a full disk: ENOSPC on a write or fsync) leaves the run as it was before this
  // call: the staging folder is removed and the previous checkpoint, untouched until
  // publish_checkpoint, is what a rerun resumes from. A runtime error (exit 1), not a usage error.
  fs::path dir;
  try {
    dir = stage_checkpoint(run_dir);
    write_checkpoint_files(dir, cfg, model, optimizer, state);
    publish_checkpoint(run_dir, dir);
  } catch (const std::exception& e) {
    std::error_code ignored;
    if (!dir.empty()) fs::remove_all(dir, ignored);
    const auto previous = find_checkpoint(run_dir);
    throw std::runtime_error(
        "cannot write the checkpoint of step " + std::to_string(state.step) + " in " +
        run_dir.string() + ": " + cause_of(e) + ". " +
        (previous ? "The previous checkpoint " + previous->string() + " is intact: free space and "
                    "run the same command to resume from it"
                  : std::string("No checkpoint was written yet: free space and run the same "
                                "command to start again")));
  }
}

config::RunConfig read_checkpoint_config(const fs::path& dir) {
  return config::from_json(read_json(dir / "config.json"));
}

TrainState restore_checkpoint(const fs::path& dir, model::DecoderLMImpl& model,
                              torch::optim::Optimizer* optimizer) {
  // Checkpoints hold CPU or CUDA tensors depending on where they were written; each is read onto
  // the device the model is on now, so either loads on either.
  const torch::Device device = device_of(model);
  load_archive(dir / "model.pt", device, [&](auto& archive) { model.load(archive); });
  if (optimizer) {
    load_archive(dir / "optimizer.pt", device, [&](auto& archive) { optimizer->load(archive); });
    // Generator states are CPU byte tensors wherever the run was.
    torch::Tensor rng, cuda_rng;
    bool has_cuda_rng = false;
    load_archive(dir / "rng.pt", torch::Device(torch::kCPU), [&](auto& archive) {
      archive.read("cpu_generator", rng);
      has_cuda_rng = archive.try_read("cuda_generator", cuda_rng);
    });
    {
      auto gen = at::detail::getDefaultCPUGenerator();
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(rng);
    }
    if (device.is_cuda() && has_cuda_rng) {
      auto gen = at::globalContext().defaultGenerator(device);
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(cuda_rng);
    }
  }
  json s = read_json(dir / "state.json");
  TrainState st;
  st.step = s.at("step").get<int64_t>();
  st.data_cursor = s.at("data_cursor").get<int64_t>();
  st.metrics_bytes = s.at("metrics_bytes").get<int64_t>();
  st.train_loss = number_or_nan(s.at("train_loss"));
  st.val_loss = number_or_nan(s.at("val_loss"));
  st.train_starts = s.at("train_starts").get<uint64_t>();
  if (s.contains("train_checksum")) {
    st.train_checksum = parse_checksum(s.at("train_checksum"), dir / "state.json");
  }
  if (s.contains("init_from_sha256")) {
    st.init_from_sha256 = s.at("init_from_sha256").get<std::string>();
  }
  if (s.contains("init_from_tokenizer_sha256")) {
    st.init_from_tokenizer_sha256 = s.at("init_from_tokenizer_sha256").get<std::string>();
  }
  return st;
}

}  // namespace attnbench::model
