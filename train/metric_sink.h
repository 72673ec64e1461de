// Where training metrics go (docs/training.md, "Metrics"). The trainer logs every metric to a
// MetricSink (the results store attaches one: every logged metric goes to the results store) and to
// metrics.jsonl in the run folder. After a resume the steps since the last checkpoint are logged
// again with the same values (resume is exact); a sink should treat (key, step) as a key and
// overwrite.
#pragma once
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace attnbench::train {

struct MetricSink {
  virtual ~MetricSink() = default;
  virtual void log_metric(const std::string& key, int64_t step, double value) = 0;
};

// Appends one JSON object per metric to a file:
//   {"key":"train/loss","step":12,"value":3.21,"time":1732190000.123}
// (`time` = Unix seconds; a non-finite value is written as null, JSON having no NaN).
class JsonlMetricSink : public MetricSink {
 public:
  // Opens `path` for appending; when `truncate_to` >= 0 and the file is longer, it is first cut
  // back to that many bytes (the size recorded in the checkpoint being resumed, so that lines
  // logged after it are not duplicated).
  explicit JsonlMetricSink(const std::filesystem::path& path, int64_t truncate_to = -1);
  ~JsonlMetricSink() override;
  JsonlMetricSink(const JsonlMetricSink&) = delete;
  JsonlMetricSink& operator=(const JsonlMetricSink&) = delete;

  void log_metric(const std::string& key, int64_t step, double value) override;
  // Flushes and returns the file's size in bytes (recorded in checkpoints).
  int64_t flush();

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

// Forwards every metric to each non-null sink.
class TeeSink : public MetricSink {
 public:
  explicit TeeSink(std::vector<MetricSink*> sinks);
  void log_metric(const std::string& key, int64_t step, double value) override;

 private:
  std::vector<MetricSink*> sinks_;
};

}  // namespace attnbench::train
