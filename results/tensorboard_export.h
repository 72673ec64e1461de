// `attnbench results export-tb` (docs/results.md, "TensorBoard"): stored runs as TensorBoard event
// files, one folder per run, so that runs trained elsewhere (a Slurm array merged into one
// database, a colleague's database) can be looked at in TensorBoard.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "results/store.h"

namespace attnbench::results {

struct TensorBoardExport {
  std::string sweep;           // "" = every run in the database
  std::filesystem::path out;   // one folder per run is made in it
  bool force = false;          // replace what export-tb wrote in a non-empty `out`
};

// The output folder rule (core/common/output_folder.h): UsageError when `out` exists and is not a
// folder, is or holds the working folder, is not empty and `force` is off, or holds anything but
// the run folders of event files export-tb writes. Checked before the database is opened (bad
// usage fails before any work).
void check_export_folder(const TensorBoardExport& request);

struct ExportedRun {
  std::string id;
  std::filesystem::path folder;
  int64_t scalars = 0;
};

// Writes, for each run (the sweep's in its order, else every run), out/<label>/ holding one event
// file: its training curves at their steps (tag = the metric key, as the trainer logs it), and at
// its last training step (0 without curves) its evaluation metrics (eval/<task>/<metric>) and
// scalar attention statistics (attn/<stat>[/layer<l>[/head<h>]]). <label> is the run's cell label
// in the sweep (or the id), with characters other than letters, digits and . _ - = , + as '_';
// a label that two runs share is followed by -<id>. Under `force`, the run folders an earlier
// export wrote are removed first (and nothing else is there: check_export_folder).
std::vector<ExportedRun> export_tensorboard(Store& store, const TensorBoardExport& request);

}  // namespace attnbench::results
