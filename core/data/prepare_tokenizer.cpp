#include "core/data/prepare_tokenizer.h"

#include "core/common/error.h"
#include "core/data/hf_model_folder.h"

namespace attnbench::data {

namespace fs = std::filesystem;

PrepareTokenizer PrepareTokenizer::load(const fs::path& dir) {
  PrepareTokenizer t;
  if (fs::exists(dir / "tokenizer.json")) {
    t.hf_.emplace(HFTokenizer::load(dir));
    t.document_start_ = t.hf_->prefix_id();
    t.name_ = model_folder_name(dir);
    t.files_ = {dir / "tokenizer.json"};
    const fs::path config = dir / "tokenizer_config.json";
    if (fs::exists(config)) t.files_.push_back(config);
    return t;
  }
  for (const char* f : {"encoder.json", "vocab.bpe"}) {
    if (!fs::is_regular_file(dir / f)) {
      throw UsageError("missing tokenizer file " + (dir / f).string() + " (expected GPT-2's "
                       "encoder.json and vocab.bpe, or a Hugging Face tokenizer.json, in " +
                       dir.string() + ")");
    }
  }
  t.gpt2_.emplace(Tokenizer::load(dir));
  t.name_ = "gpt2";
  t.files_ = {dir / "encoder.json", dir / "vocab.bpe"};
  return t;
}

void PrepareTokenizer::encode_append(std::string_view text, std::vector<uint32_t>& out) const {
  if (gpt2_) return gpt2_->encode_append(text, out);
  const std::vector<uint32_t> ids = hf_->encode(text);
  out.insert(out.end(), ids.begin(), ids.end());
}

size_t PrepareTokenizer::vocab_size() const {
  return gpt2_ ? gpt2_->vocab_size() : hf_->vocab_size();
}

}  // namespace attnbench::data
