#include "train/distributed.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#include <torch/version.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/common/periodic.h"

namespace attnbench::train {
namespace {

// LibTorch 2 split a process group into backends: Gloo and NCCL derive from c10d::Backend there,
// from c10d::ProcessGroup in 1.13 (Debian's); the collectives used here are the same on both.
#if TORCH_VERSION_MAJOR >= 2
using Group = c10d::Backend;
#else
using Group = c10d::ProcessGroup;
#endif

// An integer environment variable in [min_value, max_value]; `fallback` when unset.
int env_int(const GetEnv& getenv, const char* name, int fallback, int min_value = 0,
            int max_value = 1 << 24) {
  const char* raw = getenv(name);
  if (!raw || !*raw) return fallback;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(raw, &end, 10);
  if (*end != '\0' || errno != 0 || v < min_value || v > max_value) {
    throw UsageError(fmt::format("environment variable {}={}: expected an integer in [{}, {}]", name,
                                 raw, min_value, max_value));
  }
  return static_cast<int>(v);
}

// MASTER_PORT is a TCP port: 95000 used to be cut to 16 bits, silently another port.
int master_port(const GetEnv& getenv, int fallback) {
  return env_int(getenv, "MASTER_PORT", fallback, 1, 65535);
}

int required_int(const GetEnv& getenv, const char* name, int min_value, const char* launcher) {
  if (!getenv(name)) {
    throw UsageError(fmt::format("{} is not set: a {} launch sets it (docs/distributed.md)", name,
                                 launcher));
  }
  return env_int(getenv, name, 0, min_value);
}

void check_rank(const RankEnv& e) {
  if (e.rank >= e.world_size || e.local_rank >= e.local_world_size) {
    throw UsageError(fmt::format("inconsistent {} environment: rank {} of world size {}, local rank "
                                 "{} of {}",
                                 e.launcher, e.rank, e.world_size, e.local_rank,
                                 e.local_world_size));
  }
}

RankEnv torchrun_env(const GetEnv& getenv) {
  RankEnv e;
  e.launcher = "torchrun";
  e.rank = required_int(getenv, "RANK", 0, "torchrun");
  e.world_size = required_int(getenv, "WORLD_SIZE", 1, "torchrun");
  e.local_rank = env_int(getenv, "LOCAL_RANK", e.rank);
  e.local_world_size = env_int(getenv, "LOCAL_WORLD_SIZE", e.world_size, 1);
  if (const char* addr = getenv("MASTER_ADDR"); addr && *addr) e.master_addr = addr;
  e.master_port = master_port(getenv, e.master_port);
  const char* agent = getenv("TORCHELASTIC_USE_AGENT_STORE");
  e.agent_store = agent && std::string(agent) == "True";
  e.attempt = env_int(getenv, "TORCHELASTIC_RESTART_COUNT", 0, 0);
  return e;
}

// SLURM_STEP_TASKS_PER_NODE reads like "4(x2)" or "4,3": this node's count is not in it, but on the
// homogeneous allocations data parallelism uses the first entry is every node's.
int slurm_tasks_per_node(const GetEnv& getenv, int world_size) {
  for (const char* name : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
    if (const char* raw = getenv(name); raw && std::isdigit(static_cast<unsigned char>(*raw))) {
      return std::max(1, std::atoi(raw));
    }
  }
  return world_size;
}

RankEnv slurm_env(const GetEnv& getenv, int world_size) {
  RankEnv e;
  e.launcher = "slurm";
  e.world_size = world_size;
  e.rank = required_int(getenv, "SLURM_PROCID", 0, "srun");
  e.local_rank = env_int(getenv, "SLURM_LOCALID", 0);
  e.local_world_size = slurm_tasks_per_node(getenv, world_size);
  const char* addr = getenv("MASTER_ADDR");
  if (!addr || !*addr) {
    throw UsageError("MASTER_ADDR is not set: under srun, export the first host of the allocation "
                     "before the job step, e.g. MASTER_ADDR=$(scontrol show hostnames "
                     "\"$SLURM_JOB_NODELIST\" | head -n1) (docs/distributed.md)");
  }
  e.master_addr = addr;
  e.master_port = master_port(getenv, e.master_port);
  return e;
}

}  // namespace

RankEnv rank_env(const GetEnv& getenv) {
  RankEnv e;
  if (getenv("RANK") || getenv("WORLD_SIZE")) {
    e = torchrun_env(getenv);
  } else if (getenv("SLURM_PROCID")) {
    // A job step's task count; a batch script outside srun has SLURM_NTASKS but is one process.
    const int tasks = env_int(getenv, "SLURM_STEP_NUM_TASKS", 1, 1);
    if (tasks > 1) e = slurm_env(getenv, tasks);
  }
  if (e.distributed()) check_rank(e);
  return e;
}

RankEnv rank_env() {
  return rank_env([](const char* name) { return std::getenv(name); });
}

namespace {

c10::intrusive_ptr<c10d::Store> rendezvous(const RankEnv& env, std::chrono::seconds timeout,
                                           bool server) {
  c10d::TCPStoreOptions o;
  o.port = static_cast<uint16_t>(env.master_port);
  o.isServer = server;
  o.numWorkers = env.world_size;
  o.waitWorkers = false;
  o.timeout = timeout;
  try {
    return c10::make_intrusive<c10d::TCPStore>(env.master_addr, o);
  } catch (const c10::Error& e) {
    throw std::runtime_error(fmt::format("rank {} of {}: rendezvous at {}:{} failed: {}", env.rank,
                                         env.world_size, env.master_addr, env.master_port,
                                         e.what_without_backtrace()));
  }
}

// A TCPStore client that reads from anything but a rank store (any byte stream on the port) can
// die in LibTorch's own listener thread (std::bad_alloc from a length read out of garbage), where
// no catch here reaches: a forked child connects and asks first, and the rank connects only after
// the child has had a store's answer. UsageError when what listens answers otherwise.
void require_store_peer(const RankEnv& env, std::chrono::seconds timeout) {
  const pid_t pid = fork();
  if (pid < 0) return;  // no probe possible: the rank connects directly
  if (pid == 0) {
    const int null_fd = open("/dev/null", O_WRONLY);  // the child's dying words are not the rank's
    if (null_fd >= 0) dup2(null_fd, STDERR_FILENO);
    const auto start = std::chrono::steady_clock::now();
    int code = 0;
    try {
      rendezvous(env, timeout, false)->check({"attnbench/probe"});
    } catch (...) {
      // Waiting out (most of) the timeout means no store answered; failing early, that a stranger
      // did (LibTorch's client gives up a little before its deadline).
      code = std::chrono::steady_clock::now() - start >= timeout / 2 ? 3 : 4;
    }
    _exit(code);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
    throw std::runtime_error(fmt::format(
        "rank {} of {}: rendezvous at {}:{} failed: no rank store answered within the {} s "
        "timeout (--dist-timeout): nothing listens there, or what does is not a rank store (is "
        "MASTER_PORT another program's?)",
        env.rank, env.world_size, env.master_addr, env.master_port, timeout.count()));
  }
  throw UsageError(fmt::format(
      "rank {} of {}: what listens at {}:{} does not answer as a rank store (MASTER_ADDR, "
      "MASTER_PORT): another program holds the port, or it is not this job's",
      env.rank, env.world_size, env.master_addr, env.master_port));
}

std::string read_key(c10d::Store& store, const std::string& key) {
  if (!store.check({key})) return "";
  const auto bytes = store.get(key);
  return std::string(bytes.begin(), bytes.end());
}

void write_key(c10d::Store& store, const std::string& key, const std::string& value) {
  store.set(key, std::vector<uint8_t>(value.begin(), value.end()));
}

// Every second a rank bumps its counter in the store, from a thread with a store connection of its
// own. After a failed collective, a rank whose counter stands still is stopped, frozen or dead
// (a rank stuck in a collective still beats): the failure message can name it.
class Heartbeat {
 public:
  Heartbeat(const RankEnv& env, std::chrono::seconds timeout)
      : store_(rendezvous(env, timeout, false)),
        key_(beat_key(env.rank)),
        worker_(std::chrono::seconds(1), [this] { return beat(); }) {}
  static std::string beat_key(int rank) { return "attnbench/heartbeat/" + std::to_string(rank); }

