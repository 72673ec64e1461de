// `results merge OUT.db IN.db...`: folds per-cell databases (Slurm array tasks each write their own
// file; SQLite must never be shared over a network file system) into one (docs/results.md, "merge").
//
// Nothing is ever deleted: every row kind is the union of OUT and the inputs on its natural key.
// - Runs: when both hold a run, the more final status wins (finished > diverged > failed >
//   interrupted > running > pending), then the earlier finish time, else OUT's copy. The winner's
//   run row and its params (the flattened `runs.config`, one unit with it) are kept.
// - Evals, per (run, task, metric): the newer evaluation (`evals.time`) wins; on equal times the
//   one that scored more items (`n`), then OUT's. So a sweep that added a task in one array task
//   contributes that task, whichever side wins the run.
// - Metrics, per (run, key, step): the point logged last (`metrics.time`) wins, then OUT's.
// - Samples, per (run, task, doc, request): the side whose evaluation of that task is newer wins
//   (samples go with the evals they were scored for), then OUT's.
// - Attention statistics, per (run, layer, head, stat, idx): the run's winner's.
// - Sweeps and sweep memberships: the union.
// Merging the same input again changes nothing. Each input is one transaction. With no inputs, OUT
// is created or its schema upgraded to the current version in place. OUT must be an attnbench
// database, an empty file or a new path: another application's database is refused.
#pragma once
#include <cstdint>
#include <filesystem>
#include <vector>

namespace attnbench::results {

// Every input row of a kind is counted exactly once.
struct MergeCounts {
  int64_t added = 0;     // OUT had no row with its key
  int64_t replaced = 0;  // the input's row won and overwrote OUT's
  int64_t kept = 0;      // OUT's row won or was identical
};

struct MergeSummary {
  MergeCounts runs, memberships, metrics, evals, attn_stats, samples;
};

MergeSummary merge_databases(const std::filesystem::path& out,
                             const std::vector<std::filesystem::path>& inputs);

}  // namespace attnbench::results
