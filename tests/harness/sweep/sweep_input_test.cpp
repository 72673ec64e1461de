// Hostile sweep files (docs/sweeps.md, "Errors, before any work"): names that would break out of
// the Slurm script, values no setting can hold, sweeps too large to expand; and the failures that
// leave a cell resumable rather than failed (harness/sweep/cell_run.h, transient_failure).
#include <torch/torch.h>  // before catch.hpp (docs/toolchain.md: glog's CHECK)

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include "harness/sweep/cell_run.h"
#include "harness/sweep/expand.h"
#include "harness/sweep/sweep_file.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace sweep_input_test {

namespace fs = std::filesystem;
using namespace attnbench;
using Catch::Matchers::Contains;

namespace {

// A fresh folder holding a base config and the sweep files a test writes.
struct Dir {
  fs::path path;
  Dir() {
    static int counter = 0;
    path = fs::temp_directory_path() / ("attnbench-test-sweep-input-" + std::to_string(::getpid()) +
                                        "-" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
    std::ofstream(path / "base.toml") << "[model]\npreset = \"tiny\"\ncontext_length = 32\n"
                                         "[train]\nsteps = 20\nlr = 1e-3\n";
  }
  ~Dir() { fs::remove_all(path); }
  // Parses and expands `body` below a [sweep] header named `name` (lines 1-3).
  sweep::Expansion expand(const std::string& body, const std::string& name = "t") const {
    std::ofstream(path / "s.toml") << "[sweep]\nname = \"" << name << "\"\nbase = \"base.toml\"\n"
                                   << body;
    return sweep::expand(sweep::parse_sweep_file(path / "s.toml"));
  }
};

// The message of the InputError `f` throws (fails the test when it throws nothing).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  CATCH_FAIL("expected an InputError");
  return "";
}

// `n` comma-separated integers from 1, for a TOML list.
std::string range(int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) out += (i > 1 ? ", " : "") + std::to_string(i);
  return out;
}

}  // namespace

CATCH_TEST_CASE("sweep.name is ASCII letters, digits, '.', '_' and '-', not first") {
  Dir d;
  const std::string grid = "[grid]\n\"attention.variant\" = [\"softmax\", \"alibi\"]\n";
  for (const std::string name :
       {"x\\ntouch /tmp/pwned", "a b", "it's", "$(id)", "a\\tb", "x;y", "-rf", ".hidden", "caf\\u00e9"}) {
    CATCH_CAPTURE(name);
    auto msg = error_of([&] { d.expand(grid, name); });
    CATCH_CHECK_THAT(msg, Contains("s.toml:2:8: sweep.name") && Contains("may only contain"));
    CATCH_CHECK(msg.find('\n') == std::string::npos);  // the name is quoted escaped
  }
  CATCH_CHECK(d.expand(grid, "lazy_ablation-v2.1").cells.size() == 2);
}

CATCH_TEST_CASE("sweep names and seed lists are bounded, duplicate seeds found in one pass") {
  Dir d;
  const std::string grid = "[grid]\n\"attention.variant\" = [\"softmax\", \"alibi\"]\n";
  CATCH_CHECK(d.expand(grid, std::string(128, 'n')).cells.size() == 2);
  CATCH_CHECK_THAT(error_of([&] { d.expand(grid, std::string(129, 'n')); }),
                   Contains("s.toml:2:8: sweep.name is 129 characters long; at most 128"));
  // 10,000 seeds, the bound, the last a duplicate: found (a pairwise check took over a minute
  // for a million before the bound); 10,001 refused before any is read.
  CATCH_CHECK_THAT(error_of([&] { d.expand("seeds = [" + range(9999) + ", 7]\n"); }),
                   Contains("sweep.seeds lists seed 7 twice"));
  CATCH_CHECK_THAT(error_of([&] { d.expand("seeds = [" + range(10001) + "]\n"); }),
                   Contains("s.toml:4:9: sweep.seeds lists 10001 seeds; at most 10000"));
}

