// Shards and input files under hostile conditions (docs/data.md, "Reading shards safely"): a FIFO
// or folder where a file belongs is refused at once instead of blocking; a shard truncated or
// rewritten while it is open is a ShardChanged error naming it, never a SIGBUS; a shard whose time
// alone moved reads on.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/common/regular_file.h"
#include "core/data/shard.h"
#include "core/data/tokenizer.h"

namespace {

namespace fs = std::filesystem;
using attnbench::UsageError;
using attnbench::data::ShardChanged;
using attnbench::data::ShardReader;

struct Scratch {
  fs::path dir;
  Scratch() {
    static int n = 0;
    dir = fs::temp_directory_path() /
          ("ab_shard_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
};

// A regression would block in open() forever: the alarm turns that into a failed test.
struct HangGuard {
  HangGuard() { ::alarm(20); }
  ~HangGuard() { ::alarm(0); }
};

fs::path make_fifo(const fs::path& p) {
  CATCH_REQUIRE(::mkfifo(p.c_str(), 0600) == 0);
  return p;
}

std::vector<uint32_t> iota_tokens(size_t n) {
  std::vector<uint32_t> t(n);
  std::iota(t.begin(), t.end(), 0u);
  for (auto& x : t) x %= 50000;
  return t;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

CATCH_TEST_CASE("shard reader: a FIFO, folder or missing file is refused at once, by name") {
  Scratch s;
  HangGuard guard;
  const fs::path fifo = make_fifo(s.dir / "train.bin");
  CATCH_CHECK_THROWS_AS(ShardReader(fifo), UsageError);
  CATCH_CHECK_THAT(message_of([&] { ShardReader r(fifo); }),
                   Catch::Contains(fifo.string()) && Catch::Contains("FIFO"));
  // Resolved through a folder or a glob, the FIFO still reaches the same refusal.
  CATCH_CHECK(attnbench::data::resolve_shards(s.dir.string()) == std::vector<fs::path>{fifo});
  CATCH_CHECK_THAT(message_of([&] { ShardReader r(s.dir); }), Catch::Contains("is a folder"));
  CATCH_CHECK_THAT(message_of([&] { ShardReader r(s.dir / "none.bin"); }),
                   Catch::Contains("cannot open shard") && Catch::Contains("none.bin"));
}

CATCH_TEST_CASE("shard reader: input and tokenizer files that are FIFOs are refused at once") {
  Scratch s;
  HangGuard guard;
  const fs::path fifo = make_fifo(s.dir / "in.jsonl");
  CATCH_CHECK_THAT(message_of([&] { attnbench::read_regular_file(fifo, "input"); }),
                   Catch::Contains("input " + fifo.string() + " is a FIFO (named pipe)"));
  make_fifo(s.dir / "vocab.bpe");
  std::ofstream(s.dir / "encoder.json") << "{}";
  CATCH_CHECK_THROWS_AS(attnbench::data::Tokenizer::load(s.dir), UsageError);
  CATCH_CHECK_THAT(message_of([&] { attnbench::data::Tokenizer::load(s.dir); }),
                   Catch::Contains("tokenizer file") && Catch::Contains("FIFO"));
}

CATCH_TEST_CASE("shard reader: reads match what was written, both token widths") {
  Scratch s;
  for (int version : {1, 2}) {
    std::vector<uint32_t> tokens = iota_tokens(3000);
    if (version == 2) tokens[7] = 70000;
    attnbench::data::write_shard(s.dir / "a.bin", tokens, version);
    ShardReader r(s.dir / "a.bin");
    CATCH_CHECK(r.version() == version);
    std::vector<int64_t> out(2000, -1);
    r.read(500, 2000, out.data());
    for (size_t i = 0; i < out.size(); ++i) CATCH_REQUIRE(out[i] == tokens[500 + i]);
    CATCH_CHECK(r.scan() == (version == 1 ? 2999u : 70000u));
  }
}

CATCH_TEST_CASE("shard reader: a shard truncated while open is an error naming it, not SIGBUS") {
  Scratch s;
  const fs::path p = s.dir / "train.bin";
  attnbench::data::write_shard(p, iota_tokens(100000));
  ShardReader r(p);
  std::vector<int64_t> out(1025);
  r.read(90000, 1025, out.data());
  fs::resize_file(p, 4096);  // what `truncate` or a writer restarting the file does
  CATCH_CHECK_THROWS_AS(r.read(90000, 1025, out.data()), ShardChanged);
  CATCH_CHECK_THAT(message_of([&] { r.read(0, 10, out.data()); }),
                   Catch::Contains(p.string()) && Catch::Contains("shrank from 201024 to 4096 bytes"));
  CATCH_CHECK_THROWS_AS(r.scan(), ShardChanged);
}

CATCH_TEST_CASE("shard reader: rewritten bytes are an error, a moved time alone is not") {
  Scratch s;
  const fs::path p = s.dir / "train.bin";
  attnbench::data::write_shard(p, iota_tokens(5000));
  ShardReader r(p);
  r.scan();
  std::vector<int64_t> out(100);
  // Same bytes, new time (a `touch`, or a copy of the same file over it): reading goes on.
  fs::last_write_time(p, fs::last_write_time(p) + std::chrono::seconds(5));
  r.read(0, 100, out.data());
  CATCH_CHECK(out[99] == 99);
  // Same size, other bytes, written in place.
  {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(2000);
    f.write("\x07\x07", 2);
  }
  fs::last_write_time(p, fs::last_write_time(p) + std::chrono::seconds(5));
  CATCH_CHECK_THAT(message_of([&] { r.read(0, 100, out.data()); }),
                   Catch::Contains(p.string()) && Catch::Contains("was modified"));
  // Without a scan there is no checksum to fall back on: any change of time is a change.
  ShardReader unscanned(p);
  fs::last_write_time(p, fs::last_write_time(p) + std::chrono::seconds(5));
  CATCH_CHECK_THROWS_AS(unscanned.read(0, 100, out.data()), ShardChanged);
}
