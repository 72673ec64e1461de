#include "harness/sweep/slurm.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "core/common/paths.h"
#include "harness/sweep/values.h"

namespace attnbench::sweep {
namespace {

namespace fs = std::filesystem;

// Single-quoted for bash: safe for any path.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A file name for an #SBATCH directive. sbatch splits the line at blanks, ends it at an unquoted
// '#', reads quotes and backslashes, and expands '%' patterns in --output (%A, %a), so a name
// with anything else than plain characters is double-quoted with '\' and '"' escaped, and every
// '%' of the literal part is written '%%'. `pattern` ("%A_%a.out") is appended as it is.
std::string sbatch_file_name(const std::string& literal, const std::string& pattern) {
  std::string escaped;
  for (char c : literal) escaped += c == '%' ? std::string("%%") : std::string(1, c);
  escaped += pattern;
  const bool plain = std::all_of(escaped.begin(), escaped.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("/._-+,:=@%", c) != nullptr;
  });
  if (plain) return escaped;
  std::string out = "\"";
  for (char c : escaped) out += c == '\\' || c == '"' ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

// Values written into comment lines and #SBATCH directives, where no quoting helps: a line break
// would end the line, and bash would run the rest of the value as a command in every array task.
// Such a value (or any other control character) is refused before the script is written; values
// that only appear in the command lines are single-quoted instead (quoted()).
void check_one_line(const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [what, value] : values) {
    if (!has_control_character(value)) continue;
    throw UsageError("cannot write the Slurm script: the " + what + " \"" + one_line(value) +
                     "\" contains a line break or another control character, which would end a "
                     "line of the script and run the rest as a command; rename it");
  }
}

}  // namespace

fs::path cell_db_path(const fs::path& db, const std::string& run_id) {
  return db.parent_path() / (db.stem().string() + ".cell-" + run_id + ".db");
}

std::string merge_command(const fs::path& executable, const fs::path& db) {
  fs::path abs_db = absolute_path(db);
  return fmt::format("{} results merge {} {}", quoted(absolute_path(executable)),
                     quoted(abs_db.string()),
                     quoted((abs_db.parent_path() / abs_db.stem()).string()) + ".cell-*.db");
}

