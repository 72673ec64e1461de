#include "core/data/input_reader.h"

#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>

#include "core/common/error.h"
#include "core/common/regular_file.h"

namespace attnbench::data {

namespace fs = std::filesystem;

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
constexpr size_t kRawChunk = 1 << 20;
}  // namespace

InputKind input_kind(const fs::path& path) {
  std::string name = path.filename().string();
  InputKind k{InputFormat::kText, Compression::kNone, ""};
  std::string suffix;
  if (ends_with(name, ".gz")) k.compression = Compression::kGzip, suffix = ".gz";
  if (ends_with(name, ".zst")) k.compression = Compression::kZstd, suffix = ".zst";
  std::string base = name.substr(0, name.size() - suffix.size());
  if (ends_with(base, ".txt")) {
    k.format = InputFormat::kText, k.name = "txt";
  } else if (ends_with(base, ".jsonl")) {
    k.format = InputFormat::kJsonLines, k.name = "jsonl";
  } else if (ends_with(base, ".json")) {
    k.format = InputFormat::kJsonLines, k.name = "json";
  } else {
    throw UsageError("input " + path.string() +
                     ": unsupported file type (expected .txt, one document per file, or .jsonl, "
                     "one JSON object per line; either optionally compressed as .gz or .zst)");
  }
  if (!suffix.empty()) k.name += suffix;
  return k;
}

struct ByteStream::Codec {
  z_stream z{};
  bool z_init = false;
  ZSTD_DCtx* zstd = nullptr;
  ~Codec() {
    if (z_init) inflateEnd(&z);
    if (zstd) ZSTD_freeDCtx(zstd);
  }
};

ByteStream::ByteStream(const fs::path& path, Compression compression)
    : path_(path), compression_(compression), raw_(kRawChunk), codec_(std::make_unique<Codec>()) {
  const int fd = open_regular_file(path, "input");
  file_ = ::fdopen(fd, "rb");
  if (!file_) {
    ::close(fd);
    throw std::runtime_error("cannot read input " + path.string() + ": " + std::strerror(errno));
  }
  if (compression == Compression::kGzip) {
    // 15 + 32: a zlib or gzip header, detected automatically.
    if (inflateInit2(&codec_->z, 15 + 32) != Z_OK) throw std::runtime_error("zlib init failed");
    codec_->z_init = true;
  } else if (compression == Compression::kZstd) {
    codec_->zstd = ZSTD_createDCtx();
    if (!codec_->zstd) throw std::bad_alloc();
  }
}

ByteStream::~ByteStream() {
  if (file_) std::fclose(file_);
}

bool ByteStream::fill() {
  if (raw_pos_ < raw_len_) return true;
  if (raw_eof_) return false;
  raw_len_ = std::fread(raw_.data(), 1, raw_.size(), file_);
  raw_pos_ = 0;
  if (raw_len_ < raw_.size()) {
    if (std::ferror(file_)) throw std::runtime_error("read error in " + path_.string());
    raw_eof_ = true;
  }
  consumed_ += raw_len_;
  return raw_len_ > 0;
}

bool ByteStream::read(std::string& out, size_t want) {
  if (compression_ == Compression::kNone) {
    if (!fill()) return false;
    out.append(raw_.data() + raw_pos_, raw_len_ - raw_pos_);
    raw_pos_ = raw_len_;
    return true;
  }
  size_t start = out.size();
  while (out.size() - start < want) {
    if (!fill()) {
      if (in_frame_) {
        throw InputError({path_.string(), 0, 0},
                         "compressed data ends early (truncated " +
                             std::string(compression_ == Compression::kGzip ? "gzip" : "zstd") +
                             " file)");
      }
      break;
    }
    size_t old = out.size();
    out.resize(old + kRawChunk);
    size_t produced = 0;
    if (compression_ == Compression::kGzip) {
      z_stream& z = codec_->z;
      z.next_in = reinterpret_cast<Bytef*>(raw_.data() + raw_pos_);
      z.avail_in = static_cast<uInt>(raw_len_ - raw_pos_);
      z.next_out = reinterpret_cast<Bytef*>(&out[old]);
      z.avail_out = static_cast<uInt>(kRawChunk);
      int rc = inflate(&z, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
        throw InputError({path_.string(), 0, 0},
                         std::string("corrupt gzip data: ") + (z.msg ? z.msg : "inflate failed"));
      }
      raw_pos_ = raw_len_ - z.avail_in;
      produced = kRawChunk - z.avail_out;
      in_frame_ = rc != Z_STREAM_END;
      if (rc == Z_STREAM_END) inflateReset(&z);  // another gzip member may follow
    } else {
      ZSTD_inBuffer in{raw_.data(), raw_len_, raw_pos_};
      ZSTD_outBuffer o{&out[old], kRawChunk, 0};
      size_t rc = ZSTD_decompressStream(codec_->zstd, &o, &in);
      if (ZSTD_isError(rc)) {
        throw InputError({path_.string(), 0, 0},
                         std::string("corrupt zstd data: ") + ZSTD_getErrorName(rc));
      }
      raw_pos_ = in.pos;
      produced = o.pos;
      in_frame_ = rc != 0;
    }
    out.resize(old + produced);
  }
  return out.size() > start || fill();
}

LineReader::LineReader(const fs::path& path, Compression compression) : stream_(path, compression) {}

bool LineReader::next(std::string& line) {
  while (true) {
    size_t nl = buf_.find('\n', pos_);
    if (nl != std::string::npos || eof_) {
      if (nl == std::string::npos) {
        if (pos_ >= buf_.size()) return false;
        nl = buf_.size();
      }
      size_t end = nl;
      if (end > pos_ && buf_[end - 1] == '\r') --end;
      line.assign(buf_, pos_, end - pos_);
      pos_ = nl + 1;
      ++line_;
      return true;
    }
    buf_.erase(0, pos_);
    pos_ = 0;
    if (!stream_.read(buf_, kRawChunk)) eof_ = true;
  }
}

}  // namespace attnbench::data
