#include "train/tensorboard_sink.h"

#include <utility>

namespace attnbench::train {

TensorBoardSink::TensorBoardSink(std::filesystem::path run_dir, int64_t first_step)
    : run_dir_(std::move(run_dir)), first_step_(first_step) {}

void TensorBoardSink::log_metric(const std::string& key, int64_t step, double value) {
  const double now = tensorboard::unix_now();
  if (!writer_.is_open()) {
    writer_.open(tensorboard::new_event_file(run_dir_, now), now);
    writer_.add_session_start(first_step_, now);
  }
  writer_.add_scalar(key, step, value, now);
  writer_.flush();
}

}  // namespace attnbench::train