 private:
  bool beat() {
    try {
      write_key(*store_, key_, std::to_string(beats_++));
      return true;
    } catch (const std::exception&) {
      return false;  // the store is gone (its host died): nothing left to report to
    }
  }

  c10::intrusive_ptr<c10d::Store> store_;
  std::string key_;
  int64_t beats_ = 0;
  PeriodicWorker worker_;  // last: beats once the members above exist
};

// What the store says about the other ranks after a failure: the steps each completed, and which
// stopped beating over 2.5 s. The rank asking is alive whatever its own beats show (on a loaded
// machine its heartbeat thread may wait past the window), so it never names itself. Runs on a
// thread of its own and is given up on after 5 s, since a store hosted by a frozen rank never
// answers.
std::string diagnose(const c10::intrusive_ptr<c10d::Store>& store, int world_size, int self) {
  auto result = std::make_shared<std::promise<std::string>>();
  auto answer = result->get_future();
  std::thread([store, world_size, self, result] {
    try {
      std::vector<std::string> before;
      for (int r = 0; r < world_size; ++r) before.push_back(read_key(*store, Heartbeat::beat_key(r)));
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));
      std::string silent, steps;
      for (int r = 0; r < world_size; ++r) {
        const bool still = read_key(*store, Heartbeat::beat_key(r)) == before[static_cast<size_t>(r)];
        if (r != self && still) {
          silent += fmt::format("{}rank {}", silent.empty() ? "" : ", ", r);
        }
        const std::string step = read_key(*store, "attnbench/step/" + std::to_string(r));
        steps += fmt::format("{}rank {}: {}", steps.empty() ? "" : ", ", r, step.empty() ? "none" : step);
      }
      result->set_value((silent.empty() ? "" : "; not responding (stopped or dead): " + silent) +
                        "; steps completed: " + steps);
    } catch (const std::exception&) {
      result->set_value("");
    }
  }).detach();
  if (answer.wait_for(std::chrono::seconds(5)) != std::future_status::ready) return "";
  return answer.get();
}

}  // namespace