namespace {

// The #SBATCH lines: one process per array task, or N nodes x G tasks with G GPUs per node for a
// cell trained by N x G ranks (the tasks are the job step the sweep starts with srun).
std::string resource_lines(const SweepOptions& o) {
  if (o.gpus_per_cell * o.nodes_per_cell == 1) {
    return "#SBATCH --ntasks=1\n"
           "# Resources depend on the cluster and the model size; set them here or on the sbatch "
           "line:\n##SBATCH --gres=gpu:1\n##SBATCH --cpus-per-task=8\n##SBATCH --time=24:00:00\n";
  }
  return fmt::format("#SBATCH --nodes={0}\n#SBATCH --ntasks-per-node={1}\n"
                     "#SBATCH --gpus-per-node={1}\n"
                     "# Resources depend on the cluster and the model size; set them here or on "
                     "the sbatch line:\n##SBATCH --cpus-per-task=8\n##SBATCH --time=24:00:00\n",
                     o.nodes_per_cell, o.gpus_per_cell);
}

// What the script does and how to merge its databases afterwards.
std::string comment_lines(const SweepFile& sweep, size_t cells, const SweepOptions& o,
                          const fs::path& db, const std::string& runs) {
  std::string s = "#\n";
  s += fmt::format("# attnbench sweep '{}' ({}): {} cells, one per array task.\n", sweep.name,
                   absolute_path(sweep.file), cells);
  if (o.gpus_per_cell * o.nodes_per_cell > 1) {
    s += fmt::format("# Each cell trains as {} node(s) x {} rank(s), an srun job step started by "
                     "the sweep;\n# the sweep itself evaluates the cell and writes its database.\n",
                     o.nodes_per_cell, o.gpus_per_cell);
  }
  s += "# Each task writes its own SQLite database (never share one over a network file system):\n";
  s += fmt::format("#   {}\n", cell_db_path(absolute_path(db), "<run id>").string());
  s += "# A task that is requeued or submitted again resumes its cell from its checkpoint under\n";
  s += fmt::format("# {}/<run id>/ and skips it once finished.\n", runs);
  s += "# When the whole array has finished, merge the databases into one and print the table:\n";
  s += fmt::format("#   {}\n", merge_command(o.executable, db));
  s += fmt::format("#   {} results table --sweep {} --db {}\n", quoted(absolute_path(o.executable)),
                   quoted(sweep.name), quoted(absolute_path(db)));
  return s;
}

// The rendezvous of a multi-rank cell: rank 0 runs on the allocation's first node, and the port is
// derived from the job id, which differs between array tasks, so that tasks sharing a node do not
// collide (harness/sweep/cell_launch.cpp derives it the same way).
std::string rendezvous_lines(const SweepOptions& o) {
  if (o.gpus_per_cell * o.nodes_per_cell == 1) return "";
  return "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1)\n"
         "export MASTER_PORT=$((10000 + SLURM_JOB_ID % 20000))\n";
}

// The array task's command: the sweep, for its one cell, into its own database.
std::string task_command(const SweepFile& sweep, const SweepOptions& o, const fs::path& db,
                         const std::string& runs) {
  const fs::path abs_db = absolute_path(db);
  std::string cmd = fmt::format("{} sweep {} --only \"$cell\" --db {}\"$cell\".db --runs-dir {}",
                                quoted(absolute_path(o.executable)),
                                quoted(absolute_path(sweep.file)),
                                quoted((abs_db.parent_path() / abs_db.stem()).string() + ".cell-"),
                                quoted(runs));
  cmd += " --data-dir " + quoted(absolute_path(data_root(o.data_dir)));
  if (o.retry_failed) cmd += " --retry-failed";
  for (auto& kv : o.sets) cmd += " --set " + quoted(kv);
  if (o.limit) cmd += " --limit " + std::to_string(*o.limit);
  if (o.gpus_per_cell * o.nodes_per_cell > 1) {
    cmd += fmt::format(" --gpus-per-cell {} --nodes-per-cell {}", o.gpus_per_cell, o.nodes_per_cell);
    if (o.dist_timeout != SweepOptions{}.dist_timeout) {
      cmd += " --dist-timeout " + std::to_string(o.dist_timeout);
    }
  }
  return cmd;
}

}  // namespace

void write_slurm_script(const SweepFile& sweep, const std::vector<const Cell*>& cells,
                        const SweepOptions& o, const fs::path& db) {
  const std::string runs = absolute_path(o.runs_dir);
  std::vector<std::pair<std::string, std::string>> one_line = {
      {"sweep name", sweep.name},
      {"sweep file", absolute_path(sweep.file)},
      {"runs folder", runs},
      {"database", absolute_path(db)},
      {"attnbench executable", absolute_path(o.executable)}};
  for (const Cell* c : cells) one_line.emplace_back("cell label", c->label);
  check_one_line(one_line);
  std::string s = "#!/bin/bash\n";
  s += fmt::format("#SBATCH --job-name=attnbench-{}\n", sweep.name);
  s += fmt::format("#SBATCH --array=0-{}\n", cells.size() - 1);
  s += fmt::format("#SBATCH --output={}\n", sbatch_file_name(runs, "/slurm/%A_%a.out"));
  s += resource_lines(o);
  s += comment_lines(sweep, cells.size(), o, db, runs);
  s += "set -euo pipefail\n";
  s += fmt::format("mkdir -p {}/slurm\n", quoted(runs));
  // Relative paths in the configs (data shards) mean what they meant where the script was written.
  s += fmt::format("cd {}\n", quoted(fs::current_path().string()));
  s += rendezvous_lines(o);
  s += "cells=(\n";
  for (const Cell* c : cells) s += fmt::format("  {}  # {}\n", c->id, c->label);
  s += ")\n";
  s += "cell=${cells[$SLURM_ARRAY_TASK_ID]}\n";
  s += "exec " + task_command(sweep, o, db, runs) + "\n";

  fs::path out = o.slurm;
  if (out.has_parent_path()) fs::create_directories(out.parent_path());
  std::ofstream f(out);
  if (!f) throw UsageError("cannot write the Slurm script " + out.string());
  f << s;
  if (!f.flush()) throw std::runtime_error("writing " + out.string() + " failed");
}

}  // namespace attnbench::sweep
