#include "train/metric_sink.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace attnbench::train {

namespace fs = std::filesystem;

JsonlMetricSink::JsonlMetricSink(const fs::path& path, int64_t truncate_to) : path_(path) {
  std::error_code ec;
  if (truncate_to >= 0 && fs::exists(path, ec) &&
      static_cast<int64_t>(fs::file_size(path, ec)) > truncate_to) {
    fs::resize_file(path, static_cast<uintmax_t>(truncate_to));
  }
  file_ = std::fopen(path.c_str(), "ab");
  if (!file_) {
    throw std::runtime_error("cannot open " + path.string() + " for appending: " +
                             std::strerror(errno));
  }
}

JsonlMetricSink::~JsonlMetricSink() {
  if (file_) std::fclose(file_);
}

void JsonlMetricSink::log_metric(const std::string& key, int64_t step, double value) {
  double now = std::chrono::duration<double>(
                   std::chrono::system_clock::now().time_since_epoch()).count();
  nlohmann::json j;
  j["key"] = key;
  j["step"] = step;
  j["value"] = std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
  j["time"] = std::round(now * 1000.0) / 1000.0;
  std::string line = j.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size()) {
    throw std::runtime_error("cannot write " + path_.string() + ": " + std::strerror(errno));
  }
}

int64_t JsonlMetricSink::flush() {
  std::fflush(file_);
  return static_cast<int64_t>(std::ftell(file_));
}

TeeSink::TeeSink(std::vector<MetricSink*> sinks) : sinks_(std::move(sinks)) {}

void TeeSink::log_metric(const std::string& key, int64_t step, double value) {
  for (auto* s : sinks_)
    if (s) s->log_metric(key, step, value);
}

}  // namespace attnbench::train
