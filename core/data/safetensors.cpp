#include "core/data/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/json_input.h"
#include "core/common/regular_file.h"

// The rules taken from the format's reference reader (huggingface/safetensors, tensor.rs,
// `read_metadata` and `Metadata::validate`): a file of at least 8 bytes; a header of at most
// 100,000,000 bytes that fits in the file; a JSON object of entries plus an optional
// "__metadata__" map of strings; shape and offsets non-negative integers; element count and byte
// size computed with checked multiplication; end - begin equal to that byte size; and, with the
// entries sorted by offsets, each tensor starting where the previous one ended (the first at 0)
// and the last ending at the end of the file, so the tensors cover the data region exactly: no
// overlap, no hole, no trailing bytes.
//
// Stricter than the reference, because a file that breaks these is corrupt or not meant for us:
// an entry with a key other than dtype, shape and data_offsets (serde ignores it); a key given
// twice in one object (serde and nlohmann keep the last, so the reader would silently pick one);
// more than 8 dimensions; every dimension and the product of the non-zero ones below 2^63 (torch
// sizes and strides are int64, and the strides of a shape with a 0 are products of the others);
// only F32, F16 and BF16.

namespace attnbench::data {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the reference's MAX_HEADER_SIZE
constexpr size_t kMaxDims = 8;
constexpr uint64_t kMaxSize = static_cast<uint64_t>(INT64_MAX);

// Every dtype the format knows, by its spelling (the packed ones have no SafetensorsDtype).
const std::vector<std::pair<std::string, SafetensorsDtype>>& dtype_names() {
  using D = SafetensorsDtype;
  static const std::vector<std::pair<std::string, D>> names = {
      {"F32", D::F32},   {"F16", D::F16},   {"BF16", D::BF16},         {"F64", D::F64},
      {"C64", D::C64},   {"I64", D::I64},   {"U64", D::U64},           {"I32", D::I32},
      {"U32", D::U32},   {"I16", D::I16},   {"U16", D::U16},           {"I8", D::I8},
      {"U8", D::U8},     {"BOOL", D::BOOL}, {"F8_E5M2", D::F8_E5M2},   {"F8_E4M3", D::F8_E4M3},
      {"F8_E8M0", D::F8_E8M0}};
  return names;
}

// Packed sub-byte dtypes: refused by name, not as unknown strings.
const std::vector<std::string> kPackedDtypes = {"F4", "F6_E2M3", "F6_E3M2"};

[[noreturn]] void refuse(const fs::path& file, const std::string& what) {
  throw InputError({file.string()}, what);
}

// A non-negative JSON integer (nlohmann stores it as unsigned, or as signed for "-0").
bool as_count(const json& v, uint64_t& out) {
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0)) return false;
  out = v.get<uint64_t>();
  return true;
}


