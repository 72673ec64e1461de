#define PCRE2_CODE_UNIT_WIDTH 8
#include "core/data/pretokenizer.h"

#include <pcre2.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/data/utf8.h"

namespace attnbench::data {
namespace {

// Unicode White_Space (stable since Unicode 6.3): what Rust's regex means by \s.
#define AB_WS "\\t\\n\\x{0B}\\f\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}" \
              "\\x{2029}\\x{202F}\\x{205F}\\x{3000}"

constexpr const char* kPattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" AB_WS "\\p{L}\\p{N}]+"
    "|[" AB_WS "]+(?![^" AB_WS "])|[" AB_WS "]+";

#undef AB_WS

// Per-thread match state. The JIT stack grows to 64 MiB: `\s+(?!\S)` backtracks through long
// whitespace runs, which overflow PCRE2's default 32 KiB machine-stack area.
struct ThreadState {
  pcre2_match_data* data = nullptr;
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* stack = nullptr;
  ThreadState() {
    data = pcre2_match_data_create(1, nullptr);
    context = pcre2_match_context_create(nullptr);
    stack = pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, nullptr);
    if (!data || !context || !stack) throw std::bad_alloc();
    pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~ThreadState() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
};

ThreadState& thread_state() {  // one per thread, shared by split() and find()
  thread_local ThreadState st;
  return st;
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(code, buf, sizeof(buf));
  return reinterpret_cast<const char*>(buf);
}

}  // namespace

struct Pretokenizer::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

const char* Pretokenizer::pattern() { return kPattern; }

namespace {

// Compiles and JIT-compiles `pattern` with UTF, UCP and `options`; throws std::runtime_error
// naming `what` when PCRE2 refuses it.
pcre2_code* compile(const char* pattern, uint32_t options, const std::string& what) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP | options, &err, &offset, nullptr);
  if (!code) {
    throw std::runtime_error("PCRE2 rejected " + what + " at offset " + std::to_string(offset) +
                             ": " + pcre2_message(err));
  }
  int rc = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  if (rc != 0) {
    pcre2_code_free(code);
    throw std::runtime_error("PCRE2 JIT unavailable: " + pcre2_message(rc));
  }
  return code;
}

}  // namespace

Pretokenizer::Pretokenizer() : code_(std::make_unique<Code>()) {
  // ANCHORED: every match must start where the previous one ended (the alternatives cover every
  // code point, so the pieces tile the text).
  code_->code = compile(kPattern, PCRE2_ANCHORED, "the GPT-2 pattern");
}

Pretokenizer::Pretokenizer(const std::string& pattern) : code_(std::make_unique<Code>()) {
  code_->code = compile(pattern.c_str(), 0, "the pattern");
}

Pretokenizer::~Pretokenizer() = default;

void Pretokenizer::split(std::string_view text,
                         const std::function<void(std::string_view)>& piece) const {
  ThreadState& st = thread_state();
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  PCRE2_SIZE pos = 0;
  while (pos < text.size()) {
    int rc = pcre2_jit_match(code_->code, subject, text.size(), pos, 0, st.data, st.context);
    if (rc < 0) {
      throw std::runtime_error("GPT-2 pre-tokenisation failed at byte " + std::to_string(pos) +
                               ": " + pcre2_message(rc));
    }
    PCRE2_SIZE end = pcre2_get_ovector_pointer(st.data)[1];
    if (end <= pos) throw std::logic_error("GPT-2 pattern made an empty match");
    piece(text.substr(pos, end - pos));
    pos = end;
  }
}

void Pretokenizer::find(std::string_view text,
                        const std::function<void(size_t, size_t)>& match) const {
  ThreadState& st = thread_state();
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  PCRE2_SIZE pos = 0;
  std::optional<PCRE2_SIZE> last_end;  // end of the previous match
  while (pos <= text.size()) {
    int rc = pcre2_jit_match(code_->code, subject, text.size(), pos, 0, st.data, st.context);
    if (rc == PCRE2_ERROR_NOMATCH) return;
    if (rc < 0) {
      throw std::runtime_error("pattern match failed at byte " + std::to_string(pos) + ": " +
                               pcre2_message(rc));
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(st.data);
    const PCRE2_SIZE start = ovector[0], end = ovector[1];
    if (start == end && last_end == end) {  // skip one character and search again
      pos += pos < text.size() ? std::max<size_t>(1, utf8_sequence_length(text.substr(pos))) : 1;
      continue;
    }
    match(start, end);
    pos = last_end.emplace(end);
  }
}

}  // namespace attnbench::data
