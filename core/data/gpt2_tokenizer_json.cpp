#include "core/data/gpt2_tokenizer_json.h"

#include <sstream>

#include "core/common/regular_file.h"
#include "core/data/tokenizer.h"

namespace attnbench::data {

namespace {

constexpr const char* kEndOfText = Tokenizer::kEndOfTextText;

// The merges of vocab.bpe in file order ("a b"), its "#version" header left out.
nlohmann::json merges(const std::filesystem::path& vocab_path) {
  std::istringstream in(read_regular_file(vocab_path, "tokenizer file"));
  nlohmann::json out = nlohmann::json::array();
  std::string line;
  for (bool first = true; std::getline(in, line); first = false) {
    if ((first && line.rfind("#version", 0) == 0) || line.empty()) continue;
    out.push_back(line);
  }
  return out;
}

nlohmann::json byte_level(bool add_prefix_space, bool trim_offsets) {
  return {{"type", "ByteLevel"}, {"add_prefix_space", add_prefix_space},
          {"trim_offsets", trim_offsets}, {"use_regex", true}};
}

}  // namespace

nlohmann::json gpt2_tokenizer_json(const std::filesystem::path& dir) {
  Tokenizer::load(dir);  // the two files are checked as training read them
  nlohmann::json vocab = nlohmann::json::parse(read_regular_file(dir / "encoder.json", "tokenizer file"));
  const nlohmann::json added = {{"id", Tokenizer::kEndOfText}, {"content", kEndOfText},
                                {"single_word", false},        {"lstrip", false},
                                {"rstrip", false},             {"normalized", true},
                                {"special", true}};
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", nlohmann::json::array({added})},
          {"normalizer", nullptr},
          {"pre_tokenizer", byte_level(false, true)},
          {"post_processor", byte_level(true, false)},
          {"decoder", byte_level(true, true)},
          {"model",
           {{"type", "BPE"},
            {"dropout", nullptr},
            {"unk_token", nullptr},
            {"continuing_subword_prefix", ""},
            {"end_of_word_suffix", ""},
            {"fuse_unk", false},
            {"byte_fallback", false},
            {"ignore_merges", false},
            {"vocab", std::move(vocab)},
            {"merges", merges(dir / "vocab.bpe")}}}};
}

nlohmann::json gpt2_tokenizer_config() {
  return {{"add_bos_token", false},  {"add_eos_token", false}, {"bos_token", kEndOfText},
          {"eos_token", kEndOfText}, {"unk_token", kEndOfText}, {"model_max_length", 1024},
          {"tokenizer_class", "GPT2Tokenizer"}, {"clean_up_tokenization_spaces", false}};
}

}  // namespace attnbench::data