CATCH_TEST_CASE("values that are not finite are refused wherever a sweep sets them") {
  Dir d;
  CATCH_CHECK_THAT(error_of([&] { d.expand("[grid]\n\"train.lr\" = [1e-3, inf]\n"); }),
                   Contains("s.toml:5:21: [grid] value of 'train.lr' is inf") &&
                       Contains("finite"));
  CATCH_CHECK_THAT(error_of([&] { d.expand("[grid]\n\"train.grad_clip\" = [nan, 1.0]\n"); }),
                   Contains("s.toml:5:22: [grid] value of 'train.grad_clip' is nan"));
  CATCH_CHECK_THAT(
      error_of([&] { d.expand("[[zip]]\n\"train.lr\" = [1e-3, 2e-3]\n\"train.grad_clip\" = [-inf, 1.0]\n"); }),
      Contains("s.toml:6:") && Contains("[[zip]] value of 'train.grad_clip' is -inf"));
  CATCH_CHECK_THAT(error_of([&] {
                     d.expand("[grid]\n\"train.lr\" = [1e-3, 2e-3]\n[[include]]\n\"train.lr\" = inf\n");
                   }),
                   Contains("s.toml:7:") && Contains("[[include]] value of 'train.lr' is inf"));
  CATCH_CHECK_THAT(error_of([&] {
                     d.expand("[grid]\n\"train.lr\" = [1e-3, 2e-3]\n[[exclude]]\n\"train.lr\" = nan\n");
                   }),
                   Contains("s.toml:7:") && Contains("[[exclude]] value of 'train.lr' is nan"));
}

CATCH_TEST_CASE("string values with a control character are refused") {
  Dir d;
  auto msg = error_of([&] {
    d.expand("[grid]\n\"data.train\" = [\"a.bin\\n  0123456789ab  # x\\ntouch /tmp/pwned\", \"b.bin\"]\n");
  });
  CATCH_CHECK_THAT(msg, Contains("s.toml:5:17: [grid] value of 'data.train'") &&
                            Contains("control character"));
  CATCH_CHECK_THAT(msg, Contains("a.bin\\n  0123456789ab"));  // shown escaped, on one line
  CATCH_CHECK_THAT(error_of([&] {
                     d.expand("[grid]\n\"data.train\" = [\"a.bin\", \"b.bin\"]\n"
                              "[[include]]\n\"data.train\" = \"c\\u001b[2J.bin\"\n");
                   }),
                   Contains("s.toml:7:") && Contains("c\\x1b[2J.bin"));
}

CATCH_TEST_CASE("a sweep of more than kMaxCells cells is refused before any is built") {
  Dir d;
  // 100 x 100 combinations x 2 seeds = 20,000.
  std::ofstream(d.path / "seeds.toml") << "[sweep]\nname = \"t\"\nbase = \"base.toml\"\nseeds = [1, 2]\n"
                                       << "[grid]\n\"train.steps\" = [" << range(100) << "]\n"
                                       << "\"train.batch_size\" = [" << range(100) << "]\n";
  auto msg = error_of([&] { sweep::expand(sweep::parse_sweep_file(d.path / "seeds.toml")); });
  CATCH_CHECK_THAT(msg, Contains("seeds.toml: the sweep expands to 20000 cells (100 values of "
                                 "'train.steps' x 100 values of 'train.batch_size', x 2 seeds)") &&
                            Contains("at most 10000"));
  // 14^17 combinations overflow 64 bits: the count must not wrap around to a small number.
  std::string grid = "[grid]\n";
  for (int k = 0; k < 17; ++k) grid += "\"train.x" + std::to_string(k) + "\" = [" + range(14) + "]\n";
  CATCH_CHECK_THAT(error_of([&] { d.expand(grid); }), Contains("expands to more than 2^64 cells"));
  // One list longer than any sweep may be is refused before its values are compared pairwise.
  CATCH_CHECK_THAT(error_of([&] { d.expand("[grid]\n\"train.steps\" = [" + range(10001) + "]\n"); }),
                   Contains("s.toml:5:17: [grid] key 'train.steps' lists 10001 values"));
}

