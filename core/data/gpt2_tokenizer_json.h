// GPT-2's tokenizer as a Hugging Face folder's tokenizer files, for `attnbench export` (a trained
// model's Llama layout is then a complete model folder that attnbench, transformers and
// lm-evaluation-harness read with the tokenizer it was trained with). Built from encoder.json and
// vocab.bpe as the tokenizers library's GPT-2 tokenizer.json spells them: a byte-level BPE with
// those ids and merges in file order, byte-level pre-tokenization (GPT-2's regex, no prefix space),
// a byte-level decoder, and <|endoftext|> (50256) as an added special token.
#pragma once
#include <filesystem>

#include <nlohmann/json.hpp>

namespace attnbench::data {

// tokenizer.json of the GPT-2 tokenizer in `dir` (encoder.json, vocab.bpe: checked as
// Tokenizer::load checks them; UsageError or InputError naming the file otherwise).
nlohmann::json gpt2_tokenizer_json(const std::filesystem::path& dir);

// tokenizer_config.json beside it: <|endoftext|> as BOS and EOS, no BOS added (GPT-2's default,
// which lm-eval's HF backend keeps: its contexts start without one, the empty context with it).
nlohmann::json gpt2_tokenizer_config();

}  // namespace attnbench::data
