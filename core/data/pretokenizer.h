// GPT-2's pre-tokenisation: the text is cut into pieces by tiktoken's "gpt2" pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// and BPE runs inside each piece only. Matched with PCRE2 (UTF, UCP, JIT). tiktoken evaluates the
// pattern with Rust's regex crates, where \s is the Unicode White_Space property; PCRE2's \s is
// \p{Z} + \h + \v, which also holds U+180E. So \s is spelled out here as the White_Space set.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace attnbench::data {

class Pretokenizer {
 public:
  Pretokenizer();  // compiles the pattern; throws std::runtime_error if PCRE2 refuses it
  // Another pattern, in PCRE2 syntax, compiled with UTF and UCP but not anchored, for find() (the
  // Hugging Face tokenizers' Split regexes, core/data/hf_pretokenizers.cpp). Throws
  // std::runtime_error with PCRE2's message if it refuses the pattern.
  explicit Pretokenizer(const std::string& pattern);
  ~Pretokenizer();
  Pretokenizer(const Pretokenizer&) = delete;
  Pretokenizer& operator=(const Pretokenizer&) = delete;

  // Calls piece(p) for each match, in order; the pieces tile `text` exactly. `text` must be
  // well-formed UTF-8 (checked by the caller: the match runs without PCRE2's UTF check).
  // Thread-safe: match state is per thread.
  void split(std::string_view text, const std::function<void(std::string_view)>& piece) const;

  // Calls match(start, end) for each match in order, leftmost first, each search starting where
  // the previous match ended (a regex find-all, as the onig crate's find_iter: an empty match right
  // at the end of the previous match is skipped by moving on one character); text between matches
  // is not reported. Same UTF-8 precondition and thread safety as split().
  void find(std::string_view text, const std::function<void(size_t, size_t)>& match) const;

  // The pattern as compiled (with \s spelled out).
  static const char* pattern();

 private:
  struct Code;
  std::unique_ptr<Code> code_;
};

}  // namespace attnbench::data
