// The tokenizer `data prepare` encodes documents with (docs/data.md, "Tokenizer"): GPT-2's BPE from
// encoder.json and vocab.bpe, as llm.c's fineweb.py encodes (text is text: an "<|endoftext|>"
// written in it is not the token), or a Hugging Face model folder's tokenizer.json, as tokenizers'
// encode(text, add_special_tokens=False) does, for the training data of a run that continues that
// model (model.init_from).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/data/hf_tokenizer.h"
#include "core/data/tokenizer.h"

namespace attnbench::data {

class PrepareTokenizer {
 public:
  // A folder with tokenizer.json is a Hugging Face tokenizer, else it must hold GPT-2's files
  // (UsageError naming what is missing).
  static PrepareTokenizer load(const std::filesystem::path& dir);

  // Appends the tokens of one document's text; UsageError for text the tokenizer cannot read
  // (invalid UTF-8, for a Hugging Face tokenizer).
  void encode_append(std::string_view text, std::vector<uint32_t>& out) const;
  // The token in front of every document: GPT-2's end-of-text (llm.c's convention), else the
  // tokenizer's BOS, else its EOS (what lm-eval puts in front of a text).
  uint32_t document_start() const { return document_start_; }
  size_t vocab_size() const;
  // The llm.c shard version every shard is written in: 1 (uint16) when every id fits, the
  // vocabulary's and document_start()'s (a post-processor's BOS may lie past the vocabulary),
  // else 2 (uint32).
  int shard_version() const {
    return vocab_size() <= 65536 && document_start_ <= 65535 ? 1 : 2;
  }
  const std::string& name() const { return name_; }  // "gpt2", or the folder's name
  const std::vector<std::filesystem::path>& files() const { return files_; }  // as read

 private:
  std::optional<Tokenizer> gpt2_;
  std::optional<HFTokenizer> hf_;
  uint32_t document_start_ = Tokenizer::kEndOfText;
  std::string name_;
  std::vector<std::filesystem::path> files_;
};

}  // namespace attnbench::data