// One header entry, checked on its own; the offsets are relative to the data region.
struct Entry {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

// Throws InputError "file: tensor 'name': what".
struct TensorContext {
  const fs::path& file;
  const std::string& name;
  [[noreturn]] void fail(const std::string& what) const {
    refuse(file, "tensor " + quoted_excerpt(name) + ": " + what);
  }
};

SafetensorsDtype parse_dtype(const json& v, const TensorContext& at) {
  if (!v.is_string()) at.fail("dtype must be a string such as \"F32\", found " + describe_json(v));
  const auto& s = v.get_ref<const std::string&>();
  std::vector<std::string> known;
  for (const auto& [name, dtype] : dtype_names()) {
    if (name == s) return dtype;
    known.push_back(name);
  }
  if (std::find(kPackedDtypes.begin(), kPackedDtypes.end(), s) != kPackedDtypes.end()) {
    at.fail("dtype " + s + " is not read: its items are packed below a byte");
  }
  at.fail("unknown dtype " + quoted_excerpt(s) + did_you_mean(s, known) +
          " (expected F32, F16, BF16 or another of the format's dtypes)");
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<int64_t> parse_shape(const json& v, const TensorContext& at) {
  if (!v.is_array()) {
    at.fail("shape must be an array of non-negative integers, found " + describe_json(v));
  }
  if (v.size() > kMaxDims) {
    at.fail("shape has " + std::to_string(v.size()) + " dimensions; at most " +
            std::to_string(kMaxDims) + " are read");
  }
  std::vector<int64_t> shape;
  for (size_t i = 0; i < v.size(); ++i) {
    uint64_t d = 0;
    if (!as_count(v[i], d) || d > kMaxSize) {
      at.fail("shape[" + std::to_string(i) + "] must be a non-negative integer below 2^63, found " +
              describe_json(v[i]));
    }
    shape.push_back(static_cast<int64_t>(d));
  }
  return shape;
}

// The tensor's size in bytes; the element count, the product of its non-zero dimensions and the
// byte size must each stay below 2^63 (checked multiplication; see the top of this file).
uint64_t byte_size(const std::vector<int64_t>& shape, SafetensorsDtype dtype,
                   const TensorContext& at) {
  uint64_t nonzero = 1;
  bool empty = false;
  for (const int64_t d : shape) {
    empty = empty || d == 0;
    if (__builtin_mul_overflow(nonzero, static_cast<uint64_t>(std::max<int64_t>(d, 1)), &nonzero) ||
        nonzero > kMaxSize) {
      at.fail("shape " + shape_text(shape) + ": the product of its non-zero dimensions is over " +
              "2^63 - 1");
    }
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(empty ? 0 : nonzero, safetensors_item_size(dtype), &bytes) ||
      bytes > kMaxSize) {
    at.fail("shape " + shape_text(shape) + " of " + safetensors_dtype_name(dtype) +
            " is over 2^63 - 1 bytes");
  }
  return bytes;
}

std::string range_text(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

void parse_offsets(const json& v, uint64_t bytes, uint64_t data_bytes, Entry& e,
                   const TensorContext& at) {
  if (!v.is_array() || v.size() != 2) {
    at.fail("data_offsets must be [begin, end], found " +
            (v.is_array() ? "an array of " + std::to_string(v.size()) + " values" : describe_json(v)));
  }
  uint64_t* const ends[2] = {&e.begin, &e.end};
  for (size_t i = 0; i < 2; ++i) {
    if (!as_count(v[i], *ends[i])) {
      at.fail("data_offsets[" + std::to_string(i) + "] must be a non-negative integer, found " +
              describe_json(v[i]));
    }
  }
  const std::string offsets = "data_offsets " + range_text(e.begin, e.end);
  if (e.begin > e.end) at.fail(offsets + ": begin is after end");
  if (e.end - e.begin != bytes) {
    at.fail(offsets + " hold " + std::to_string(e.end - e.begin) + " bytes, but shape " +
            shape_text(e.shape) + " of " + safetensors_dtype_name(e.dtype) + " needs " +
            std::to_string(bytes));
  }
  if (e.end > data_bytes) {
    at.fail(offsets + " end beyond the data region, which holds " + std::to_string(data_bytes) +
            " bytes");
  }
}

Entry parse_entry(const std::string& name, const json& v, uint64_t data_bytes,
                  const fs::path& file) {
  const TensorContext at{file, name};
  if (!v.is_object()) {
    at.fail("expected an object {\"dtype\", \"shape\", \"data_offsets\"}, found " + describe_json(v));
  }
  static const std::vector<std::string> kKeys = {"dtype", "shape", "data_offsets"};
  for (const auto& [key, value] : v.items()) {
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      at.fail("unexpected key " + quoted_excerpt(key) + did_you_mean(key, kKeys) +
              " (an entry has exactly dtype, shape and data_offsets)");
    }
  }
  for (const auto& key : kKeys) {
    if (!v.contains(key)) {
      at.fail("no \"" + key + "\" (an entry has dtype, shape and data_offsets)");
    }
  }
  Entry e;
  e.name = name;
  e.dtype = parse_dtype(v.at("dtype"), at);
  e.shape = parse_shape(v.at("shape"), at);
  parse_offsets(v.at("data_offsets"), byte_size(e.shape, e.dtype, at), data_bytes, e, at);
  return e;
}

std::map<std::string, std::string> parse_metadata(const json& v, const fs::path& file) {
  if (!v.is_object()) {
    refuse(file, "\"__metadata__\" must be an object of strings, found " + describe_json(v));
  }
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : v.items()) {
    if (!value.is_string()) {
      refuse(file, "\"__metadata__\" entry " + quoted_excerpt(key) + " must be a string, found " +
                       describe_json(value));
    }
    out.emplace(key, value.get<std::string>());
  }
  return out;
}

// The reference's coverage rule (see the top of this file): sorted by offsets, the tensors tile
// the data region [0, data_bytes) exactly.
void check_coverage(std::vector<Entry>& entries, uint64_t data_bytes, const fs::path& file) {
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  const Entry* previous = nullptr;
  for (const Entry& e : entries) {
    const std::string what =
        "tensor " + quoted_excerpt(e.name) + " (data_offsets " + range_text(e.begin, e.end) + ")";
    if (e.begin < at) {
      refuse(file, what + " overlaps tensor " + quoted_excerpt(previous->name) + " (data_offsets " +
                       range_text(previous->begin, previous->end) + ")");
    }
    if (e.begin > at) {
      refuse(file,
             "data bytes [" + std::to_string(at) + ", " + std::to_string(e.begin) + ") before " +
                 what +
                 " belong to no tensor; the tensors must cover the data region without holes");
    }
    at = e.end;
    previous = &e;
  }
  if (at != data_bytes) {
    refuse(file, "the data region holds " + std::to_string(data_bytes) +
                     " bytes but the tensors end at " + std::to_string(at) +
                     "; the tensors must cover it exactly, with no trailing bytes");
  }
}

// Maps the whole regular file read-only; its size is at least 8 bytes (checked before mapping:
// mmap refuses an empty file, and 8 bytes are the header length).
std::pair<const std::byte*, size_t> map_file(const fs::path& file) {
  const int fd = open_regular_file(file, "safetensors file");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error("cannot stat " + file.string() + ": " + std::strerror(err));
  }
  const auto size = static_cast<size_t>(st.st_size);
  if (size < 8) {
    ::close(fd);
    refuse(file,
           std::to_string(size) +
               " bytes, too small for a safetensors file (its header length alone is 8 bytes)");
  }
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping keeps the file open
  if (p == MAP_FAILED) {
    throw std::runtime_error("cannot map " + file.string() + ": " + std::strerror(err));
  }
  return {static_cast<const std::byte*>(p), size};
}