CATCH_TEST_CASE("a busy run folder or database is a transient failure, anything else is not") {
  Dir d;
  const fs::path run = d.path / "run";
  fs::create_directories(run);
  const std::runtime_error other("out of memory");
  const UsageError bad_config("train.lr must be > 0");
  CATCH_CHECK_FALSE(sweep::transient_failure(other, run));
  CATCH_CHECK_FALSE(sweep::transient_failure(bad_config, run));
  // Another process trains the run (train/run_lock.h): an flock on <run>/.lock.
  const int fd = ::open((run / ".lock").c_str(), O_RDWR | O_CREAT, 0644);
  CATCH_REQUIRE(fd >= 0);
  CATCH_REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  const UsageError busy("run folder is being trained by another process right now");
  CATCH_CHECK(sweep::transient_failure(busy, run));
  ::close(fd);  // released: the same error is no longer a passing condition
  CATCH_CHECK_FALSE(sweep::transient_failure(busy, run));
  // SQLite's own words for a database that stayed locked, as results/sqlite.cpp passes them on.
  const std::runtime_error locked(std::string("runs/attnbench.db: cannot log metrics: ") +
                                  sqlite3_errstr(SQLITE_BUSY));
  const std::runtime_error table_locked(std::string("x.db: ") + sqlite3_errstr(SQLITE_LOCKED));
  CATCH_CHECK(sweep::transient_failure(locked, run));
  CATCH_CHECK(sweep::transient_failure(table_locked, run));
}

CATCH_TEST_CASE("[[pretrained]] names Hugging Face model folders, relative to the sweep file") {
  Dir d;
  const fs::path gpt2 = fs::path(ATTNBENCH_SOURCE_DIR) / "tests" / "fixtures" / "hf" / "gpt2";
  fs::create_directories(d.path / "models");
  fs::create_directory_symlink(gpt2, d.path / "models" / "gpt2");
  auto parse = [&](const std::string& body) {
    std::ofstream(d.path / "s.toml") << "[sweep]\nname = \"t\"\nbase = \"base.toml\"\n" << body;
    return sweep::parse_sweep_file(d.path / "s.toml");
  };
  const auto s = parse("[[pretrained]]\npath = \"models/gpt2\"\n");
  CATCH_REQUIRE(s.pretrained.size() == 1);
  CATCH_CHECK(s.pretrained[0].path == d.path / "models" / "gpt2");
  CATCH_CHECK(s.pretrained[0].where.line == 5);
  // The trained cells are unchanged: one, the base config.
  CATCH_CHECK(sweep::expand(s).cells.size() == 1);

  CATCH_CHECK_THAT(error_of([&] { parse("[[pretrained]]\npath = \"models\"\n"); }),
                   Contains("s.toml:5") && Contains("is not a Hugging Face model folder"));
  // A run folder holds a config.json too, without a model_type.
  std::ofstream(d.path / "models" / "config.json") << "{\"model\": {}}";
  CATCH_CHECK_THAT(error_of([&] { parse("[[pretrained]]\npath = \"models\"\n"); }),
                   Contains("is not a Hugging Face model folder"));
  CATCH_CHECK_THAT(error_of([&] { parse("[[pretrained]]\nfolder = \"models/gpt2\"\n"); }),
                   Contains("unknown key 'folder' in [[pretrained]]") && Contains("path"));
  CATCH_CHECK_THAT(error_of([&] { parse("[[pretrained]]\n"); }), Contains("needs path ="));
  CATCH_CHECK_THAT(error_of([&] {
                     parse("[[pretrained]]\npath = \"models/gpt2\"\n[[pretrained]]\npath = \"" +
                           gpt2.string() + "\"\n");
                   }),
                   Contains("s.toml:7") && Contains("twice (first at") && Contains("s.toml:5"));
  CATCH_CHECK_THAT(error_of([&] { parse("[pretrain]\npath = \"models/gpt2\"\n"); }),
                   Contains("unknown section [pretrain]") && Contains("pretrained"));
}

}  // namespace sweep_input_test
