// The safetensors reader (core/data/safetensors.h): files built byte by byte here (core cannot use
// evals' writer), read back with their values; every malformed header refused with the file and
// the fault named; F16 and BF16 widened exactly; the sharded model index.
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/data/safetensors.h"

namespace {

namespace fs = std::filesystem;
using attnbench::InputError;
using attnbench::UsageError;
using attnbench::data::read_safetensors_index;
using attnbench::data::SafetensorsDtype;
using attnbench::data::SafetensorsFile;
using attnbench::data::SafetensorsTensor;
using attnbench::data::to_float32;

struct Scratch {
  fs::path dir;
  Scratch() {
    static int n = 0;
    dir = fs::temp_directory_path() /
          ("ab_safetensors_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
};

// A safetensors file's bytes: the header's length (8 bytes, little-endian), the header, the data.
std::string safetensors_bytes(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  for (size_t i = 0; i < 8; ++i) out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

fs::path write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

template <typename T>
std::string raw(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// The InputError's message of opening `path`; fails the test when the file opens.
std::string refusal(const fs::path& path) {
  try {
    SafetensorsFile::open(path);
  } catch (const InputError& e) {
    return e.what();
  }
  CATCH_FAIL("opened " << path << ", expected an InputError");
  return "";
}

std::vector<float> as_floats(const SafetensorsTensor& t, size_t n) {
  std::vector<float> out(n, -7.0f);
  to_float32(t, out.data());
  return out;
}

}  // namespace

CATCH_TEST_CASE("safetensors: a valid file reads back every tensor, in data-offset order") {
  Scratch s;
  // Entries listed out of offset order, as the format allows; "z" has no elements.
  const std::string header = R"({"b":{"dtype":"BF16","shape":[2,3],"data_offsets":[8,20]},)"
                             R"("__metadata__":{"format":"pt","note":"x"},)"
                             R"("z":{"dtype":"F32","shape":[0,4],"data_offsets":[20,20]},)"
                             R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("c":{"dtype":"F16","shape":[],"data_offsets":[20,22]}})";
  const std::vector<uint16_t> bf16 = {0x3f80, 0xc020, 0x0000, 0x8000, 0x4000, 0x3e80};
  const std::vector<uint16_t> f16 = {0x4100};  // 2.5
  const fs::path p = write_file(
      s.dir / "model.safetensors",
      safetensors_bytes(header, raw(std::vector<float>{1.0f, -2.5f}) + raw(bf16) + raw(f16)));
  const SafetensorsFile f = SafetensorsFile::open(p);
  CATCH_CHECK(f.path() == p);
  std::vector<std::string> names;
  for (const auto& t : f.tensors()) names.push_back(t.name);
  CATCH_CHECK(names == std::vector<std::string>{"a", "b", "z", "c"});
  CATCH_CHECK(f.metadata() == std::map<std::string, std::string>{{"format", "pt"}, {"note", "x"}});

  const SafetensorsTensor* b = f.find("b");
  CATCH_REQUIRE(b != nullptr);
  CATCH_CHECK(b->dtype == SafetensorsDtype::BF16);
  CATCH_CHECK(b->shape == std::vector<int64_t>{2, 3});
  CATCH_CHECK(b->bytes == 12);
  CATCH_CHECK(as_floats(*b, 6) == std::vector<float>{1.0f, -2.5f, 0.0f, -0.0f, 2.0f, 0.25f});
  CATCH_REQUIRE(f.find("a") != nullptr);
  CATCH_CHECK(as_floats(*f.find("a"), 2) == std::vector<float>{1.0f, -2.5f});
  const SafetensorsTensor* c = f.find("c");
  CATCH_REQUIRE(c != nullptr);
  CATCH_CHECK(c->shape.empty());  // a scalar: one element
  CATCH_CHECK(as_floats(*c, 1) == std::vector<float>{2.5f});

  const SafetensorsTensor* z = f.find("z");
  CATCH_REQUIRE(z != nullptr);
  CATCH_CHECK(z->shape == std::vector<int64_t>{0, 4});
  CATCH_CHECK(z->bytes == 0);
  CATCH_CHECK(z->data == nullptr);
  CATCH_CHECK(as_floats(*z, 1) == std::vector<float>{-7.0f});  // nothing written
  CATCH_CHECK(f.find("__metadata__") == nullptr);
  CATCH_CHECK(f.find("d") == nullptr);
}

CATCH_TEST_CASE("safetensors: views stay valid when the file object moves") {
  Scratch s;
  const fs::path p =
      write_file(s.dir / "m.safetensors",
                 safetensors_bytes(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})",
                                   raw(std::vector<float>{1.5f, 2.5f, 3.5f})));
  SafetensorsFile first = SafetensorsFile::open(p);
  const std::byte* data = first.find("w")->data;
  SafetensorsFile second = std::move(first);
  SafetensorsFile third = SafetensorsFile::open(p);
  third = std::move(second);  // unmaps third's own mapping, keeps second's
  CATCH_REQUIRE(third.find("w") != nullptr);
  CATCH_CHECK(third.find("w")->data == data);
  CATCH_CHECK(as_floats(*third.find("w"), 3) == std::vector<float>{1.5f, 2.5f, 3.5f});
}

CATCH_TEST_CASE("safetensors: a released tensor reads the same again, and its neighbours too") {
  // release() drops resident pages (MADV_DONTNEED on a private read-only mapping): the data must
  // come back from the file. Three tensors of 3 pages' worth each, so the middle one holds whole
  // pages and shares its first and last with its neighbours.
  Scratch s;
  const int64_t n = 3 * ::sysconf(_SC_PAGESIZE) / 4;
  std::vector<float> values(3 * n);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f - 7.0f;
  const auto entry = [&](const char* name, int64_t k) {
    return "\"" + std::string(name) + "\":{\"dtype\":\"F32\",\"shape\":[" + std::to_string(n) +
           "],\"data_offsets\":[" + std::to_string(4 * k * n) + "," + std::to_string(4 * (k + 1) * n) +
           "]}";
  };
  const std::string header = "{" + entry("a", 0) + "," + entry("b", 1) + "," + entry("c", 2) + "}  ";
  const SafetensorsFile f =
      SafetensorsFile::open(write_file(s.dir / "m.safetensors", safetensors_bytes(header, raw(values))));
  const auto expected = [&](int64_t k) {
    return std::vector<float>(values.begin() + k * n, values.begin() + (k + 1) * n);
  };
  for (const char* name : {"b", "a", "c"}) {
    CATCH_INFO("released " << name);
    f.release(*f.find(name));
    for (int64_t k = 0; k < 3; ++k) {
      const std::string t(1, static_cast<char>('a' + k));
      CATCH_CHECK(as_floats(*f.find(t), static_cast<size_t>(n)) == expected(k));
    }
  }
}

CATCH_TEST_CASE("safetensors: an empty header, header padding and unaligned data are read") {
  Scratch s;
  const SafetensorsFile empty =
      SafetensorsFile::open(write_file(s.dir / "e.safetensors", safetensors_bytes("{}", "")));
  CATCH_CHECK(empty.tensors().empty());
  CATCH_CHECK(empty.metadata().empty());
  // Padded with spaces as writers do; then a header of odd length leaves the F32 data unaligned.
  const std::string entry = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  for (const std::string& header : {entry + "      ", entry + " "}) {
    CATCH_INFO("header length " << header.size());
    const SafetensorsFile f = SafetensorsFile::open(write_file(
        s.dir / "w.safetensors", safetensors_bytes(header, raw(std::vector<float>{-1.0f, 3e38f}))));
    CATCH_CHECK(as_floats(f.tensors().at(0), 2) == std::vector<float>{-1.0f, 3e38f});
  }
}

CATCH_TEST_CASE("safetensors: a file with tensors of other dtypes opens, and only weights widen") {
  // GPT-NeoX checkpoints hold U8 causal masks and F32 scalars beside their F16 weights.
  Scratch s;
  const std::string header =
      R"({"mask":{"dtype":"U8","shape":[2,2],"data_offsets":[0,4]},)"
      R"("flag":{"dtype":"BOOL","shape":[4],"data_offsets":[4,8]},)"
      R"("step":{"dtype":"I64","shape":[],"data_offsets":[8,16]},)"
      R"("w":{"dtype":"F64","shape":[1],"data_offsets":[16,24]}})";
  const auto f = SafetensorsFile::open(
      write_file(s.dir / "m.safetensors", safetensors_bytes(header, std::string(24, '\1'))));
  CATCH_REQUIRE(f.tensors().size() == 4);
  const SafetensorsTensor* mask = f.find("mask");
  CATCH_REQUIRE(mask != nullptr);
  CATCH_CHECK(mask->dtype == SafetensorsDtype::U8);
  CATCH_CHECK(mask->bytes == 4);
  CATCH_CHECK(f.find("step")->bytes == 8);
  CATCH_CHECK(!attnbench::data::is_weight_dtype(mask->dtype));
  float out[8];
  CATCH_CHECK_THROWS_WITH(to_float32(*mask, out),
                          Catch::Contains("tensor mask: dtype U8 is not read"));
  CATCH_CHECK_THROWS_WITH(to_float32(*f.find("w"), out), Catch::Contains("dtype F64"));
}

CATCH_TEST_CASE("safetensors: F16 widens exactly, every one of the 65536 values") {
  std::vector<uint16_t> halves(65536);
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(i);
  SafetensorsTensor t{"h", SafetensorsDtype::F16, {65536}, nullptr, 2 * halves.size()};
  t.data = reinterpret_cast<const std::byte*>(halves.data());
  std::vector<float> out(halves.size());
  to_float32(t, out.data());
  for (uint32_t h = 0; h < 65536; ++h) {
    const int sign = h >> 15, exponent = (h >> 10) & 31, mantissa = h & 1023;
    const double magnitude = exponent == 0 ? std::ldexp(mantissa, -24)  // the binary16 definition
                                           : std::ldexp(1024 + mantissa, exponent - 25);
    const float f = out[h];
    if (exponent == 31 && mantissa == 0) {
      CATCH_REQUIRE((std::isinf(f) && std::signbit(f) == (sign == 1)));
    } else if (exponent == 31) {
      CATCH_REQUIRE(std::isnan(f));
    } else {
      CATCH_REQUIRE(f == (sign ? -magnitude : magnitude));
      CATCH_REQUIRE(std::signbit(f) == (sign == 1));
    }
  }
  // Landmarks of binary16, spelled out.
  CATCH_CHECK(out[0x3c00] == 1.0f);
  CATCH_CHECK(out[0xc100] == -2.5f);
  CATCH_CHECK(out[0x7bff] == 65504.0f);                      // the largest finite half
  CATCH_CHECK(out[0x0001] == std::ldexp(1.0f, -24));         // the smallest subnormal
  CATCH_CHECK(out[0x03ff] == 1023 * std::ldexp(1.0f, -24));  // the largest subnormal
  CATCH_CHECK(out[0x0400] == std::ldexp(1.0f, -14));         // the smallest normal
}

CATCH_TEST_CASE("safetensors: BF16 widens to the F32 with the same top half") {
  const std::vector<uint16_t> bf16 = {0x3f80, 0xc020, 0x4780, 0x0001,
                                      0x7f80, 0xff80, 0x7fc0, 0x7f7f};
  SafetensorsTensor t{"b", SafetensorsDtype::BF16, {8}, nullptr, 16};
  t.data = reinterpret_cast<const std::byte*>(bf16.data());
  const std::vector<float> out = as_floats(t, 8);
  CATCH_CHECK(out[0] == 1.0f);
  CATCH_CHECK(out[1] == -2.5f);
  CATCH_CHECK(out[2] == 65536.0f);                // 65504 is not a bfloat16; the nearest is 65536
  CATCH_CHECK(out[3] == std::ldexp(1.0f, -133));  // the smallest subnormal
  CATCH_CHECK((std::isinf(out[4]) && out[4] > 0));
  CATCH_CHECK((std::isinf(out[5]) && out[5] < 0));
  CATCH_CHECK(std::isnan(out[6]));
  CATCH_CHECK(out[7] == std::ldexp(255.0f, 120));  // 0x7f7f: the largest finite bfloat16
}

namespace {

struct Refusal {
  const char* what;
  std::string header;
  std::string data;
  std::string expected;  // in the message, after the file's path
};

const std::string k8Bytes(8, '\0');

std::string entry(const std::string& name, const std::string& body) {
  return "\"" + name + "\":{" + body + "}";
}

// A header with the one entry "w".
std::string only_w(const std::string& body) { return "{" + entry("w", body) + "}"; }

std::vector<Refusal> header_refusals() {
  const std::string w = R"("dtype":"F32","shape":[2],"data_offsets":[0,8])";
  return {
      {"not JSON", "{\"w\":", k8Bytes, "the header is not valid JSON"},
      {"not an object", "[1,2]", "", "the header must be a JSON object, found an array"},
      {"number overflow", R"({"w":{"dtype":"F32","shape":[1e999],"data_offsets":[0,0]}})", "",
       "the header is not valid JSON: number overflow"},
      {"entry not an object", R"({"w":3})", "", "tensor 'w': expected an object"},
      {"missing key", only_w(R"("dtype":"F32","shape":[2])"), k8Bytes,
       "tensor 'w': no \"data_offsets\""},
      {"extra key", only_w(w + R"(,"offset":1)"), k8Bytes, "tensor 'w': unexpected key 'offset'"},
      {"dtype not a string", only_w(R"("dtype":4,"shape":[2],"data_offsets":[0,8])"), k8Bytes,
       "tensor 'w': dtype must be a string such as \"F32\", found the number 4"},
      {"F4", only_w(R"("dtype":"F4","shape":[16],"data_offsets":[0,8])"), k8Bytes,
       "tensor 'w': dtype F4 is not read: its items are packed below a byte"},
      {"I64 of the wrong size", only_w(R"("dtype":"I64","shape":[2],"data_offsets":[0,8])"),
       k8Bytes, "tensor 'w'"},
      {"unknown dtype", only_w(R"("dtype":"F33","shape":[2],"data_offsets":[0,8])"), k8Bytes,
       "tensor 'w': unknown dtype 'F33' (did you mean 'F32'?)"},
      {"shape not an array", only_w(R"("dtype":"F32","shape":2,"data_offsets":[0,8])"), k8Bytes,
       "tensor 'w': shape must be an array of non-negative integers, found the number 2"},
      {"negative dimension", only_w(R"("dtype":"F32","shape":[-2],"data_offsets":[0,8])"), k8Bytes,
       "tensor 'w': shape[0] must be a non-negative integer below 2^63, found the "
       "number -2"},
      {"fractional dimension", only_w(R"("dtype":"F32","shape":[2.0],"data_offsets":[0,8])"),
       k8Bytes, "tensor 'w': shape[0] must be a non-negative integer"},
      {"nine dimensions",
       only_w(R"("dtype":"F32","shape":[1,1,1,1,1,1,1,1,2],"data_offsets":[0,8])"), k8Bytes,
       "tensor 'w': shape has 9 dimensions; at most 8 are read"},
      {"element count overflow",
       only_w(R"("dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8])"), k8Bytes,
       "tensor 'w': shape [4294967296, 4294967296]: the product of its non-zero "
       "dimensions is over 2^63 - 1"},
      {"zero does not hide an overflow",
       only_w(R"("dtype":"F32","shape":[0,4294967296,4294967296],"data_offsets":[0,0])"), "",
       "the product of its non-zero dimensions is over 2^63 - 1"},
      {"byte size overflow",
       only_w(R"("dtype":"F32","shape":[2305843009213693952],"data_offsets":[0,8])"), k8Bytes,
       "tensor 'w': shape [2305843009213693952] of F32 is over 2^63 - 1 bytes"},
      {"offsets not a pair", only_w(R"("dtype":"F32","shape":[2],"data_offsets":[0])"), k8Bytes,
       "tensor 'w': data_offsets must be [begin, end], found an array of 1 values"},
      {"offset not an integer", only_w(R"("dtype":"F32","shape":[2],"data_offsets":[0,"8"])"),
       k8Bytes, "tensor 'w': data_offsets[1] must be a non-negative integer, found the string '8'"},
      {"begin after end", only_w(R"("dtype":"F32","shape":[2],"data_offsets":[8,0])"), k8Bytes,
       "tensor 'w': data_offsets [8, 0]: begin is after end"},
      {"size mismatch", only_w(R"("dtype":"F32","shape":[3],"data_offsets":[0,8])"), k8Bytes,
       "tensor 'w': data_offsets [0, 8] hold 8 bytes, but shape [3] of F32 needs 12"},
      {"end beyond the data", only_w(w), std::string(4, '\0'),
       "tensor 'w': data_offsets [0, 8] end beyond the data region, which holds 4 bytes"},
      {"overlap",
       "{" + entry("a", w) + "," +
           entry("b", R"("dtype":"F32","shape":[2],"data_offsets":[4,12])") + "}",
       std::string(12, '\0'),
       "tensor 'b' (data_offsets [4, 12]) overlaps tensor 'a' (data_offsets [0, 8])"},
      {"hole",
       "{" + entry("a", w) + "," +
           entry("b", R"("dtype":"F32","shape":[2],"data_offsets":[12,20])") + "}",
       std::string(20, '\0'),
       "data bytes [8, 12) before tensor 'b' (data_offsets [12, 20]) belong to no tensor"},
      {"trailing bytes", only_w(w), std::string(12, '\0'),
       "the data region holds 12 bytes but the tensors end at 8"},
      {"metadata not an object", "{\"__metadata__\":\"pt\"}", "",
       "\"__metadata__\" must be an object of strings, found the string 'pt'"},
      {"metadata value not a string", "{\"__metadata__\":{\"step\":3}}", "",
       "\"__metadata__\" entry 'step' must be a string, found the number 3"},
      {"duplicate name", "{" + entry("w", w) + "," + entry("w", w) + "}", k8Bytes,
       "the header has the key 'w' twice; each key must appear once"},
      {"duplicate key in an entry", only_w(w + R"(,"dtype":"F64")"), k8Bytes,
       "the header has the key 'dtype' twice in 'w'"},
      {"nested too deep", only_w(R"("dtype":"F32","shape":[[2]],"data_offsets":[0,8])"), k8Bytes,
       "the header nests objects or arrays 4 deep, more than the 3 it can have"},
  };
}

}  // namespace

