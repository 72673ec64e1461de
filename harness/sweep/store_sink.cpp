#include "harness/sweep/store_sink.h"

namespace attnbench::sweep {

void StoreSink::log_metric(const std::string& key, int64_t step, double value) {
  results::Metric m;
  m.key = key;
  m.step = step;
  m.value = value;  // a non-finite (diverged) loss is stored as NULL (results/schema.cpp)
  store_.log_metrics(run_id_, {m});
}

}  // namespace attnbench::sweep