// The checked entries in data-offset order, the metadata, and where the data region starts.
struct Header {
  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;
  size_t data_start = 0;
};

Header parse_header(const std::byte* base, size_t file_bytes, const fs::path& file) {
  uint64_t n = 0;
  std::memcpy(&n, base, 8);  // little-endian, as the host (see to_float32)
  if (n > kMaxHeaderBytes) {
    refuse(file, "header length " + std::to_string(n) +
                     " is over the format's limit of 100,000,000 "
                     "bytes: not a safetensors file, or a corrupt one");
  }
  if (n > file_bytes - 8) {
    refuse(file, "header length " + std::to_string(n) + " runs past the end of the file (" +
                     std::to_string(file_bytes) + " bytes): truncated or not a safetensors file");
  }
  const std::string_view text(reinterpret_cast<const char*>(base + 8), n);
  const json j = parse_json_input(text, file, "the header", JsonLimits{2});
  if (!j.is_object()) refuse(file, "the header must be a JSON object, found " + describe_json(j));
  const uint64_t data_bytes = file_bytes - 8 - n;
  Header h;
  h.data_start = 8 + n;
  for (const auto& [name, value] : j.items()) {
    if (name == "__metadata__") {
      h.metadata = parse_metadata(value, file);
    } else {
      h.entries.push_back(parse_entry(name, value, data_bytes, file));
    }
  }
  check_coverage(h.entries, data_bytes, file);
  return h;
}