CATCH_TEST_CASE("safetensors: each malformed header is an InputError naming the file and fault") {
  Scratch s;
  for (const Refusal& r : header_refusals()) {
    CATCH_INFO(r.what);
    const fs::path p = write_file(s.dir / "bad.safetensors", safetensors_bytes(r.header, r.data));
    CATCH_CHECK_THAT(refusal(p),
                     Catch::StartsWith(p.string() + ": ") && Catch::Contains(r.expected));
  }
}

CATCH_TEST_CASE("safetensors: a short file or a bad header length is refused before parsing") {
  Scratch s;
  const fs::path p = s.dir / "bad.safetensors";
  write_file(p, std::string("\x02\0\0\0\0", 5));
  CATCH_CHECK_THAT(refusal(p), Catch::StartsWith(p.string() + ": 5 bytes, too small"));
  write_file(p, std::string("\xe8\x03\0\0\0\0\0\0", 8) + "{}");  // promises 1000 header bytes
  CATCH_CHECK_THAT(refusal(p),
                   Catch::Contains(p.string() + ": header length 1000 runs past the end "
                                                "of the file (10 bytes)"));
  write_file(p, std::string("\x01\xe1\xf5\x05\0\0\0\0", 8) + "{}");  // 100,000,001
  CATCH_CHECK_THAT(refusal(p), Catch::Contains(p.string() + ": header length 100000001 is over the "
                                                            "format's limit of 100,000,000 bytes"));
  write_file(p, std::string(8, '\xff'));
  CATCH_CHECK_THAT(refusal(p), Catch::Contains("header length 18446744073709551615 is over"));
}

