#include "core/common/periodic.h"

namespace attnbench {

PeriodicWorker::PeriodicWorker(std::chrono::milliseconds interval, std::function<bool()> task)
    : interval_(interval), task_(std::move(task)), thread_([this] { run(); }) {}

PeriodicWorker::~PeriodicWorker() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void PeriodicWorker::run() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    lock.unlock();  // the task runs unlocked: the destructor never waits on it to take the lock
    const bool again = task_();
    lock.lock();
    if (!again) return;
    wake_.wait_for(lock, interval_, [this] { return stop_; });
  }
}

}  // namespace attnbench
