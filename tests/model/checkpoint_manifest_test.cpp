// The checkpoint manifest check (model/checkpoint_dir.h) on manifests of the wrong shape: each is
// reported as a corrupt checkpoint (UsageError naming the folder), never as a raw nlohmann::json
// error, a float cast out of range, or a check of a file outside the folder. The same inputs seed
// the fuzz target tests/fuzz/checkpoint_manifest_fuzz.cpp.
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "model/checkpoint_dir.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace checkpoint_manifest_test {

using namespace attnbench;
namespace fs = std::filesystem;

namespace {

struct Checkpoint {
  fs::path dir = fs::temp_directory_path() /
                 ("ab-manifest-test-" + std::to_string(::getpid()) + "/checkpoint");
  Checkpoint() {
    fs::create_directories(dir);
    write("state.json", "{\"step\": 1}\n");
  }
  ~Checkpoint() { fs::remove_all(dir.parent_path()); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name, std::ios::binary) << text;
  }
  // The message of verify_checkpoint's UsageError, "" when it passes; any other exception fails.
  std::string verify() const {
    try {
      model::verify_checkpoint(dir);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  }
};

}  // namespace

CATCH_TEST_CASE("checkpoint manifest: a manifest of the wrong shape is a corrupt checkpoint") {
  Checkpoint c;
  model::write_manifest(c.dir, 1);
  CATCH_CHECK(c.verify().empty());
  const std::string head = R"({"format": "attnbench-checkpoint", "version": 1, )";
  const char* sum = R"("xxh3_64": "10c8458aac5a02d4")";
  for (const std::string& text :
       {std::string("2"), std::string(R"({"format": 1, "version": 1, "files": {}})"),
        std::string(R"({"format": "attnbench-checkpoint", "version": "1", "files": {}})"),
        std::string(R"({"format": "attnbench-checkpoint", "version": 1e300, "files": {}})"),
        head + R"("files": {"state.json": {"bytes": 12}}})",
        head + R"("files": {"state.json": 12}})",
        head + R"("files": {"state.json": {"bytes": 1e300, )" + sum + "}}}",
        head + R"("files": {"state.json": {"bytes": -1, )" + sum + "}}}"}) {
    CATCH_CAPTURE(text);
    c.write("MANIFEST.json", text);
    CATCH_CHECK_THAT(c.verify(), Catch::Matchers::Contains("is incomplete or corrupt"));
  }
}

CATCH_TEST_CASE("checkpoint manifest: only files of the checkpoint folder are listed") {
  Checkpoint c;
  for (const char* name : {"../checkpoint/state.json", "/etc/hostname", "..", ""}) {
    CATCH_CAPTURE(name);
    c.write("MANIFEST.json", R"({"format": "attnbench-checkpoint", "version": 1, "files": {")" +
                                 std::string(name) + R"(": {"bytes": 12, "xxh3_64": "10c8458aac5a02d4"}}})");
    CATCH_CHECK_THAT(c.verify(), Catch::Matchers::Contains("which is not a file name"));
  }
}

}  // namespace checkpoint_manifest_test
