// The one tokenizer interface of evaluation, generation and the diagnostics (docs/tokenizer.md):
// text as lm-evaluation-harness's Hugging Face backend tokenizes it, whether the model is
// attnbench's own (GPT-2's BPE, gpt2_text_tokenizer) or imported with its tokenizer.json
// (core/data/hf_tokenizer.h).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnbench::data {

class TextTokenizer {
 public:
  virtual ~TextTokenizer() = default;
  // tokenizer.encode(text, add_special_tokens=False): special tokens written in the text are
  // their ids; no BOS.
  virtual std::vector<uint32_t> encode(std::string_view text) const = 0;
  // tokenizer.decode(ids): special tokens spelled out.
  virtual std::string decode(const std::vector<uint32_t>& ids) const = 0;
  virtual size_t vocab_size() const = 0;
  virtual bool is_special(uint32_t id) const = 0;
  virtual std::optional<uint32_t> bos_id() const = 0;
  virtual std::optional<uint32_t> eos_id() const = 0;
  // Whether lm-eval puts bos_id() in front of every context (the tokenizer's own default).
  virtual bool adds_bos() const = 0;
  // Whether decode takes any id (one without a token decodes to nothing, as Hugging Face's
  // tokenizers do) rather than refusing ids beyond vocab_size().
  virtual bool decodes_every_id() const = 0;

  // lm-eval's prefix_token_id (what an empty context becomes): BOS, else EOS; UsageError when the
  // tokenizer has neither.
  uint32_t prefix_id() const;
  // HFLM.tok_decode: decode(ids, skip_special_tokens=True).
  std::string decode_text(const std::vector<uint32_t>& ids) const;
};

// GPT-2's tokenizer (<dir>/encoder.json and vocab.bpe, data::Tokenizer) as Hugging Face's GPT-2
// tokenizer behaves: "<|endoftext|>" in the text is token 50256, which is also BOS and EOS; no BOS
// is added.
std::shared_ptr<const TextTokenizer> gpt2_text_tokenizer(const std::filesystem::path& dir);

}  // namespace attnbench::data
