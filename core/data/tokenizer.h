// GPT-2 byte-level BPE, bit-identical to tiktoken's "gpt2" encoding (docs/tokenizer.md). encode()
// is tiktoken's encode_ordinary: the text "<|endoftext|>" is encoded as ordinary text, never as
// the special token; the end-of-text token is added explicitly
// (encode_document, or push kEndOfText). Input that is not valid UTF-8 is encoded byte-exactly
// (docs/tokenizer.md, "Invalid UTF-8"), so decode(encode(x)) == x for every byte string x.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attnbench::data {

class Tokenizer {
 public:
  // Loads <dir>/encoder.json and <dir>/vocab.bpe (as published with GPT-2). Ranks come from
  // vocab.bpe, as tiktoken derives them, and must agree with encoder.json's ids; any mismatch or
  // malformed line throws InputError naming the file and line.
  static Tokenizer load(const std::filesystem::path& dir);

  std::vector<uint32_t> encode(std::string_view text) const;
  // Appends the encoding of text to out.
  void encode_append(std::string_view text, std::vector<uint32_t>& out) const;
  // [kEndOfText] + encode(text): one document as llm.c's shards store it (end-of-text first).
  std::vector<uint32_t> encode_document(std::string_view text) const;
  // encode() of every document, in order, on `threads` threads (<= 0: all cores).
  std::vector<std::vector<uint32_t>> encode_batch(const std::vector<std::string>& docs,
                                                  int threads) const;

  // The exact inverse of encode (kEndOfText decodes to "<|endoftext|>"). Throws UsageError for
  // an id outside the vocabulary.
  std::string decode(const std::vector<uint32_t>& ids) const;
  // The bytes of one token (may be part of a UTF-8 character).
  std::string_view token_bytes(uint32_t id) const;

  static constexpr uint32_t kEndOfText = 50256;
  static constexpr const char* kEndOfTextText = "<|endoftext|>";
  size_t vocab_size() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;  // shared: copies are cheap and share the piece cache
};

// <data root>/gpt2_tokenizer (data root: --data-dir, else $ATTNBENCH_DATA, else ./data), or a
// UsageError naming the missing file and the expected layout.
std::filesystem::path gpt2_tokenizer_dir(const std::string& cli_data_dir = "");

}  // namespace attnbench::data
