// A minimal reader of TensorBoard event files for the tests (core/common/tensorboard_events.h has
// the format): the TFRecord framing with both masked CRCs checked, and the Event fields attnbench
// writes. Anything it does not expect throws, so a test fails loudly.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/tensorboard_events.h"

namespace attnbench::testing {

struct TbEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;
  std::string tag;          // with a scalar
  float value = 0;          // with a scalar
  bool has_scalar = false;
  int session_status = 0;   // 1 = START
};

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Protobuf wire format, just enough for the fields written.
struct WireReader {
  std::string_view s;
  size_t at = 0;
  bool done() const { return at >= s.size(); }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (at >= s.size()) throw std::runtime_error("truncated varint");
      const auto b = static_cast<unsigned char>(s[at++]);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    throw std::runtime_error("varint too long");
  }
  uint64_t fixed(int bytes) {
    if (at + bytes > s.size()) throw std::runtime_error("truncated fixed field");
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) {
      v |= static_cast<uint64_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
    }
    at += bytes;
    return v;
  }
  std::string_view bytes() {
    const uint64_t n = varint();
    if (at + n > s.size()) throw std::runtime_error("truncated length-delimited field");
    std::string_view v = s.substr(at, n);
    at += n;
    return v;
  }
};

inline void parse_summary(std::string_view bytes, TbEvent& e) {
  WireReader summary{bytes};
  if (summary.varint() != (1 << 3 | 2)) throw std::runtime_error("Summary: expected field 1");
  WireReader value{summary.bytes()};
  if (!summary.done()) throw std::runtime_error("Summary: more than one value");
  while (!value.done()) {
    const uint64_t key = value.varint();
    if (key == (1 << 3 | 2)) {
      e.tag = std::string(value.bytes());
    } else if (key == (2 << 3 | 5)) {
      const auto bits = static_cast<uint32_t>(value.fixed(4));
      std::memcpy(&e.value, &bits, 4);
      e.has_scalar = true;
    } else {
      throw std::runtime_error("Summary.Value: unexpected key " + std::to_string(key));
    }
  }
}

inline TbEvent parse_event(std::string_view bytes) {
  TbEvent e;
  WireReader r{bytes};
  while (!r.done()) {
    const uint64_t key = r.varint();
    if (key == (1 << 3 | 1)) {
      const uint64_t bits = r.fixed(8);
      std::memcpy(&e.wall_time, &bits, 8);
    } else if (key == (2 << 3 | 0)) {
      e.step = static_cast<int64_t>(r.varint());
    } else if (key == (3 << 3 | 2)) {
      e.file_version = std::string(r.bytes());
    } else if (key == (5 << 3 | 2)) {
      parse_summary(r.bytes(), e);
    } else if (key == (7 << 3 | 2)) {
      WireReader log{r.bytes()};
      if (log.varint() != (1 << 3 | 0)) throw std::runtime_error("SessionLog: expected status");
      e.session_status = static_cast<int>(log.varint());
    } else {
      throw std::runtime_error("Event: unexpected key " + std::to_string(key));
    }
  }
  return e;
}

// Every record of the file; both CRCs of each are checked.
inline std::vector<TbEvent> read_events(const std::filesystem::path& path) {
  const std::string file = read_bytes(path);
  std::vector<TbEvent> events;
  WireReader r{file};
  while (!r.done()) {
    if (r.at + 12 > file.size()) throw std::runtime_error(path.string() + ": truncated header");
    const std::string_view header(file.data() + r.at, 8);
    const uint64_t length = r.fixed(8);
    if (r.fixed(4) != tensorboard::masked_crc32c(header)) {
      throw std::runtime_error(path.string() + ": bad length CRC");
    }
    if (r.at + length + 4 > file.size()) {
      throw std::runtime_error(path.string() + ": truncated record");
    }
    const std::string_view data(file.data() + r.at, length);
    r.at += length;
    if (r.fixed(4) != tensorboard::masked_crc32c(data)) {
      throw std::runtime_error(path.string() + ": bad data CRC");
    }
    events.push_back(parse_event(data));
  }
  return events;
}

// The event files directly in `dir`, in name order (the order TensorBoard reads them in).
inline std::vector<std::filesystem::path> event_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("events.out.tfevents.", 0) == 0) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace attnbench::testing
