// --jobs N: cells run as child processes (`attnbench sweep FILE --only ID ...`), at most N at a
// time, so that a crash in one cell never takes the others down. The machine's threads are split
// between them: each child gets OMP_NUM_THREADS = threads / N (at least 1), threads being
// $OMP_NUM_THREADS when set, else the core count. Each child's output goes to
// <runs-dir>/logs/<run id>.log. The first Ctrl-C is forwarded to every child (each checkpoints and
// marks its cell interrupted); a second one kills them. Every options.status_every seconds the parent
// prints where each running cell is: the last line of its log (a training step, an evaluation's
// progress, or the cell's latest message).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "harness/sweep/expand.h"
#include "harness/sweep/runner.h"

namespace attnbench::sweep {

// Threads per child for `jobs` parallel cells.
int threads_per_job(int jobs);

// The last non-empty line of a child's log, as far as it was written ("" when none): progress
// lines end in '\n' (plain lines in a log) or '\r' (a bar redrawn in place), so either ends a line.
std::string last_log_line(const std::filesystem::path& log);

// Runs the cells and prints how each child ended (the end of its log when it exited non-zero). How
// each cell ended is in the store, which the runner reads for its exit code: a child's exit status
// cannot tell a cell it finished from one another live process holds.
void run_children(const SweepOptions& options, const std::filesystem::path& db,
                  const std::vector<const Cell*>& cells);

}  // namespace attnbench::sweep
