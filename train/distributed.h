// Data-parallel training's process group (docs/distributed.md): who this process is in the job,
// read from the environment torchrun or srun set, and the collectives the trainer needs, on
// LibTorch's c10d (a TCPStore rendezvous, then Gloo on the CPU or NCCL on CUDA). c10d's headers
// stay in distributed.cpp: they need the USE_C10D_* switches and Gloo's headers.
#pragma once
#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "train/rank_agreement.h"

namespace attnbench::train {

// This process's place in a data-parallel job.
struct RankEnv {
  std::string launcher;  // "" = no distributed environment; "torchrun" (RANK, WORLD_SIZE, ...) or
                         // "slurm" (SLURM_PROCID, ... under srun)
  int rank = 0, world_size = 1;
  int local_rank = 0, local_world_size = 1;  // on this machine
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;   // torchrun's default
  bool agent_store = false;  // the launcher hosts the store (torchrun's TORCHELASTIC_USE_AGENT_STORE)
  int attempt = 0;  // torchrun's TORCHELASTIC_RESTART_COUNT: the job's restarts share its store
  bool distributed() const { return !launcher.empty(); }
};

using GetEnv = std::function<const char*(const char*)>;

// The job as the environment describes it: RANK and WORLD_SIZE (with LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) as torchrun sets them; else, inside an srun job step
// of more than one task, SLURM_PROCID, SLURM_STEP_NUM_TASKS (or SLURM_NTASKS), SLURM_LOCALID and
// SLURM_STEP_TASKS_PER_NODE, with MASTER_ADDR required (the first host of the allocation); else not
// distributed. UsageError naming the variable for a missing or malformed value.
RankEnv rank_env(const GetEnv& getenv);
RankEnv rank_env();  // from this process's environment

// A collective that failed: a peer died, hung past the timeout, or could not be reached.
class CollectiveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One rank's membership of the job. Every collective is called by every rank in the same order;
// failures throw CollectiveError naming this rank, the operation and the step.
class Communicator {
 public:
  // Rendezvous at master_addr:master_port (rank 0 hosts the store unless the launcher does), then
  // the ranks agree on `identity` with the world size and the backend added (rank_agreement.h:
  // UsageError on a difference or a rank already taken), then a Gloo group on the CPU or an NCCL
  // group on CUDA (a CUDA build). `timeout` bounds every collective and the agreement: a rank that
  // hangs ends the job after it.
  Communicator(const RankEnv& env, const torch::Device& device, std::chrono::seconds timeout,
               const RankIdentity& identity = {});
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const;
  int size() const;
  int local_world_size() const;
  const torch::Device& device() const;  // where this rank trains
  const char* backend() const;  // "gloo" | "nccl"

  // The step failures are reported at, and published in the store so that a failure message can
  // say which ranks fell behind.
  void set_step(int64_t step);

  // Sums `t` across ranks in place, asynchronously: call the returned function to wait.
  std::function<void()> allreduce_sum_async(const torch::Tensor& t, const std::string& what);
  void allreduce_sum(const torch::Tensor& t, const std::string& what);
  void allreduce_max(const torch::Tensor& t, const std::string& what);
  void barrier(const std::string& what);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The rendezvous store a launcher hosts for its local ranks, as torchrun's agent does: a TCPStore
// server on a free port of 127.0.0.1 that outlives any rank, so that a failure message can still
// read every rank's last step.
class HostedStore {
 public:
  HostedStore(int world_size, std::chrono::seconds timeout);
  ~HostedStore();
  HostedStore(const HostedStore&) = delete;
  HostedStore& operator=(const HostedStore&) = delete;
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Stops the run (runtime_error naming the step and the first parameter that differs) unless every
// rank holds the same parameters: each rank's per-parameter sums (float64) are compared through one
// max all-reduce of (sums, -sums). `names` are the parameters' names, for the message.
void check_parameters_identical(Communicator& comm, const std::vector<std::string>& names,
                                const std::vector<torch::Tensor>& params, int64_t step);

}  // namespace attnbench::train
