#include "core/data/text_tokenizer.h"

#include <algorithm>

#include "core/common/error.h"
#include "core/data/tokenizer.h"

namespace attnbench::data {

uint32_t TextTokenizer::prefix_id() const {
  if (const auto bos = bos_id()) return *bos;
  if (const auto eos = eos_id()) return *eos;
  throw UsageError("the tokenizer has neither a BOS nor an EOS token, which lm-eval puts in front "
                   "of an empty context");
}

std::string TextTokenizer::decode_text(const std::vector<uint32_t>& ids) const {
  std::vector<uint32_t> text;
  std::copy_if(ids.begin(), ids.end(), std::back_inserter(text),
               [this](uint32_t id) { return !is_special(id); });
  return decode(text);
}

namespace {

class GPT2TextTokenizer : public TextTokenizer {
 public:
  explicit GPT2TextTokenizer(Tokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}

  // tiktoken's encode_ordinary between the occurrences of "<|endoftext|>", each one token.
  std::vector<uint32_t> encode(std::string_view text) const override {
    const std::string_view eos = Tokenizer::kEndOfTextText;
    std::vector<uint32_t> ids;
    for (size_t at = text.find(eos); at != std::string_view::npos; at = text.find(eos)) {
      tokenizer_.encode_append(text.substr(0, at), ids);
      ids.push_back(Tokenizer::kEndOfText);
      text.remove_prefix(at + eos.size());
    }
    tokenizer_.encode_append(text, ids);
    return ids;
  }
  std::string decode(const std::vector<uint32_t>& ids) const override { return tokenizer_.decode(ids); }
  size_t vocab_size() const override { return tokenizer_.vocab_size(); }
  bool is_special(uint32_t id) const override { return id == Tokenizer::kEndOfText; }
  std::optional<uint32_t> bos_id() const override { return Tokenizer::kEndOfText; }
  std::optional<uint32_t> eos_id() const override { return Tokenizer::kEndOfText; }
  bool adds_bos() const override { return false; }
  bool decodes_every_id() const override { return false; }

 private:
  Tokenizer tokenizer_;
};

}  // namespace

std::shared_ptr<const TextTokenizer> gpt2_text_tokenizer(const std::filesystem::path& dir) {
  return std::make_shared<GPT2TextTokenizer>(Tokenizer::load(dir));
}

}  // namespace attnbench::data
