// `attnbench train --nproc-per-node N` (docs/distributed.md, "One machine"): this process becomes
// the launcher of N local ranks, as torchrun would be. It hosts the rendezvous store, starts the
// ranks (this executable again, with torchrun's environment: RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_USE_AGENT_STORE), forwards the first
// Ctrl-C or SIGTERM to them (each checkpoints and exits 130) and kills them on the second. When one
// rank fails, the others are stopped at once (SIGTERM, SIGKILL after a grace period) and the
// failure is named.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "core/config/run_config.h"

namespace attnbench::train {

// UsageError unless `cfg` can train on `world` ranks, `local` of them on this machine: the step's
// batch splits evenly over `world` (windows.h, rank_micro_batches), and this machine has a GPU
// (CUDA) or, unless `oversubscribe`, a core (CPU) for each local rank. `option` names what asked
// for the ranks ("--nproc-per-node 4").
void check_ranks(const config::RunConfig& cfg, int world, int local, const std::string& option,
                 bool oversubscribe = false);

// Runs `args` (args[0] = the executable) as `nproc` ranks and waits for all of them. Returns 0 when
// every rank exits 0, 130 when the job was interrupted and every rank stopped cleanly, 1 otherwise
// (with a message on stderr naming each rank that failed and how).
int run_local_ranks(const std::vector<std::string>& args, int nproc, std::chrono::seconds timeout);

}  // namespace attnbench::train
