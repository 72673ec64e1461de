// The checkpoint writer under write failures (docs/training.md, "Faults while training"): every
// write, fsync and close is checked, a failed save leaves the previous checkpoint as it was and no
// staging folder. Disk-full is simulated without root: /dev/full fails every write with ENOSPC, and
// RLIMIT_FSIZE makes writes past a size fail with EFBIG in this process alone.
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <functional>
#include <sstream>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/config/run_config.h"
#include "model/checkpoint.h"
#include "model/checkpoint_dir.h"
#include "model/decoder.h"
#include "model/tiny_checkpoint.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace checkpoint_faults_test {

using namespace attnbench;
namespace fs = std::filesystem;

namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Files this process writes may hold at most `bytes` while it lives; SIGXFSZ is ignored so that
// the write returns EFBIG instead of killing the test.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    previous_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit lower = saved_;
    lower.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &lower);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previous_);
  }

 private:
  rlimit saved_{};
  void (*previous_)(int) = SIG_DFL;
};

}  // namespace

CATCH_TEST_CASE("checkpoint files: a full disk is an error naming the file and the cause") {
  model::CheckedFile full("/dev/full");  // every write: ENOSPC
  CATCH_CHECK(full.write("abc", 3) == 3);  // the failure is kept, not thrown mid-way
  CATCH_CHECK_THAT(message_of([&] { full.finish(); }),
                   Catch::Contains("/dev/full") && Catch::Contains("write: No space left on device"));

  const fs::path dir = fs::temp_directory_path() / ("ab_ckpt_faults_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    model::CheckedFile ok(dir / "a.txt");
    ok.write("hello", 5);
    ok.finish();
    CATCH_CHECK(slurp(dir / "a.txt") == "hello");
    // write_file_atomic leaves the old file and no temporary file when the write fails.
    FileSizeLimit limit(4);
    CATCH_CHECK_THROWS_AS(model::write_file_atomic(dir / "a.txt", "a longer text"), std::runtime_error);
  }
  CATCH_CHECK(slurp(dir / "a.txt") == "hello");
  CATCH_CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  fs::remove_all(dir);
}

CATCH_TEST_CASE("checkpoint files: a checkpoint that cannot be written keeps the previous one") {
  testing::TinyCheckpoint t("ab_ckpt_run");
  t.save(10);
  model::TrainState state;
  state.step = 20;
  std::string error;
  {
    FileSizeLimit limit(64 << 10);  // far below the model's archive
    error = message_of([&] { model::save_checkpoint(t.run, t.cfg, *t.net, t.adamw, state); });
  }
  CATCH_CHECK_THAT(error, Catch::Contains("cannot write the checkpoint of step 20") &&
                              Catch::Contains("File too large") &&
                              Catch::Contains(t.checkpoint().string() + " is intact"));
  CATCH_CHECK(!fs::exists(t.run / "checkpoint.tmp"));
  model::verify_checkpoint(t.checkpoint());
  CATCH_CHECK(model::restore_checkpoint(t.checkpoint(), *t.net, nullptr).step == 10);
}

CATCH_TEST_CASE("checkpoint files: a corrupt archive under a matching manifest is named, not LibTorch's") {
  // A hand-edited manifest can match any bytes: the archive itself must be refused with its path
  // (before, "PytorchStreamReader failed reading zip archive" reached the user).
  testing::TinyCheckpoint t("ab_ckpt_corrupt");
  t.save(3);
  const fs::path ckpt = t.checkpoint();
  std::ofstream(ckpt / "model.pt", std::ios::trunc) << "not a zip archive";
  model::write_manifest(ckpt, 3);
  model::verify_checkpoint(ckpt);  // the manifest agrees
  const std::string error = message_of([&] { model::restore_checkpoint(ckpt, *t.net, nullptr); });
  CATCH_CHECK_THAT(error, Catch::StartsWith((ckpt / "model.pt").string() +
                                            ": cannot be read as this run's checkpoint"));
  CATCH_CHECK(error.find("Exception raised from") == std::string::npos);
  CATCH_CHECK_THROWS_AS(model::restore_checkpoint(ckpt, *t.net, nullptr), UsageError);
}

}  // namespace checkpoint_faults_test
