// The Slurm array script (docs/sweeps.md, "Slurm" and "Multi-GPU and multi-node cells"): one
// process per array task as it always was, or N nodes x G ranks per task with --gpus-per-cell and
// --nodes-per-cell.
#include <torch/torch.h>  // before catch.hpp (docs/toolchain.md: glog's CHECK)

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <unistd.h>

#include "harness/sweep/expand.h"
#include "harness/sweep/runner.h"
#include "harness/sweep/slurm.h"
#include "harness/sweep/sweep_file.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace slurm_test {

namespace fs = std::filesystem;
using namespace attnbench;
using Catch::Matchers::Contains;

namespace {

// A sweep of two cells in a fresh folder, and the script written for it.
struct SlurmFixture {
  fs::path dir;
  sweep::SweepFile sweep;
  sweep::Expansion expansion;
  std::vector<const sweep::Cell*> cells;
  sweep::SweepOptions options;

  SlurmFixture() {
    dir = fs::temp_directory_path() / ("attnbench-test-slurm-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "base.toml") << "[model]\ncontext_length = 32\n[train]\nsteps = 5\n";
    std::ofstream(dir / "s.toml") << "[sweep]\nname = \"t\"\nbase = \"base.toml\"\n[grid]\n"
                                     "\"attention.variant\" = [\"softmax\", \"alibi\"]\n";
    sweep = sweep::parse_sweep_file(dir / "s.toml");
    expansion = sweep::expand(sweep);
    for (const auto& c : expansion.cells) cells.push_back(&c);
    options.file = dir / "s.toml";
    options.slurm = (dir / "out.sbatch").string();
    options.runs_dir = dir / "runs";
    options.data_dir = (dir / "data").string();
    options.executable = "/opt/attnbench/bin/attnbench";
    options.sets = {"train.steps=3"};
    options.limit = 7;
  }
  ~SlurmFixture() { fs::remove_all(dir); }

  std::string script() {
    sweep::write_slurm_script(sweep, cells, options, dir / "all.db");
    std::ifstream in(options.slurm);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

// The script as it was before multi-rank cells existed, byte for byte.
std::string one_process_script(const SlurmFixture& f) {
  const std::string d = f.dir.string();
  const std::string exe = "'/opt/attnbench/bin/attnbench'";
  return fmt::format(
      "#!/bin/bash\n"
      "#SBATCH --job-name=attnbench-t\n"
      "#SBATCH --array=0-1\n"
      "#SBATCH --output={d}/runs/slurm/%A_%a.out\n"
      "#SBATCH --ntasks=1\n"
      "# Resources depend on the cluster and the model size; set them here or on the sbatch line:\n"
      "##SBATCH --gres=gpu:1\n##SBATCH --cpus-per-task=8\n##SBATCH --time=24:00:00\n"
      "#\n"
      "# attnbench sweep 't' ({d}/s.toml): 2 cells, one per array task.\n"
      "# Each task writes its own SQLite database (never share one over a network file system):\n"
      "#   {d}/all.cell-<run id>.db\n"
      "# A task that is requeued or submitted again resumes its cell from its checkpoint under\n"
      "# {d}/runs/<run id>/ and skips it once finished.\n"
      "# When the whole array has finished, merge the databases into one and print the table:\n"
      "#   {exe} results merge '{d}/all.db' '{d}/all'.cell-*.db\n"
      "#   {exe} results table --sweep 't' --db '{d}/all.db'\n"
      "set -euo pipefail\n"
      "mkdir -p '{d}/runs'/slurm\n"
      "cd '{cwd}'\n"
      "cells=(\n"
      "  {id0}  # variant=softmax\n"
      "  {id1}  # variant=alibi\n"
      ")\n"
      "cell=${{cells[$SLURM_ARRAY_TASK_ID]}}\n"
      "exec {exe} sweep '{d}/s.toml' --only \"$cell\" --db '{d}/all.cell-'\"$cell\".db --runs-dir "
      "'{d}/runs' --data-dir '{d}/data' --set 'train.steps=3' --limit 7\n",
      fmt::arg("d", d), fmt::arg("exe", exe), fmt::arg("cwd", fs::current_path().string()),
      fmt::arg("id0", f.cells[0]->id), fmt::arg("id1", f.cells[1]->id));
}

}  // namespace

CATCH_TEST_CASE("one rank per cell: the script is exactly the one-process array") {
  SlurmFixture f;
  CATCH_CHECK(f.script() == one_process_script(f));
  f.options.gpus_per_cell = 1;  // written out, the defaults change nothing
  f.options.nodes_per_cell = 1;
  CATCH_CHECK(f.script() == one_process_script(f));
}

CATCH_TEST_CASE("2 nodes x 2 GPUs per cell: per-task resources, the rendezvous, the flags") {
  SlurmFixture f;
  f.options.gpus_per_cell = 2;
  f.options.nodes_per_cell = 2;
  const std::string s = f.script();
  CATCH_CHECK_THAT(s, Contains("\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=2\n"
                               "#SBATCH --gpus-per-node=2\n"));
  CATCH_CHECK(s.find("#SBATCH --ntasks=1") == std::string::npos);
  CATCH_CHECK(s.find("##SBATCH --gres") == std::string::npos);  // the GPUs are asked for above
  CATCH_CHECK_THAT(s, Contains("##SBATCH --cpus-per-task=8\n##SBATCH --time=24:00:00\n"));
  // Rank 0 is on the allocation's first node; the port differs between array tasks (job ids).
  CATCH_CHECK_THAT(s, Contains("\nexport MASTER_ADDR=$(scontrol show hostnames "
                               "\"$SLURM_JOB_NODELIST\" | head -n1)\n"));
  CATCH_CHECK_THAT(s, Contains("\nexport MASTER_PORT=$((10000 + SLURM_JOB_ID % 20000))\n"));
  // The sweep the task execs starts each cell's ranks as an srun job step.
  CATCH_CHECK_THAT(s, Contains("--limit 7 --gpus-per-cell 2 --nodes-per-cell 2\n"));
  CATCH_CHECK(s.find("--dist-timeout") == std::string::npos);  // at its default
  // Everything else is the one-process script's.
  CATCH_CHECK_THAT(s, Contains("#SBATCH --array=0-1\n"));
  CATCH_CHECK_THAT(s, Contains("exec '/opt/attnbench/bin/attnbench' sweep '" +
                               (f.dir / "s.toml").string() + "' --only \"$cell\""));
}

CATCH_TEST_CASE("several GPUs on one node, and a timeout that is not the default") {
  SlurmFixture f;
  f.options.gpus_per_cell = 4;
  f.options.dist_timeout = 60;
  const std::string s = f.script();
  CATCH_CHECK_THAT(s, Contains("#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=4\n"
                               "#SBATCH --gpus-per-node=4\n"));
  CATCH_CHECK_THAT(s, Contains("--gpus-per-cell 4 --nodes-per-cell 1 --dist-timeout 60\n"));
  CATCH_CHECK_THAT(s, Contains("export MASTER_ADDR="));
}

CATCH_TEST_CASE("paths with blanks, quotes, '$', '%' and '#' stay one argument each") {
  SlurmFixture f;
  const std::string odd = "we ird'd \"q\" $(touch PWNED) %x #h";
  fs::create_directories(f.dir / odd);
  f.options.runs_dir = f.dir / odd / "runs";
  f.options.data_dir = (f.dir / odd / "data").string();
  f.options.sets = {"data.train=" + odd + "/x.bin"};
  sweep::write_slurm_script(f.sweep, f.cells, f.options, f.dir / odd / "all.db");
  std::ifstream in(f.options.slurm);
  std::stringstream ss;
  ss << in.rdbuf();
  // sbatch reads the directive's quotes and backslashes; '%' is its pattern character.
  const std::string runs = (f.dir / odd / "runs").string();
  CATCH_CHECK_THAT(ss.str(), Contains("\n#SBATCH --output=\"" + f.dir.string() +
                                      "/we ird'd \\\"q\\\" $(touch PWNED) %%x #h/runs/slurm/%A_%a.out\"\n"));
  CATCH_REQUIRE(std::system(("bash -n '" + f.options.slurm + "'").c_str()) == 0);
  // Array task 0 with `exec` replaced by printing its arguments, one per line.
  const fs::path args = f.dir / "args.txt";
  const fs::path probe = f.dir / "probe.sh";
  std::string text = ss.str();
  text.replace(text.find("\nexec "), 6, "\nprintf '%s\\n' ");
  std::ofstream(probe) << text;
  const std::string run = "cd '" + f.dir.string() + "' && SLURM_ARRAY_TASK_ID=0 bash probe.sh > args.txt";
  CATCH_REQUIRE(std::system(run.c_str()) == 0);
  std::ifstream a(args);
  std::vector<std::string> argv;
  for (std::string line; std::getline(a, line);) argv.push_back(line);
  const std::vector<std::string> expected = {
      "/opt/attnbench/bin/attnbench", "sweep", (f.dir / "s.toml").string(), "--only", f.cells[0]->id,
      "--db", (f.dir / odd / "all.cell-").string() + f.cells[0]->id + ".db", "--runs-dir", runs,
      "--data-dir", (f.dir / odd / "data").string(), "--set", "data.train=" + odd + "/x.bin",
      "--limit", "7"};
  CATCH_CHECK(argv == expected);
  CATCH_CHECK_FALSE(fs::exists(f.dir / "PWNED"));  // nothing in a path ran as a command
  CATCH_CHECK_FALSE(fs::exists(fs::current_path() / "PWNED"));
  CATCH_CHECK(fs::is_directory(runs + "/slurm"));
}

CATCH_TEST_CASE("a line break in anything written into a comment or directive is refused") {
  auto refused = [](SlurmFixture& f, const std::string& what) {
    fs::remove(f.options.slurm);
    try {
      f.script();
      CATCH_FAIL("expected a UsageError for the " + what);
    } catch (const UsageError& e) {
      CATCH_CHECK_THAT(e.what(), Contains("the " + what) && Contains("line break"));
      CATCH_CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
    CATCH_CHECK_FALSE(fs::exists(f.options.slurm));  // nothing half-written
  };
  {
    SlurmFixture f;
    f.sweep.name = "t\ntouch /tmp/pwned";  // parse_sweep_file refuses it; the writer does too
    refused(f, "sweep name");
  }
  {
    SlurmFixture f;
    f.options.runs_dir = f.dir / "runs\ntouch x";
    refused(f, "runs folder");
  }
  {
    SlurmFixture f;
    f.options.executable = "/opt/attn\rbench";
    refused(f, "attnbench executable");
  }
  {
    SlurmFixture f;
    f.expansion.cells[1].label = "variant=alibi\nrm -rf ~";
    refused(f, "cell label");
  }
}

}  // namespace slurm_test