struct Communicator::Impl {
  RankEnv env;
  torch::Device device = torch::kCPU;
  std::chrono::seconds timeout;
  c10::intrusive_ptr<c10d::Store> store;
  std::unique_ptr<Heartbeat> heartbeat;
  c10::intrusive_ptr<Group> group;
  const char* backend = "gloo";
  int64_t step = -1;  // steps completed; -1 before the first

  [[noreturn]] void fail(const std::string& what, const std::string& error) const {
    const std::string at = step >= 0 ? fmt::format(" at step {}", step + 1) : "";
    throw CollectiveError(fmt::format(
        "rank {} of {}: {}{} failed: {}{}. Another rank died, hung for more than the {} s "
        "timeout (--dist-timeout), or cannot be reached; rerun the same command to resume from "
        "the last checkpoint",
        env.rank, env.world_size, what, at, error, diagnose(store, env.world_size, env.rank),
        timeout.count()));
  }

  // Runs `op` (a collective's launch or wait), turning LibTorch's errors into CollectiveError.
  template <typename F>
  auto guarded(const std::string& what, F&& op) const {
    try {
      return op();
    } catch (const CollectiveError&) {
      throw;
    } catch (const c10::Error& e) {
      fail(what, e.what_without_backtrace());
    } catch (const std::exception& e) {
      fail(what, e.what());
    }
  }
};

namespace {

// Gloo's transport device: GLOO_SOCKET_IFNAME's interface when set (as torch.distributed reads it),
// the loopback device for a job on this machine, else the address this host's name resolves to.
std::shared_ptr<::gloo::transport::Device> gloo_device(const RankEnv& env) {
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  }
  if (env.master_addr == "127.0.0.1" || env.master_addr == "localhost") {
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  }
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

c10::intrusive_ptr<Group> make_gloo(const c10::intrusive_ptr<c10d::Store>& store,
                                    const RankEnv& env, std::chrono::seconds timeout) {
  auto options = c10d::ProcessGroupGloo::Options::create();
  options->timeout = timeout;
  options->devices.push_back(gloo_device(env));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, options);
}

c10::intrusive_ptr<Group> make_nccl(const c10::intrusive_ptr<c10d::Store>& store,
                                    const RankEnv& env, std::chrono::seconds timeout) {
#ifdef USE_C10D_NCCL
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, env.rank, env.world_size, options);
#else
  (void)store, (void)timeout;
  throw UsageError(fmt::format("rank {}: training on CUDA across ranks needs NCCL, which this "
                               "build lacks (build with scripts/build-cuda)",
                               env.rank));
#endif
}

// The agreement's view of the rendezvous store (rank_agreement.h): a claim is a compare-and-set
// from "absent"; a wait past the timeout is a CollectiveError naming the key.
AgreementStore agreement_store(c10d::Store& store, const RankEnv& env,
                               std::chrono::seconds timeout) {
  AgreementStore s;
  s.claim = [&store](const std::string& key, const std::string& value) {
    const std::vector<uint8_t> bytes(value.begin(), value.end());
    const auto now = store.compareSet(key, {}, bytes);
    // LibTorch's TCPStore wakes a client waiting on a key when it is set, not when compareSet
    // creates it (measured with 1.13): set it once more, unchanged, for a rank already waiting.
    if (now == bytes) store.set(key, bytes);
    return std::string(now.begin(), now.end());
  };
  s.wait_get = [&store, env, timeout](const std::string& key) {
    try {
      store.wait({key}, timeout);
    } catch (const c10::Error& e) {
      throw CollectiveError(fmt::format(
          "rank {} of {}: the job's ranks did not all join within the {} s timeout "
          "(--dist-timeout): {} is missing ({})",
          env.rank, env.world_size, timeout.count(), key, e.what_without_backtrace()));
    }
    return read_key(store, key);
  };
  s.set = [&store](const std::string& key, const std::string& value) {
    write_key(store, key, value);
  };
  return s;
}

}  // namespace

