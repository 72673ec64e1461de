#include "core/common/tensorboard_events.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace attnbench::tensorboard {

namespace fs = std::filesystem;

namespace {

// The byte-at-a-time table of the reflected polynomial (RFC 3720, appendix B.4).
std::array<uint32_t, 256> crc32c_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}

// Protobuf wire format (protobuf.dev/programming-guides/encoding): a field is its key
// (field number << 3 | wire type) then its value; wire types 0 varint, 1 fixed64, 2 length-
// delimited, 5 fixed32; integers little-endian. Fields are written in field-number order and a
// proto3 field without presence is left out at its default value (0, empty), as protobuf does, so
// that our bytes are the library's.
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_key(std::string& out, uint32_t field, WireType type) {
  put_varint(out, field << 3 | type);
}

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

void put_bytes(std::string& out, uint32_t field, std::string_view bytes) {
  put_key(out, field, kLength);
  put_varint(out, bytes.size());
  out.append(bytes);
}

// tensorflow.Event {double wall_time = 1; int64 step = 2; oneof what {string file_version = 3;
// Summary summary = 5; SessionLog session_log = 7; ...}} (6 is the deprecated log_message):
// `what` is one of those fields already encoded. A negative step is a ten-byte varint (int64).
std::string event(double wall_time, int64_t step, const std::string& what) {
  std::string out;
  uint64_t bits;
  std::memcpy(&bits, &wall_time, sizeof bits);
  if (bits != 0) {  // proto3 leaves out exactly +0.0
    put_key(out, 1, kFixed64);
    put_le(out, bits, 8);
  }
  if (step != 0) {
    put_key(out, 2, kVarint);
    put_varint(out, static_cast<uint64_t>(step));
  }
  return out + what;
}

// Summary {repeated Value value = 1}, Value {string tag = 1; oneof value {float simple_value = 2;
// ...}}: simple_value is in a oneof, so it is written even when 0.
std::string scalar_summary(const std::string& tag, float value) {
  std::string v;
  if (!tag.empty()) put_bytes(v, 1, tag);
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  put_key(v, 2, kFixed32);
  put_le(v, bits, 4);
  std::string summary;
  put_bytes(summary, 1, v);
  std::string what;
  put_bytes(what, 5, summary);
  return what;
}

std::atomic<int> g_file_counter{0};  // EventFileWriter's _global_uid: one count per process

std::string hostname() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "localhost";
  return name.data();
}

// The seconds field of an event file name of this layout, or -1.
long long file_seconds(const std::string& name) {
  const std::string prefix = "events.out.tfevents.";
  if (name.compare(0, prefix.size(), prefix) != 0) return -1;
  const size_t dot = name.find('.', prefix.size());
  const std::string digits = name.substr(prefix.size(), dot - prefix.size());
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(digits);
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = crc32c_table();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(std::string_view bytes) {
  const uint32_t c = crc32c(bytes);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

fs::path new_event_file(const fs::path& dir, double now) {
  auto seconds = static_cast<long long>(std::floor(now));
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const long long taken = file_seconds(entry.path().filename().string());
    if (taken >= seconds) seconds = taken + 1;
  }
  return dir / fmt::format("events.out.tfevents.{:010d}.{}.{}.{}", seconds, hostname(), getpid(),
                           g_file_counter++);
}

EventFileWriter::~EventFileWriter() {
  if (file_) std::fclose(file_);
}

void EventFileWriter::open(const fs::path& file, double wall_time) {
  close();
  path_ = file;
  file_ = std::fopen(file.c_str(), "wb");
  if (!file_) {
    throw std::runtime_error("cannot create TensorBoard event file " + file.string() + ": " +
                             std::strerror(errno));
  }
  std::string what;
  put_bytes(what, 3, "brain.Event:2");
  write_event(event(wall_time, 0, what));
}

void EventFileWriter::add_scalar(const std::string& tag, int64_t step, double value,
                                 double wall_time) {
  write_event(event(wall_time, step, scalar_summary(tag, static_cast<float>(value))));
}

void EventFileWriter::add_session_start(int64_t step, double wall_time) {
  std::string session_log;  // SessionLog {SessionStatus status = 1}, START = 1
  put_key(session_log, 1, kVarint);
  put_varint(session_log, 1);
  std::string what;
  put_bytes(what, 7, session_log);
  write_event(event(wall_time, step, what));
}

void EventFileWriter::write_event(const std::string& data) {
  if (!file_) throw std::logic_error("TensorBoard event file written before it was opened");
  std::string record;
  put_le(record, data.size(), 8);
  put_le(record, masked_crc32c(record), 4);
  record += data;
  put_le(record, masked_crc32c(data), 4);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size()) {
    throw std::runtime_error("cannot write TensorBoard event file " + path_.string() + ": " +
                             std::strerror(errno));
  }
}

void EventFileWriter::flush() {
  if (file_ && std::fflush(file_) != 0) {
    throw std::runtime_error("cannot write TensorBoard event file " + path_.string() + ": " +
                             std::strerror(errno));
  }
}

void EventFileWriter::close() {
  if (!file_) return;
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) {
    throw std::runtime_error("cannot write TensorBoard event file " + path_.string() + ": " +
                             std::strerror(errno));
  }
}

}  // namespace attnbench::tensorboard
