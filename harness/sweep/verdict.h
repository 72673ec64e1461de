// The end of a sweep (docs/sweeps.md, "Running: resume and skip"): the cells other runners hold,
// waited for; what did not finish and why, on stderr; the status counts and the table; the exit
// status. Read from the store, so that cells run by children of --jobs or by other runners count
// as much as cells run here.
#pragma once
#include <string>
#include <vector>

#include "harness/sweep/cell_run.h"
#include "harness/sweep/expand.h"
#include "harness/sweep/runner.h"
#include "harness/sweep/sweep_file.h"
#include "results/store.h"

namespace attnbench::sweep {

// Cells another live process holds (several runners may share a sweep): waited for until that
// process settles them, then run here for whatever this sweep still needs of them (a task only it
// lists), so that the exit status speaks for every cell of the call. A holder that dies or falls
// silent is taken over by the claim.
void finish_shared_cells(const SweepFile& sweep, const std::vector<const Cell*>& cells,
                         results::Store& store, const CellRunOptions& co);

// What is unfinished (stderr), the table, and the exit status: 130 when stopped (resumable), 1 when
// some cell or pretrained model did not finish, else 0.
int sweep_verdict(const SweepFile& sweep, const std::vector<const Cell*>& cells,
                  results::Store& store, const SweepOptions& o,
                  const std::vector<std::string>& pretrained_unfinished);

}  // namespace attnbench::sweep
