// Training metrics into the results store (docs/training.md, "Metrics": every logged metric goes to
// the results store). Each metric is written through at once, one transaction: buffering would lose
// the metrics logged just before a checkpoint when the process is killed right after it, and they
// are never logged again on resume. Re-logged steps after a resume are upserts (store.h).
#pragma once
#include <string>

#include "train/metric_sink.h"
#include "results/store.h"

namespace attnbench::sweep {

class StoreSink : public train::MetricSink {
 public:
  StoreSink(results::Store& store, std::string run_id) : store_(store), run_id_(std::move(run_id)) {}
  void log_metric(const std::string& key, int64_t step, double value) override;

 private:
  results::Store& store_;
  std::string run_id_;
};

}  // namespace attnbench::sweep
