// Training metrics as TensorBoard scalars (docs/training.md, "TensorBoard"): every metric the
// trainer logs goes, under its own key as the tag, into an event file in the run folder, so that
// `tensorboard --logdir runs/` shows every run live.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include "core/common/tensorboard_events.h"
#include "train/metric_sink.h"

namespace attnbench::train {

class TensorBoardSink : public MetricSink {
 public:
  // Each training session writes a new event file in `run_dir`, opened with the first metric (a
  // run that has nothing left to do leaves no file). Its first event after the file version is a
  // SessionLog START at `first_step`, the first step this session logs: TensorBoard then drops
  // whatever earlier files of the folder hold from that step on (logged after the checkpoint
  // being resumed, or by an attempt that never reached one), exactly the steps about to be
  // logged again, as metrics.jsonl is truncated for the same reason.
  TensorBoardSink(std::filesystem::path run_dir, int64_t first_step);

  // Written and flushed at once (a few dozen bytes per metric), so TensorBoard shows it live.
  void log_metric(const std::string& key, int64_t step, double value) override;

 private:
  std::filesystem::path run_dir_;
  int64_t first_step_;
  tensorboard::EventFileWriter writer_;
};

}  // namespace attnbench::train
