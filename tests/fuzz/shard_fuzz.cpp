// Fuzzes the llm.c token shard reader (core/data/shard.h): the input is the whole shard file. One
// that opens must give every token it promises (read() copies them; ASan checks each is inside the
// mapping).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/data/shard.h"
#include "tests/fuzz/fuzz_support.h"

using namespace attnbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::scratch() / "fuzz.bin";
  fuzz::write_file(path, std::string_view(reinterpret_cast<const char*>(data), size));
  fuzz::expect_clean_errors([&] {
    data::ShardReader shard(path);
    std::vector<int64_t> tokens(static_cast<size_t>(shard.size()));
    shard.read(0, shard.size(), tokens.data());
  });
  return 0;
}
