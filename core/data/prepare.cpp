#include "core/data/prepare.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/output_folder.h"
#include "core/common/sha256.h"
#include "core/common/stop_signal.h"
#include "core/data/input_reader.h"
#include "core/data/shard.h"
#include "core/data/prepare_tokenizer.h"

namespace attnbench::data {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kBatchBytes = 8 << 20, kBatchDocs = 4096;
constexpr size_t kSkippedExamples = 10;

// Ctrl-C or SIGTERM while preparing (docs/data.md, "Output"; core/common/stop_signal.h): the
// reader notices the request at its next document and throws Interrupted, the temporary folder is
// removed as the stack unwinds, and prepare_shards then ends the process by the same signal.
struct Interrupted {
  int signal;
};

void throw_if_interrupted() {
  if (int sig = stop_signal()) throw Interrupted{sig};
}

// One document as read: raw text (.txt) or a JSONL line still to parse, with its origin.
struct Record {
  size_t source = 0;
  int64_t line = 0;
  bool json = false;
  std::string raw;
};

// What a worker made of a record: the document's tokens (end-of-text first) or why it was bad.
struct Encoded {
  std::vector<uint32_t> tokens;
  std::optional<InputError> error;
};

std::string fields_of(const nlohmann::json& obj, std::vector<std::string>& names) {
  for (auto it = obj.begin(); it != obj.end(); ++it) names.push_back(it.key());
  return names.empty() ? "none" : join(names);
}

// The text field of one JSONL line, or the error naming file:line(:col) and what was expected.
Encoded parse_and_encode(const Record& r, const std::string& file, const std::string& field,
                         const PrepareTokenizer& tok) {
  Encoded e;
  SourceLocation where{file, static_cast<int>(r.line), 0};
  std::string text_storage;
  std::string_view text = r.raw;
  if (r.json) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(r.raw);
    } catch (const nlohmann::json::parse_error& ex) {
      // nlohmann's message restates "line 1, column N" of the one-line string: keep only the cause.
      std::string what = ex.what();
      if (size_t colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
      where.column = static_cast<int>(ex.byte);
      e.error.emplace(where, "invalid JSON (" + what + "); expected one JSON object per line");
      return e;
    } catch (const nlohmann::json::exception& ex) {  // a number too large for a double: no position
      e.error.emplace(where, std::string("invalid JSON (") + ex.what() +
                                 "); expected one JSON object per line");
      return e;
    }
    if (!j.is_object()) {
      e.error.emplace(where, std::string("expected a JSON object with a string field \"") + field +
                                 "\", got " + j.type_name());
      return e;
    }
    auto it = j.find(field);
    if (it == j.end()) {
      std::vector<std::string> names;
      std::string fields = fields_of(j, names);
      e.error.emplace(where, "no field \"" + field + "\" in this object (its fields: " + fields +
                                 ")" + did_you_mean(field, names) +
                                 "; choose the field with --text-field");
      return e;
    }
    if (!it->is_string()) {
      e.error.emplace(where, "field \"" + field + "\" is " + it->type_name() +
                                 ", expected a string");
      return e;
    }
    text_storage = it->get<std::string>();
    text = text_storage;
  }
  e.tokens.reserve(text.size() / 4 + 2);
  e.tokens.push_back(tok.document_start());  // llm.c: a token in front of every document
  try {
    tok.encode_append(text, e.tokens);
  } catch (const UsageError& ex) {  // text the tokenizer cannot read: a bad document, located
    e.tokens.clear();
    e.error.emplace(where, ex.what());
  }
  return e;
}

