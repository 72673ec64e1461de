// `results merge OUT.db IN.db...`: folds per-cell databases (Slurm array tasks each write their own
// file; SQLite must never be shared over a network file system) into one.
//
// Idempotent and order-independent for differing statuses: merging the same input twice changes
// nothing, and when both sides hold a run the better status wins (finished > diverged > failed >
// interrupted > running > pending), then the earlier finish time, else the copy already in OUT.
// The winner's rows (params, metrics, evals, attention statistics, samples) replace the loser's
// entirely, never mixed. Sweep memberships are the union. Each input is one transaction.
// With no inputs, OUT is created or its schema upgraded to the current version in place.
#pragma once
#include <cstdint>
#include <filesystem>
#include <vector>

namespace attnbench::results {

struct MergeSummary {
  int64_t runs_added = 0;     // runs OUT did not have
  int64_t runs_replaced = 0;  // runs whose input copy won
  int64_t runs_kept = 0;      // runs whose OUT copy won (or were identical)
};

MergeSummary merge_databases(const std::filesystem::path& out,
                             const std::vector<std::filesystem::path>& inputs);

}  // namespace attnbench::results
