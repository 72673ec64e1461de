#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "core/common/tensorboard_events.h"
#include "tests/tensorboard_records.h"

namespace fs = std::filesystem;
namespace tb = attnbench::tensorboard;
using attnbench::testing::read_bytes;
using attnbench::testing::read_events;

namespace {

struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("attnbench-tb-" + std::to_string(getpid()));
  ScratchDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

// Known answers: RFC 3720 B.4 (32 zero bytes, 32 0xFF bytes) and the "123456789" check value.
CATCH_TEST_CASE("crc32c matches the Castagnoli known answers") {
  CATCH_CHECK(tb::crc32c("") == 0x00000000u);
  CATCH_CHECK(tb::crc32c("123456789") == 0xE3069283u);
  CATCH_CHECK(tb::crc32c(std::string(32, '\0')) == 0x8A9136AAu);
  CATCH_CHECK(tb::crc32c(std::string(32, '\xFF')) == 0x62A8AB43u);
  CATCH_CHECK(tb::masked_crc32c("123456789") ==
              static_cast<uint32_t>(((0xE3069283u >> 15) | (0xE3069283u << 17)) + 0xa282ead8u));
}

// tests/fixtures/tensorboard/events.out.tfevents.fixture was written by tensorboard 2.18.0's
// RecordWriter and protobuf (scripts/make-tensorboard-fixture, which lists the same events).
CATCH_TEST_CASE("the event writer's bytes are tensorboard's own") {
  ScratchDir dir;
  const fs::path ours = dir.path / "events.out.tfevents.ours";
  {
    tb::EventFileWriter w;
    w.open(ours, 1700000000.25);
    w.add_scalar("train/loss", 1, 3.5, 1700000001.5);
    w.add_scalar("train/loss", 2, -0.125, 1700000002.75);
    w.add_scalar("val/loss", 0, 0.0, 0.0);
    w.add_scalar("train/lr", (int64_t{1} << 32) + 1, 0.0001, 1700000003.0);
    w.add_session_start(2, 1700000010.0);
    w.add_scalar("train/loss", 2, -2.5e30, 1700000011.0);
    w.close();
  }
  const fs::path fixture =
      fs::path(ATTNBENCH_SOURCE_DIR) / "tests/fixtures/tensorboard/events.out.tfevents.fixture";
  CATCH_REQUIRE(read_bytes(ours) == read_bytes(fixture));

  const auto events = read_events(ours);  // and our reader reads it back
  CATCH_REQUIRE(events.size() == 7);
  CATCH_CHECK(events[0].file_version == "brain.Event:2");
  CATCH_CHECK(events[4].step == (int64_t{1} << 32) + 1);
  CATCH_CHECK(events[4].value == 0.0001f);
  CATCH_CHECK(events[5].session_status == 1);
  CATCH_CHECK(events[6].value == -2.5e30f);
}

CATCH_TEST_CASE("event files are named as TensorBoard names them and sort after earlier ones") {
  ScratchDir dir;
  const fs::path first = tb::new_event_file(dir.path, 1700000000.9);
  const std::string name = first.filename().string();
  CATCH_CHECK(name.rfind("events.out.tfevents.1700000000.", 0) == 0);
  CATCH_CHECK(name.find("." + std::to_string(getpid()) + ".") != std::string::npos);
  std::ofstream(first).put('x');
  // Same second again (a resume within it): the new name must still come after the first.
  const fs::path second = tb::new_event_file(dir.path, 1700000000.1);
  CATCH_CHECK(second.filename().string().rfind("events.out.tfevents.1700000001.", 0) == 0);
  CATCH_CHECK(second.filename().string() > name);
}

CATCH_TEST_CASE("event writer errors name the file") {
  tb::EventFileWriter w;
  try {
    w.open("/nonexistent-attnbench/events.out.tfevents.x", 1.0);
    CATCH_FAIL("no error");
  } catch (const std::runtime_error& e) {
    CATCH_CHECK(std::string(e.what()).find("/nonexistent-attnbench/events.out.tfevents.x") !=
                std::string::npos);
  }
}
