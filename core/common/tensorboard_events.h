// TensorBoard event files, written by hand (docs/training.md, "TensorBoard"): the TFRecord framing
// and the three protobuf messages a scalar needs, encoded field by field, so that neither protobuf
// nor TensorFlow (neither in our Debian dependency set) is needed for about 150 lines.
//
// A file is a sequence of records (TFRecord, tensorflow/core/lib/io/record_writer.cc):
//   uint64 LE length | uint32 LE masked CRC32C of those 8 bytes | data | uint32 LE masked CRC32C
// where each record's data is one serialized Event (tensorboard/compat/proto/event.proto), the
// first record of every file being the Event with file_version "brain.Event:2".
#pragma once
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace attnbench::tensorboard {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, init and final xor 0xFFFFFFFF), the
// checksum TFRecord uses; crc32c("123456789") = 0xE3069283.
uint32_t crc32c(std::string_view bytes);
// TFRecord's masked form, ((crc >> 15) | (crc << 17)) + 0xa282ead8, so that a CRC of data that
// itself holds CRCs does not degenerate (tensorflow/core/lib/hash/crc32c.h, Mask).
uint32_t masked_crc32c(std::string_view bytes);

// Unix seconds now, with the sub-second part (an Event's wall_time).
double unix_now();

// A new file name in `dir` as TensorBoard's own EventFileWriter makes it:
//   events.out.tfevents.<unix seconds, %010d>.<hostname>.<pid>.<counter of this process>
// TensorBoard reads a folder's event files in name order, so the seconds are moved past those of
// any event file already in `dir` (a resumed run's file must come after the one it continues,
// even within the same second).
std::filesystem::path new_event_file(const std::filesystem::path& dir, double now);

// Writes one event file. Every failure is a std::runtime_error naming the file.
class EventFileWriter {
 public:
  EventFileWriter() = default;
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  // Creates (or truncates) `file` and writes the file_version event at `wall_time`.
  void open(const std::filesystem::path& file, double wall_time);
  bool is_open() const { return file_ != nullptr; }
  const std::filesystem::path& path() const { return path_; }

  // One Summary.Value {tag, simple_value}; simple_value is a float, so `value` is rounded to it.
  void add_scalar(const std::string& tag, int64_t step, double value, double wall_time);
  // A SessionLog START: on reading it, TensorBoard drops every event of the folder with a step
  // at or after `step` (event_accumulator.py, _CheckForRestartAndMaybePurge), i.e. what a run
  // logged before it crashed and is about to log again after resuming.
  void add_session_start(int64_t step, double wall_time);
  // Hands the buffered records to the operating system, so a running TensorBoard sees them.
  void flush();
  void close();

 private:
  void write_event(const std::string& event);
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

}  // namespace attnbench::tensorboard
