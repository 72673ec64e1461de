// Reading Hugging Face safetensors files (docs/model.md, "Reading safetensors"): an 8-byte
// little-endian header length N, N bytes of JSON {name: {"dtype", "shape", "data_offsets":
// [begin, end]}, optional "__metadata__": {str: str}}, then the data region, offsets relative to
// its start (byte 8 + N). Only the floating-point dtypes model weights come in are read.
// Torch-free: the views are raw bytes; converting them to tensors is the caller's business.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attnbench::data {

// The format's dtypes whose items are whole bytes. F32, F16 and BF16 are the weights attnbench reads
// (to_float32); a file may hold the others too, e.g. the U8 causal masks and F32 scalars GPT-NeoX
// checkpoints carry as buffers, and opens with them. The packed F4 and F6 types are refused.
enum class SafetensorsDtype {
  F32, F16, BF16, F64, C64, I64, U64, I32, U32, I16, U16, I8, U8, BOOL, F8_E5M2, F8_E4M3, F8_E8M0
};

// "F32", "F16", "BF16", ..., as the format spells them.
const char* safetensors_dtype_name(SafetensorsDtype dtype);
size_t safetensors_item_size(SafetensorsDtype dtype);  // bytes per element
// F32, F16 or BF16: a dtype to_float32 reads.
bool is_weight_dtype(SafetensorsDtype dtype);

// One tensor of a SafetensorsFile: a view into its mapping, valid while the file object lives.
// `data` holds `bytes` bytes, little-endian, C order; it is null when bytes == 0 (a shape with a
// 0), and it need not be aligned to the item size (the format does not require padding).
struct SafetensorsTensor {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  std::vector<int64_t> shape;
  const std::byte* data = nullptr;
  size_t bytes = 0;
};

// A safetensors file mapped read-only (mmap, MAP_PRIVATE) and checked whole at open: the header's
// structure, every tensor's dtype, shape and offsets, and that the tensors cover the data region
// exactly. Any violation is an InputError naming the file, the tensor where there is one, and what
// was expected. Unmapped by the destructor; movable (the views stay valid), not copyable.
//
// The file must not shrink while it is open: a mapped page past the new end of the file kills the
// process with SIGBUS on access (why ShardReader reads with pread instead). Weights are read once,
// at load, so the mapping's zero-copy read is worth that here.
class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::filesystem::path& file);

  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }  // data-offset order
  const SafetensorsTensor* find(std::string_view name) const;                 // nullptr if absent
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::filesystem::path& path() const { return path_; }
  // Drops the resident pages that lie wholly inside `t`'s bytes (madvise MADV_DONTNEED; the
  // mapping stays valid and reads them again from the file if touched). A loader that reads each
  // tensor once calls it after the read, so that the mapped file does not add to its peak memory.
  void release(const SafetensorsTensor& t) const;

 private:
  struct Unmap {
    size_t bytes;  // of the mapping; only read when a mapping is held
    void operator()(const std::byte* base) const;
  };
  SafetensorsFile() = default;

  std::filesystem::path path_;
  std::unique_ptr<const std::byte, Unmap> mapping_;
  std::vector<SafetensorsTensor> tensors_;
  std::map<std::string, size_t, std::less<>> by_name_;  // name -> index in tensors_
  std::map<std::string, std::string> metadata_;
};

// Writes the tensor's t.bytes / item-size values as float to `out`, exactly: BF16 is the top half
// of an F32; F16 follows IEEE 754 binary16 (subnormals, infinities, NaN payloads kept). Assumes a
// little-endian host, as the file is. std::invalid_argument for a dtype that is not a weight's
// (is_weight_dtype): callers check it first and name the file.
void to_float32(const SafetensorsTensor& t, float* out);

// A sharded model's model.safetensors.index.json: {"metadata": {...}, "weight_map": {tensor name:
// shard file}}. Returns tensor name -> shard file name; every shard is a plain file name in the
// index's folder (no path separator, not "." or ".."). InputError naming the index and the key
// otherwise; the shards themselves are not opened.
std::map<std::string, std::string> read_safetensors_index(const std::filesystem::path& index_json);

}  // namespace attnbench::data