float float_from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// IEEE 754 binary16 -> binary32, exact: every half is a float.
float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa x 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return float_from_bits(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  return float_from_bits(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

}  // namespace

const char* safetensors_dtype_name(SafetensorsDtype dtype) {
  for (const auto& [name, d] : dtype_names()) {
    if (d == dtype) return name.c_str();
  }
  return "?";
}

size_t safetensors_item_size(SafetensorsDtype dtype) {
  using D = SafetensorsDtype;
  switch (dtype) {
    case D::F64: case D::C64: case D::I64: case D::U64: return 8;
    case D::F32: case D::I32: case D::U32: return 4;
    case D::F16: case D::BF16: case D::I16: case D::U16: return 2;
    case D::I8:
    case D::U8:
    case D::BOOL:
    case D::F8_E5M2:
    case D::F8_E4M3:
    case D::F8_E8M0:
      return 1;
  }
  return 1;
}

bool is_weight_dtype(SafetensorsDtype dtype) {
  return dtype == SafetensorsDtype::F32 || dtype == SafetensorsDtype::F16 ||
         dtype == SafetensorsDtype::BF16;
}

void SafetensorsFile::release(const SafetensorsTensor& t) const {
  if (t.bytes == 0) return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(t.data), end = begin + t.bytes;
  const uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
  // Advice only: a failure leaves the pages resident, which costs memory and nothing else.
  if (first < last) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

void SafetensorsFile::Unmap::operator()(const std::byte* base) const {
  ::munmap(const_cast<std::byte*>(base), bytes);
}

SafetensorsFile SafetensorsFile::open(const fs::path& file) {
  SafetensorsFile f;
  f.path_ = file;
  const auto [base, size] = map_file(file);
  f.mapping_ = std::unique_ptr<const std::byte, Unmap>(base, Unmap{size});
  Header h = parse_header(base, size, file);
  const std::byte* data = base + h.data_start;
  for (Entry& e : h.entries) {
    f.by_name_.emplace(e.name, f.tensors_.size());
    const size_t bytes = e.end - e.begin;
    f.tensors_.push_back(
        {std::move(e.name), e.dtype, std::move(e.shape), bytes ? data + e.begin : nullptr, bytes});
  }
  f.metadata_ = std::move(h.metadata);
  return f;
}

const SafetensorsTensor* SafetensorsFile::find(std::string_view name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

void to_float32(const SafetensorsTensor& t, float* out) {
  if (!is_weight_dtype(t.dtype)) {
    throw std::invalid_argument("tensor " + t.name + ": dtype " + safetensors_dtype_name(t.dtype) +
                                " is not read: only F32, F16 and BF16 weights are read");
  }
  if (t.bytes == 0) return;  // data may be null
  const size_t n = t.bytes / safetensors_item_size(t.dtype);
  uint16_t h = 0;
  switch (t.dtype) {
    case SafetensorsDtype::F32: std::memcpy(out, t.data, n * 4); return;
    case SafetensorsDtype::BF16:  // the top 16 bits of an F32
      for (size_t i = 0; i < n; ++i) {
        std::memcpy(&h, t.data + 2 * i, 2);
        out[i] = float_from_bits(static_cast<uint32_t>(h) << 16);
      }
      return;
    case SafetensorsDtype::F16:
      for (size_t i = 0; i < n; ++i) {
        std::memcpy(&h, t.data + 2 * i, 2);
        out[i] = half_to_float(h);
      }
      return;
    default:
      return;
  }
}

namespace {

// A shard named by the index must be a file beside it: a path could reach any file on the machine.
// '\\' is refused as well: an index written on Windows would mean a sub-folder by it.
bool plain_file_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".." &&
         s.find_first_of(std::string("/\\\0", 3)) == std::string::npos;
}

}  // namespace

std::map<std::string, std::string> read_safetensors_index(const fs::path& index_json) {
  const std::string text = read_regular_file(index_json, "safetensors index");
  // "metadata" is free-form (total_size, ...): bounded like any JSON a user hands attnbench.
  const json j = parse_json_input(text, index_json, "the index");
  if (!j.is_object()) {
    refuse(index_json, "the index must be a JSON object, found " + describe_json(j));
  }
  const auto map = j.find("weight_map");
  if (map == j.end()) {
    refuse(index_json, "the index has no \"weight_map\" (tensor name -> shard file)");
  }
  if (!map->is_object()) {
    refuse(index_json,
           "\"weight_map\" must be an object of tensor name -> shard file name, found " +
               describe_json(*map));
  }
  std::map<std::string, std::string> out;
  for (const auto& [name, shard] : map->items()) {
    const std::string where = "\"weight_map\" entry " + quoted_excerpt(name);
    if (!shard.is_string()) {
      refuse(index_json, where + " must be a shard file name, found " + describe_json(shard));
    }
    const auto& s = shard.get_ref<const std::string&>();
    if (!plain_file_name(s)) {
      refuse(index_json,
             where + " names " + quoted_excerpt(s) +
                 ", not a file name in the index's folder (no '/' or '\\', not '.' or '..')");
    }
    out.emplace(name, s);
  }
  return out;
}

}  // namespace attnbench::data
