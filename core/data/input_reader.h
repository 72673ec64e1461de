// The documents of one `data prepare` input file, read as a stream (docs/data.md, "Inputs"):
//   *.txt                     the whole file is one document
//   *.jsonl, *.json           one JSON object per line, the text in a named field (blank lines skipped)
// each optionally compressed: *.gz (zlib; concatenated members allowed) or *.zst (libzstd; several
// frames allowed). JSON is not parsed here (workers parse lines in parallel, see prepare.cpp).
#pragma once
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace attnbench::data {

enum class InputFormat { kText, kJsonLines };
enum class Compression { kNone, kGzip, kZstd };

struct InputKind {
  InputFormat format;
  Compression compression;
  std::string name;  // "txt", "jsonl.gz", ...
};

// The kind of a file from its name; UsageError naming the file and the supported kinds otherwise.
InputKind input_kind(const std::filesystem::path& path);

// Decompressed bytes of a file, chunk by chunk, counting the (compressed) bytes consumed.
class ByteStream {
 public:
  ByteStream(const std::filesystem::path& path, Compression compression);
  ~ByteStream();
  ByteStream(const ByteStream&) = delete;
  ByteStream& operator=(const ByteStream&) = delete;

  // Appends up to about `want` decompressed bytes to out; false at the end of the file. Corrupt or
  // truncated compressed data throws InputError naming the file.
  bool read(std::string& out, size_t want);
  uint64_t consumed() const { return consumed_; }

 private:
  bool fill();  // reads the next raw chunk; false at end of file
  std::filesystem::path path_;
  Compression compression_;
  std::FILE* file_ = nullptr;
  std::vector<char> raw_;
  size_t raw_pos_ = 0, raw_len_ = 0;
  uint64_t consumed_ = 0;
  bool raw_eof_ = false, in_frame_ = false;
  struct Codec;
  std::unique_ptr<Codec> codec_;
};

// Lines of a stream, without their '\n' (and without a '\r' before it).
class LineReader {
 public:
  LineReader(const std::filesystem::path& path, Compression compression);
  bool next(std::string& line);  // false at the end
  int64_t line_number() const { return line_; }  // 1-based number of the last line returned
  uint64_t consumed() const { return stream_.consumed(); }

 private:
  ByteStream stream_;
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false;
  int64_t line_ = 0;
};

}  // namespace attnbench::data