Communicator::Communicator(const RankEnv& env, const torch::Device& device,
                           std::chrono::seconds timeout, const RankIdentity& identity)
    : impl_(std::make_unique<Impl>()) {
  impl_->env = env;
  impl_->device = device;
  impl_->timeout = timeout;
  impl_->backend = device.is_cuda() ? "nccl" : "gloo";
  const bool hosts_store = env.rank == 0 && !env.agent_store;
  if (!hosts_store) require_store_peer(env, timeout);
  impl_->store = rendezvous(env, timeout, hosts_store);
  RankIdentity facts = identity;
  facts.emplace_back("world size", std::to_string(env.world_size));
  facts.emplace_back("process group", impl_->backend);
  agree(agreement_store(*impl_->store, env, timeout), env.rank, env.world_size, env.attempt, facts);
  impl_->heartbeat = std::make_unique<Heartbeat>(env, timeout);
  impl_->group = impl_->guarded(std::string("creating the ") + impl_->backend + " process group",
                                [&] {
                                  return device.is_cuda() ? make_nccl(impl_->store, env, timeout)
                                                          : make_gloo(impl_->store, env, timeout);
                                });
}

Communicator::~Communicator() = default;

int Communicator::rank() const { return impl_->env.rank; }
int Communicator::size() const { return impl_->env.world_size; }
int Communicator::local_world_size() const { return impl_->env.local_world_size; }
const torch::Device& Communicator::device() const { return impl_->device; }
const char* Communicator::backend() const { return impl_->backend; }

void Communicator::set_step(int64_t step) {
  impl_->step = step;
  impl_->guarded("publishing the step", [&] {
    write_key(*impl_->store, "attnbench/step/" + std::to_string(impl_->env.rank),
              std::to_string(step));
  });
}

std::function<void()> Communicator::allreduce_sum_async(const torch::Tensor& t,
                                                        const std::string& what) {
  auto work = impl_->guarded(what, [&] {
    std::vector<at::Tensor> tensors{t};
    return impl_->group->allreduce(tensors);
  });
  return [this, work, what] { impl_->guarded(what, [&] { work->wait(); }); };
}

void Communicator::allreduce_sum(const torch::Tensor& t, const std::string& what) {
  allreduce_sum_async(t, what)();
}

void Communicator::allreduce_max(const torch::Tensor& t, const std::string& what) {
  impl_->guarded(what, [&] {
    std::vector<at::Tensor> tensors{t};
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::MAX;
    impl_->group->allreduce(tensors, o)->wait();
  });
}

void Communicator::barrier(const std::string& what) {
  impl_->guarded(what, [&] { impl_->group->barrier()->wait(); });
}

struct HostedStore::Impl {
  c10::intrusive_ptr<c10d::TCPStore> store;
};

HostedStore::HostedStore(int world_size, std::chrono::seconds timeout)
    : impl_(std::make_unique<Impl>()) {
  c10d::TCPStoreOptions o;
  o.port = 0;  // a free port, chosen by the kernel
  o.isServer = true;
  o.numWorkers = world_size;
  o.waitWorkers = false;
  o.timeout = timeout;
  impl_->store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", o);
}

HostedStore::~HostedStore() = default;

int HostedStore::port() const { return impl_->store->getPort(); }

void check_parameters_identical(Communicator& comm, const std::vector<std::string>& names,
                                const std::vector<torch::Tensor>& params, int64_t step) {
  torch::NoGradGuard no_grad;
  const int64_t n = static_cast<int64_t>(params.size());
  std::vector<torch::Tensor> sums, magnitudes;
  for (const auto& p : params) {
    const auto wide = p.to(torch::kFloat64);
    sums.push_back(wide.sum());
    magnitudes.push_back(wide.abs().sum());
  }
  auto s = torch::stack(sums);
  auto reduced = torch::cat({s, -s});
  comm.allreduce_max(reduced, "comparing the parameters' checksums");
  const auto host = reduced.cpu();
  const double* v = host.data_ptr<double>();
  const double scale = torch::stack(magnitudes).sum().item<double>();
  // Equal parameters give equal sums up to the summation order of each rank's threads.
  const double tolerance = 1e-12 * std::max(1.0, scale);
  for (int64_t i = 0; i < n; ++i) {
    if (v[i] + v[n + i] > tolerance) {
      throw std::runtime_error(fmt::format(
          "rank {}: the ranks' parameters differ after step {} (parameter {}: sums range over "
          "{:.17g} .. {:.17g}); data-parallel replicas must stay identical, so the run stops "
          "(the last checkpoint is kept)",
          comm.rank(), step, names[static_cast<size_t>(i)], -v[n + i], v[i]));
    }
  }
}

}  // namespace attnbench::train