// Encodes a batch on `jobs` threads; results in input order.
std::vector<Encoded> encode_batch(const std::vector<Record>& batch,
                                  const std::vector<std::string>& files, const std::string& field,
                                  const PrepareTokenizer& tok, int jobs) {
  std::vector<Encoded> out(batch.size());
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    try {
      for (size_t i; (i = next.fetch_add(1)) < batch.size();)
        out[i] = parse_and_encode(batch[i], files[batch[i].source], field, tok);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  int n = static_cast<int>(std::min<size_t>(static_cast<size_t>(jobs), batch.size()));
  for (int t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
  return out;
}

// Splits the document stream into the validation shard and fixed-size train shards.
class ShardSink {
 public:
  ShardSink(fs::path dir, std::string name, int64_t val_tokens, int64_t shard_tokens, int version)
      : dir_(std::move(dir)), name_(std::move(name)), val_target_(val_tokens),
        shard_tokens_(static_cast<size_t>(shard_tokens)), version_(version) {}

  void add(const std::vector<uint32_t>& doc, PrepareSummary& s) {
    if (!val_done_ && static_cast<int64_t>(val_.size()) < val_target_) {
      val_.insert(val_.end(), doc.begin(), doc.end());
      s.val_documents++, s.val_tokens += static_cast<int64_t>(doc.size());
      return;
    }
    flush_val(s);
    s.train_documents++, s.train_tokens += static_cast<int64_t>(doc.size());
    train_.insert(train_.end(), doc.begin(), doc.end());
    while (train_.size() >= shard_tokens_) {
      std::vector<uint32_t> rest(train_.begin() + static_cast<std::ptrdiff_t>(shard_tokens_),
                                 train_.end());
      train_.resize(shard_tokens_);
      write("train", train_, s);
      train_ = std::move(rest);
    }
  }

  void finish(PrepareSummary& s) {
    flush_val(s);
    if (!train_.empty()) write("train", train_, s);
  }

 private:
  void flush_val(PrepareSummary& s) {
    if (val_done_) return;
    val_done_ = true;
    if (!val_.empty()) write("val", val_, s);
    val_ = {};
  }
  void write(const std::string& split, const std::vector<uint32_t>& tokens, PrepareSummary& s) {
    // llm.c numbering: the validation shard is 000000, train shards count from 000001.
    int index = split == "val" ? 0 : ++train_index_;
    char file[64];
    std::snprintf(file, sizeof(file), "_%s_%06d.bin", split.c_str(), index);
    std::string name = name_ + file;
    write_shard(dir_ / name, tokens, version_);  // one version for every shard of the run
    s.shards.push_back({name, split, static_cast<int64_t>(tokens.size())});
  }

  fs::path dir_;
  std::string name_;
  int64_t val_target_;
  size_t shard_tokens_;
  int version_;
  bool val_done_ = false;
  int train_index_ = 0;
  std::vector<uint32_t> val_, train_;
};

// Removes the temporary output folder unless the run completed.
struct TempDir {
  fs::path path;
  bool keep = false;
  ~TempDir() {
    std::error_code ec;
    if (!keep) fs::remove_all(path, ec);
  }
};

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

struct SourceStats {
  int64_t documents = 0, tokens = 0, skipped = 0;
};

// What data prepare writes into --out (the output folder rule, core/common/output_folder.h): its
// shards <name>_train_NNNNNN.bin and <name>_val_NNNNNN.bin, and manifest.json.
OutputFolder prepare_folder(const fs::path& out) {
  OutputFolder f;
  f.path = out;
  f.command = "data prepare";
  f.writes = "<name>_train_NNNNNN.bin, <name>_val_NNNNNN.bin and manifest.json";
  f.owned = [](const fs::directory_entry& e) {
    static const std::regex shard(R"(.*_(train|val)_[0-9]{6}\.bin)");
    const std::string name = e.path().filename().string();
    return e.is_regular_file() && (name == "manifest.json" || std::regex_match(name, shard));
  };
  return f;
}

void validate(const PrepareOptions& o) {
  if (o.inputs.empty()) throw UsageError("data prepare: no --input given");
  for (const auto& p : o.inputs) {
    if (!fs::is_regular_file(p)) throw UsageError("input " + p.string() + " does not exist or is not a file");
    input_kind(p);  // throws for unsupported names
  }
  if (o.out.empty()) throw UsageError("data prepare: --out is required");
  check_output_folder(prepare_folder(o.out), o.force);
  if (o.shard_tokens < 1 || o.shard_tokens > INT32_MAX)
    throw UsageError("--shard-tokens must be in 1.." + std::to_string(INT32_MAX) +
                     " (llm.c headers hold an int32 count)");
  if (o.val_tokens < 0 || o.val_tokens > INT32_MAX)
    throw UsageError("--val-tokens must be in 0.." + std::to_string(INT32_MAX));
  if (o.text_field.empty()) throw UsageError("--text-field must not be empty");
}

// Reads the inputs in order into batches of records; the workers encode one batch while the
// reader fills the next, and each encoded batch is consumed in input order: counted, and its
// documents fed to the shard sink. Owns the progress report of the whole run.
class EncodePipeline {
 public:
  EncodePipeline(const PrepareOptions& o, const PrepareTokenizer& tok, int jobs,
                 const std::vector<std::string>& files, uint64_t bytes_total, ShardSink& sink,
                 PrepareSummary& s, Clock::time_point t0)
      : o_(o), tok_(tok), jobs_(jobs), files_(files), sink_(sink), s_(s), t0_(t0),
        per_source_(o.inputs.size()) {
    prog_.bytes_total = bytes_total;
  }

  // Scans every input, then drains the last batches.
  void run() {
    try {
      for (size_t src = 0; src < o_.inputs.size(); ++src) {
        InputKind kind = input_kind(o_.inputs[src]);
        prog_.file = files_[src];
        if (kind.format == InputFormat::kText) {
          read_text(src, kind);
        } else {
          read_lines(src, kind);
        }
        bytes_before_ += fs::file_size(o_.inputs[src]);
      }
      prog_.bytes_done = bytes_before_;
      submit();
      submit();  // drains the last pending batch
    } catch (...) {
      if (pending_.valid()) pending_.wait();  // the workers hold references into this object
      throw;
    }
  }

  const std::vector<SourceStats>& per_source() const { return per_source_; }

  // The final progress line, after the output is in place.
  void report_finished(uint64_t bytes_total) {
    prog_.bytes_done = bytes_total;
    prog_.documents = s_.documents, prog_.tokens = s_.tokens, prog_.skipped = s_.skipped;
    prog_.seconds = s_.seconds;
    prog_.finished = true;
    if (o_.progress) o_.progress(prog_);
  }

 private:
  // A .txt file is one document.
  void read_text(size_t src, const InputKind& kind) {
    ByteStream stream(o_.inputs[src], kind.compression);
    Record r{src, 1, false, {}};
    while (stream.read(r.raw, 1 << 20)) throw_if_interrupted();
    add(std::move(r), stream.consumed());
  }

  // A .jsonl file: one document per non-blank line.
  void read_lines(size_t src, const InputKind& kind) {
    LineReader lines(o_.inputs[src], kind.compression);
    std::string line;
    while (lines.next(line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank line
      add({src, lines.line_number(), true, std::move(line)}, lines.consumed());
      line.clear();
    }
  }

  void add(Record r, uint64_t consumed) {
    throw_if_interrupted();
    batch_bytes_ += r.raw.size();
    batch_.push_back(std::move(r));
    if (batch_.size() >= kBatchDocs || batch_bytes_ >= kBatchBytes) {
      prog_.bytes_done = bytes_before_ + consumed;
      submit();
      batch_bytes_ = 0;
    }
  }

  // Consumes the batch being encoded (if any) and hands the filled one to the workers.
  void submit() {
    bool consumed = pending_.valid();
    if (consumed) {
      auto encoded = pending_.get();
      consume(pending_batch_, encoded);
    }
    pending_batch_ = std::move(batch_);
    batch_.clear();
    if (!pending_batch_.empty()) {
      pending_ = std::async(std::launch::async, [this] {
        return encode_batch(pending_batch_, files_, o_.text_field, tok_, jobs_);
      });
    }
    prog_.documents = s_.documents, prog_.tokens = s_.tokens, prog_.skipped = s_.skipped;
    prog_.seconds = std::chrono::duration<double>(Clock::now() - t0_).count();
    if (o_.progress && consumed) o_.progress(prog_);
  }

  void consume(const std::vector<Record>& batch, std::vector<Encoded>& encoded) {
    for (size_t i = 0; i < batch.size(); ++i) {
      Encoded& e = encoded[i];
      SourceStats& st = per_source_[batch[i].source];
      if (e.error) {
        if (!o_.skip_bad) throw *e.error;
        st.skipped++, s_.skipped++;
        if (s_.skipped_examples.size() < kSkippedExamples) s_.skipped_examples.push_back(e.error->what());
        continue;
      }
      st.documents++, st.tokens += static_cast<int64_t>(e.tokens.size());
      s_.documents++, s_.tokens += static_cast<int64_t>(e.tokens.size());
      sink_.add(e.tokens, s_);
      std::vector<uint32_t>().swap(e.tokens);
    }
  }

  const PrepareOptions& o_;
  const PrepareTokenizer& tok_;
  const int jobs_;
  const std::vector<std::string>& files_;
  ShardSink& sink_;
  PrepareSummary& s_;
  const Clock::time_point t0_;
  std::vector<SourceStats> per_source_;
  PrepareProgress prog_;
  uint64_t bytes_before_ = 0;  // bytes of the inputs already finished
  std::vector<Record> batch_;  // being filled by the reader
  size_t batch_bytes_ = 0;
  std::vector<Record> pending_batch_;  // being encoded by the workers
  std::future<std::vector<Encoded>> pending_;
};

// A run that yields no training data is a usage error, not an empty dataset.
void check_splits(const PrepareSummary& s, const PrepareOptions& o) {
  if (s.documents == 0) {
    throw UsageError("no documents in the input" +
                     (s.skipped ? " (all " + std::to_string(s.skipped) + " lines were malformed)"
                                : std::string()));
  }
  if (s.train_tokens == 0) {
    throw UsageError("all " + std::to_string(s.tokens) + " tokens (" +
                     std::to_string(s.documents) + " documents) went to the validation split: "
                     "lower --val-tokens (now " + std::to_string(o.val_tokens) +
                     ") or add input");
  }
}

nlohmann::json sources_json(const PrepareOptions& o, const std::vector<SourceStats>& per_source) {
  nlohmann::json sources = nlohmann::json::array();
  for (size_t i = 0; i < o.inputs.size(); ++i) {
    sources.push_back({{"path", fs::absolute(o.inputs[i]).lexically_normal().string()},
                       {"format", input_kind(o.inputs[i]).name},
                       {"bytes", fs::file_size(o.inputs[i])},
                       {"sha256", sha256_file(o.inputs[i])},
                       {"documents", per_source[i].documents},
                       {"tokens", per_source[i].tokens},
                       {"skipped_lines", per_source[i].skipped}});
  }
  return sources;
}

nlohmann::json tokenizer_files_json(const PrepareTokenizer& tok) {
  nlohmann::json tokenizer_files = nlohmann::json::array();
  for (const fs::path& f : tok.files()) {
    fs::path p = fs::absolute(f).lexically_normal();
    tokenizer_files.push_back({{"path", p.string()}, {"sha256", sha256_file(p)}});
  }
  return tokenizer_files;
}

// The manifest (docs/data.md, "manifest.json") of the shards written to `dir`.
nlohmann::json manifest_json(const PrepareOptions& o, const PrepareSummary& s,
                             const std::vector<SourceStats>& per_source,
                             const PrepareTokenizer& tok,
                             const fs::path& dir) {
  nlohmann::json shards = nlohmann::json::array();
  for (const auto& sh : s.shards) {
    shards.push_back({{"file", sh.file}, {"split", sh.split}, {"tokens", sh.tokens},
                      {"sha256", sha256_file(dir / sh.file)}});
  }
  return {
      {"format", "llm.c token shards"},
      {"magic", kShardMagic},
      {"version", tok.shard_version()},
      {"token_dtype", tok.shard_version() == 1 ? "uint16" : "uint32"},
      {"document_start", tok.document_start()},
      {"created_by", o.created_by},
      {"created_at", utc_now()},
      {"tokenizer", {{"name", tok.name()}, {"vocab_size", tok.vocab_size()},
                     {"files", tokenizer_files_json(tok)}}},
      {"text_field", o.text_field},
      {"val_tokens_requested", o.val_tokens},
      {"shard_tokens", o.shard_tokens},
      {"documents", s.documents},
      {"tokens", s.tokens},
      {"skipped_lines", s.skipped},
      {"splits",
       {{"val", {{"documents", s.val_documents}, {"tokens", s.val_tokens}}},
        {"train", {{"documents", s.train_documents}, {"tokens", s.train_tokens}}}}},
      {"sources", sources_json(o, per_source)},
      {"shards", shards}};
}

void write_manifest(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();  // a full disk may only show when the last buffer is written, here
  if (!out) throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
}

// Into place: an existing output folder (empty, or replaced under --force) is swapped out.
void move_into_place(TempDir& tmp, const fs::path& out) {
  if (fs::exists(out)) {
    fs::path old = out.parent_path() / ("." + out.filename().string() + ".old-" + std::to_string(::getpid()));
    fs::rename(out, old);
    fs::rename(tmp.path, out);
    fs::remove_all(old);
  } else {
    fs::rename(tmp.path, out);
  }
  tmp.keep = true;
}

PrepareSummary prepare_into_place(const PrepareOptions& o) {
  validate(o);
  const auto t0 = Clock::now();
  const PrepareTokenizer tok = PrepareTokenizer::load(o.tokenizer_dir);
  const int jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const fs::path out = fs::absolute(o.out).lexically_normal();
  const std::string name =
      !o.name.empty() ? o.name : (out.filename().empty() ? "data" : out.filename().string());

  std::vector<std::string> files;
  uint64_t bytes_total = 0;
  for (const auto& p : o.inputs) {
    files.push_back(p.string());
    bytes_total += fs::file_size(p);
  }

  TempDir tmp{out.parent_path() / ("." + out.filename().string() + ".tmp-" + std::to_string(::getpid()))};
  fs::remove_all(tmp.path);
  fs::create_directories(tmp.path);

  PrepareSummary s;
  ShardSink sink(tmp.path, name, o.val_tokens, o.shard_tokens, tok.shard_version());
  EncodePipeline pipeline(o, tok, jobs, files, bytes_total, sink, s, t0);
  pipeline.run();
  sink.finish(s);
  check_splits(s, o);

  nlohmann::json manifest = manifest_json(o, s, pipeline.per_source(), tok, tmp.path);
  write_manifest(tmp.path / "manifest.json", manifest.dump(2) + "\n");
  throw_if_interrupted();  // the last moment a stop leaves no output: after it, the run completes
  move_into_place(tmp, out);

  s.bytes = bytes_total;
  s.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  pipeline.report_finished(bytes_total);
  return s;
}

}  // namespace

PrepareSummary prepare_shards(const PrepareOptions& o) {
  int stopped_by = 0;
  {
    StopSignals signals;
    try {
      return prepare_into_place(o);
    } catch (const Interrupted& i) {
      stopped_by = i.signal;  // the temporary folder is gone by now
    }
  }
  // Ended by the signal itself (default action), the shell reports 130 or 143 as for any tool.
  std::signal(stopped_by, SIG_DFL);
  std::raise(stopped_by);
  // Reached only where the signal is blocked in this thread.
  throw std::runtime_error("data prepare: interrupted by signal " + std::to_string(stopped_by));
}

}  // namespace attnbench::data
