// Tokenizers read from a Hugging Face tokenizer.json, giving the ids the tokenizers library gives
// (docs/tokenizer.md, "Hugging Face tokenizers"): BPE models with the byte-level (GPT-2, Llama 3,
// Qwen2, GPT-NeoX / Pythia) or SentencePiece (Llama 2, TinyLlama, Mistral) layouts. What the file
// asks for beyond that is refused at load with an InputError naming the file, the key and the
// value, never approximated.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/data/text_tokenizer.h"

namespace attnbench::data {

// A TextTokenizer (text_tokenizer.h): the tokenizer of an imported model.
class HFTokenizer : public TextTokenizer {
 public:
  // Reads dir/tokenizer.json, and dir/tokenizer_config.json when present (bos_token, eos_token,
  // add_bos_token). A missing file or an unsupported or inconsistent setting throws UsageError
  // (InputError for the content of a file).
  static HFTokenizer load(const std::filesystem::path& dir);

  // tokenizers' Tokenizer.encode(text, add_special_tokens=False).ids: added tokens written in the
  // text (special ones included, as transformers' encode recognises them) are their ids, never
  // spelled out; no BOS. Throws UsageError when text is not valid UTF-8 (the library takes only
  // Unicode strings).
  std::vector<uint32_t> encode(std::string_view text) const override;

  // Tokenizer.decode(ids, skip_special_tokens=False): valid UTF-8, with U+FFFD where the tokens'
  // bytes are not. An id no token has decodes to nothing, as in the library.
  std::string decode(const std::vector<uint32_t>& ids) const override;

  size_t vocab_size() const override;  // max id + 1 over the vocabulary and the added tokens
  // Whether id is an added token marked special: what decode(ids, skip_special_tokens=True) drops.
  bool is_special(uint32_t id) const override;

  // The BOS and EOS tokens: tokenizer_config.json's bos_token / eos_token, else for BOS the token
  // the post-processor puts first.
  std::optional<uint32_t> bos_id() const override;
  std::optional<uint32_t> eos_id() const override;
  // Whether lm-eval's HF backend (0.4.13, add_bos_token unset) puts bos_id() in front of a text:
  // encode(text, add_special_tokens=True) == [bos_id()] + encode(text).
  bool adds_bos() const override;
  bool decodes_every_id() const override { return true; }

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;  // shared: copies are cheap and share the BPE cache
};

}  // namespace attnbench::data