CATCH_TEST_CASE("safetensors: a missing file or a folder is a UsageError naming it") {
  Scratch s;
  CATCH_CHECK_THROWS_WITH(
      SafetensorsFile::open(s.dir / "none.safetensors"),
      Catch::Contains("cannot open safetensors file") && Catch::Contains("none.safetensors"));
  CATCH_CHECK_THROWS_AS(SafetensorsFile::open(s.dir), UsageError);
  CATCH_CHECK_THROWS_WITH(SafetensorsFile::open(s.dir), Catch::Contains("is a folder"));
}

CATCH_TEST_CASE("safetensors index: the weight map, tensor name to shard file") {
  Scratch s;
  const fs::path p = write_file(s.dir / "model.safetensors.index.json", R"({
  "metadata": {"total_size": 24},
  "weight_map": {"lm_head.weight": "model-00002-of-00002.safetensors",
                 "model.embed_tokens.weight": "model-00001-of-00002.safetensors"}
})");
  CATCH_CHECK(read_safetensors_index(p) ==
              std::map<std::string, std::string>{
                  {"lm_head.weight", "model-00002-of-00002.safetensors"},
                  {"model.embed_tokens.weight", "model-00001-of-00002.safetensors"}});
}

CATCH_TEST_CASE("safetensors index: each malformed index is an error naming it and the key") {
  Scratch s;
  const fs::path p = s.dir / "model.safetensors.index.json";
  CATCH_CHECK_THROWS_WITH(read_safetensors_index(p),
                          Catch::Contains("cannot open safetensors index " + p.string()));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"weight_map\": {\n\"a\": }", "the index is not valid JSON: parse error at line 2"},
      {"[]", "the index must be a JSON object, found an array"},
      {R"({"metadata": {}})", "the index has no \"weight_map\""},
      {R"({"weight_map": ["a"]})",
       "\"weight_map\" must be an object of tensor name -> shard file "
       "name, found an array"},
      {R"({"weight_map": {"a": 1}})",
       "\"weight_map\" entry 'a' must be a shard file name, found "
       "the number 1"},
      {R"({"weight_map": {"a": "../m.safetensors"}})",
       "\"weight_map\" entry 'a' names "
       "'../m.safetensors', not a file name"},
      {R"({"weight_map": {"a": "/etc/passwd"}})", "entry 'a' names '/etc/passwd', not a file name"},
      {R"({"weight_map": {"a": ".."}})", "entry 'a' names '..', not a file name"},
      {R"({"weight_map": {"a": ""}})", "entry 'a' names '', not a file name"},
      {R"({"weight_map": {"a": "sub\\m.safetensors"}})", "not a file name"},
      {R"({"weight_map": {"a": "m.safetensors\u0000x"}})",  // the NUL shown, not ending the message
       "entry 'a' names 'm.safetensors\\x00x', not a file name"},
      {R"({"weight_map": {"a": "x", "a": "y"}})",
       "the index has the key 'a' twice in 'weight_map'"},
  };
  for (const auto& [text, expected] : cases) {
    CATCH_INFO(text);
    write_file(p, text);
    CATCH_CHECK_THROWS_AS(read_safetensors_index(p), InputError);
    CATCH_CHECK_THROWS_WITH(read_safetensors_index(p),
                            Catch::StartsWith(p.string() + ": ") && Catch::Contains(expected));
  }
}
