// Data-parallel gradient averaging (docs/distributed.md, "What a step does"), the scheme of
// PyTorch's DistributedDataParallel: parameters are grouped into buckets of about 25 MiB in reverse
// order (the order their gradients become ready in the backward pass); a hook on each parameter
// copies its gradient into its bucket as soon as autograd produces it, and a full bucket's
// all-reduce starts at once, so communication overlaps the rest of the backward pass. Buckets are
// launched strictly in index order, so every rank issues the same collectives in the same order.
//
// With gradient accumulation only the last micro-batch's backward is reduced (arm() before it):
// its hook adds the gradient accumulated so far, so one all-reduce per optimizer step carries the
// whole step's gradient.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "train/distributed.h"

namespace attnbench::train {

class GradReducer {
 public:
  static constexpr int64_t kBucketBytes = 25 << 20;  // DistributedDataParallel's default

  GradReducer(std::vector<std::string> names, std::vector<torch::Tensor> params,
              Communicator& comm, int64_t bucket_bytes = kBucketBytes);
  ~GradReducer();
  GradReducer(const GradReducer&) = delete;
  GradReducer& operator=(const GradReducer&) = delete;

  // The next backward pass is reduced.
  void arm();
  // After that backward pass: reduces the buckets the hooks have not started, waits for every
  // all-reduce and leaves the mean over ranks in each parameter's .grad. A parameter that received
  // no gradient stops the run (every parameter must take part in every step, as in DDP's default).
  void finish();

  int64_t bucket_count() const { return static_cast<int64_t>(buckets_.size()); }

 private:
  struct Bucket {
    torch::Tensor flat;
    std::vector<size_t> params;
    int64_t waiting = 0;  // gradients not yet copied in
    std::function<void()> wait;
  };
  struct Slot {
    size_t bucket = 0;
    int64_t offset = 0;
  };

  void on_gradient(size_t i, const torch::Tensor& grad);
  void launch_ready();
  torch::Tensor slot_view(size_t i);

  std::vector<std::string> names_;
  std::vector<torch::Tensor> params_;
  Communicator& comm_;
  std::vector<Bucket> buckets_;
  std::vector<Slot> slots_;
  std::vector<bool> arrived_;
  std::vector<unsigned> hooks_;
  size_t next_launch_ = 0;
  bool armed_ = false;
  std::mutex mutex_;  // autograd may run hooks on its device threads
};

}  // namespace attnbench::train
