#include "train/grad_reducer.h"

#include <fmt/format.h>

namespace attnbench::train {

GradReducer::GradReducer(std::vector<std::string> names, std::vector<torch::Tensor> params,
                         Communicator& comm, int64_t bucket_bytes)
    : names_(std::move(names)), params_(std::move(params)), comm_(comm),
      slots_(params_.size()), arrived_(params_.size(), false) {
  // Reverse order; a bucket closes when it reaches bucket_bytes or the dtype or device changes.
  std::vector<std::vector<size_t>> groups;
  int64_t bytes = 0;
  for (size_t k = params_.size(); k-- > 0;) {
    const auto& p = params_[k];
    const bool fits = !groups.empty() && bytes < bucket_bytes &&
                      params_[groups.back().front()].options().dtype() == p.options().dtype() &&
                      params_[groups.back().front()].device() == p.device();
    if (!fits) {
      groups.emplace_back();
      bytes = 0;
    }
    groups.back().push_back(k);
    bytes += p.numel() * static_cast<int64_t>(p.element_size());
  }
  for (auto& group : groups) {
    Bucket b;
    int64_t numel = 0;
    for (size_t k : group) {
      slots_[k] = {buckets_.size(), numel};
      numel += params_[k].numel();
    }
    b.flat = torch::zeros({numel}, params_[group.front()].options());
    b.params = std::move(group);
    b.waiting = static_cast<int64_t>(b.params.size());
    buckets_.push_back(std::move(b));
  }
  for (size_t k = 0; k < params_.size(); ++k) {
    hooks_.push_back(params_[k].register_hook([this, k](torch::Tensor g) { on_gradient(k, g); }));
  }
}

GradReducer::~GradReducer() {
  for (size_t k = 0; k < hooks_.size(); ++k) params_[k].remove_hook(hooks_[k]);
}

torch::Tensor GradReducer::slot_view(size_t k) {
  const Slot& s = slots_[k];
  return buckets_[s.bucket].flat.narrow(0, s.offset, params_[k].numel()).view_as(params_[k]);
}

void GradReducer::arm() { armed_ = true; }

// The gradient the parameter will hold once autograd has accumulated `grad` into it.
void GradReducer::on_gradient(size_t k, const torch::Tensor& grad) {
  if (!armed_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  torch::NoGradGuard no_grad;
  auto dst = slot_view(k);
  const auto& accumulated = params_[k].grad();
  if (accumulated.defined()) {
    torch::add_out(dst, accumulated, grad);
  } else {
    dst.copy_(grad);
  }
  arrived_[k] = true;
  if (--buckets_[slots_[k].bucket].waiting == 0) launch_ready();
}

void GradReducer::launch_ready() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].waiting == 0) {
    Bucket& b = buckets_[next_launch_];
    b.wait = comm_.allreduce_sum_async(
        b.flat, fmt::format("all-reduce of gradient bucket {} of {}", next_launch_,
                            buckets_.size()));
    ++next_launch_;
  }
}

void GradReducer::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  torch::NoGradGuard no_grad;
  for (size_t k = 0; k < params_.size(); ++k) {
    if (arrived_[k]) continue;
    // No hook ran for it: a parameter the loss does not depend on.
    throw std::runtime_error(fmt::format(
        "rank {}: parameter {} received no gradient in this step; data-parallel training needs "
        "every parameter to take part in the loss",
        comm_.rank(), names_[k]));
  }
  launch_ready();
  const double world = static_cast<double>(comm_.size());
  for (auto& b : buckets_) {
    b.wait();
    b.flat.div_(world);
    for (size_t k : b.params) params_[k].mutable_grad().copy_(slot_view(k));
    b.waiting = static_cast<int64_t>(b.params.size());
    b.wait = nullptr;
  }
  std::fill(arrived_.begin(), arrived_.end(), false);
  next_launch_ = 0;
  armed_ = false;
}

}  // namespace attnbench::train
