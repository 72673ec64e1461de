// A task run now and then every `interval` on a thread of its own, until the worker is destroyed or
// the task returns false: the shape of every heartbeat (a sweep cell's claim in the store, a
// rank's counter in the rendezvous store). The destructor wakes the thread and joins it, so no run
// of the task outlives the objects it uses.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace attnbench {

class PeriodicWorker {
 public:
  PeriodicWorker(std::chrono::milliseconds interval, std::function<bool()> task);
  ~PeriodicWorker();
  PeriodicWorker(const PeriodicWorker&) = delete;
  PeriodicWorker& operator=(const PeriodicWorker&) = delete;

 private:
  void run();

  std::chrono::milliseconds interval_;
  std::function<bool()> task_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace attnbench
