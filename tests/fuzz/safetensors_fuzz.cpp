// Fuzzes the safetensors reader (core/data/safetensors.h). The input is read three ways:
//  1. as the whole file, so the 8-byte header length is fuzzed too;
//  2. framed: the bytes before the first NUL as the header (no valid JSON holds a raw NUL), the
//     bytes after it as the data region, with the header length written for them; a random
//     length rarely matches its header, so without this the header's checks would go untested;
//  3. as a model.safetensors.index.json, whose every shard must then be a plain file name.
// A file that opens must keep every promise of its header: tensors in offset order whose bytes,
// one after the other, are exactly the file's data region (so each view lies inside the mapping),
// each as many bytes as its shape and dtype need, found by name, and widened by to_float32 without
// a sanitizer report.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/data/safetensors.h"
#include "tests/fuzz/fuzz_support.h"

using namespace attnbench;

namespace {

void check_tensor(const data::SafetensorsFile& file, const data::SafetensorsTensor& t,
                  std::string_view region, size_t& at) {
  size_t elements = 1;  // the reader keeps the product of the non-zero dimensions below 2^63
  for (const int64_t d : t.shape) elements = d == 0 ? 0 : elements * static_cast<size_t>(d);
  if (elements * data::safetensors_item_size(t.dtype) != t.bytes) {
    fuzz::bug("bytes differ from shape x item size", nullptr);
  }
  if (file.find(t.name) != &t) fuzz::bug("find() does not return the tensor", nullptr);
  if (t.bytes == 0) {
    if (t.data != nullptr) fuzz::bug("an empty tensor with a data pointer", nullptr);
    return;
  }
  if (t.bytes > region.size() - at || std::memcmp(t.data, region.data() + at, t.bytes) != 0) {
    fuzz::bug("a tensor's bytes are not the next bytes of the data region", nullptr);
  }
  at += t.bytes;
  if (!data::is_weight_dtype(t.dtype)) return;
  std::vector<float> values(t.bytes / data::safetensors_item_size(t.dtype));
  data::to_float32(t, values.data());
}

void check_file(const data::SafetensorsFile& file, std::string_view input) {
  uint64_t header = 0;
  std::memcpy(&header, input.data(), 8);  // it opened: the input has 8 + header bytes at least
  const std::string_view region = input.substr(8 + header);
  size_t at = 0;
  for (const auto& t : file.tensors()) check_tensor(file, t, region, at);
  if (at != region.size()) fuzz::bug("the tensors do not cover the data region", nullptr);
}

void check_index(const std::map<std::string, std::string>& weight_map) {
  for (const auto& [name, shard] : weight_map) {
    if (shard.empty() || shard == "." || shard == ".." ||
        shard.find_first_of(std::string_view("/\\\0", 3)) != std::string::npos) {
      fuzz::bug("the index names a shard that is not a plain file name", nullptr);
    }
  }
}

// The header length (8 bytes, little-endian), the header, the data.
std::string framed(std::string_view input) {
  const size_t nul = std::min(input.find('\0'), input.size());
  const uint64_t n = nul;
  std::string out(reinterpret_cast<const char*>(&n), 8);  // little-endian host, as the reader
  out += input.substr(0, nul);
  out += input.substr(std::min(nul + 1, input.size()));
  return out;
}

void check_open(const std::filesystem::path& path, const std::string& bytes) {
  fuzz::write_file(path, bytes);
  fuzz::expect_clean_errors([&] { check_file(data::SafetensorsFile::open(path), bytes); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const auto path = fuzz::scratch() / "model.safetensors";
  check_open(path, input);
  fuzz::expect_clean_errors([&] { check_index(data::read_safetensors_index(path)); });
  check_open(path, framed(input));
  return 0;
}
