#include "model/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <fstream>
#include <mutex>

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

json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read " + path.string());
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw UsageError(path.string() + ": not valid JSON (" + e.what() + ")");
  }
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

void save_checkpoint(const fs::path& run_dir, const config::RunConfig& cfg,
                     model::DecoderLMImpl& model, torch::optim::Optimizer& optimizer,
                     const TrainState& state) {
  fs::path dir = stage_checkpoint(run_dir);
  {
    torch::serialize::OutputArchive archive;
    model.save(archive);
    archive.save_to((dir / "model.pt").string());
  }
  {
    torch::serialize::OutputArchive archive;
    optimizer.save(archive);
    archive.save_to((dir / "optimizer.pt").string());
  }
  {
    auto gen = at::detail::getDefaultCPUGenerator();
    torch::Tensor rng;
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      rng = gen.get_state();
    }
    torch::serialize::OutputArchive archive;
    archive.write("cpu_generator", rng);
    archive.save_to((dir / "rng.pt").string());
  }
  json s = {{"step", state.step},
            {"data_cursor", state.data_cursor},
            {"metrics_bytes", state.metrics_bytes},
            {"train_loss", number_or_null(state.train_loss)},
            {"val_loss", number_or_null(state.val_loss)},
            {"train_starts", state.train_starts}};
  write_text(dir / "state.json", s.dump(2) + "\n");
  write_text(dir / "config.json", config::to_json(cfg).dump(2) + "\n");
  write_manifest(dir, state.step);
  publish_checkpoint(run_dir, dir);
}

config::RunConfig read_checkpoint_config(const fs::path& dir) {
  return config::from_json(read_json(dir / "config.json"));
}

TrainState restore_checkpoint(const fs::path& dir, model::DecoderLMImpl& model,
                              torch::optim::Optimizer* optimizer) {
  {
    torch::serialize::InputArchive archive;
    archive.load_from((dir / "model.pt").string());
    model.load(archive);
  }
  if (optimizer) {
    torch::serialize::InputArchive archive;
    archive.load_from((dir / "optimizer.pt").string());
    optimizer->load(archive);
    torch::serialize::InputArchive rng_archive;
    rng_archive.load_from((dir / "rng.pt").string());
    torch::Tensor rng;
    rng_archive.read("cpu_generator", rng);
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(rng);
  }
  json s = read_json(dir / "state.json");
  TrainState st;
  st.step = s.at("step").get<int64_t>();
  st.data_cursor = s.at("data_cursor").get<int64_t>();
  st.metrics_bytes = s.at("metrics_bytes").get<int64_t>();
  st.train_loss = number_or_nan(s.at("train_loss"));
  st.val_loss = number_or_nan(s.at("val_loss"));
  st.train_starts = s.at("train_starts").get<uint64_t>();
  return st;
}

}  // namespace attnbench::model
