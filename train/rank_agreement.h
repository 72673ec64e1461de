// Ranks agree or stop (docs/distributed.md, "Ranks agree or stop"): before any process group
// exists, the ranks of a data-parallel job compare what must be equal among them (the run's
// config key by key, the training data's checksums, the world size, the process group's backend).
// A difference stops every rank with a UsageError naming the key and both values, instead of a
// job that trains on different data and exits 0 or aborts in a collective of mismatched shapes. A
// process that joins as a rank another process already holds (a second job on the same port, a
// rank started twice) is refused at once. Torch-free: the store is three functions, so the
// protocol is tested without c10d (tests/train/rank_agreement_test.cpp).
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace attnbench::train {

// Named facts, in order; the names are config keys ("model.n_layer") or "data.train" and the like.
using RankIdentity = std::vector<std::pair<std::string, std::string>>;

// The rendezvous store as the agreement uses it. Keys are unique per job attempt (see agree).
struct AgreementStore {
  // Sets key to value unless the key exists; returns the value the key holds afterwards.
  std::function<std::string(const std::string& key, const std::string& value)> claim;
  // The key's value once it exists; throws CollectiveError after the job's timeout.
  std::function<std::string(const std::string& key)> wait_get;
  std::function<void(const std::string& key, const std::string& value)> set;
};

// The protocol, O(world size) store operations: each rank claims identity/<rank> with a token
// unique to this process ahead of its facts (a claim that finds another process's token is
// refused); every rank compares its facts with rank 0's and posts a verdict; rank 0 collects the
// verdicts and posts the job's, which every rank waits for. `attempt` (torchrun's
// TORCHELASTIC_RESTART_COUNT) keeps a restarted job's keys apart from the attempt before it on a
// store that outlives it. Throws UsageError naming the ranks, the differing keys and their values.
void agree(const AgreementStore& store, int rank, int world_size, int attempt,
           const RankIdentity& mine);

}  // namespace attnbench::train
