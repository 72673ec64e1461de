// HellaSwag prompt construction (lm_eval/tasks/hellaswag/utils.py), exposed for its tests.
#pragma once
#include <string>

namespace attnbench::evals {

// lm-eval's preprocess(): strip, " [title]" -> ". ", re.sub(r"\[.*?\]", "") (a '.' never crosses a
// newline), then one pass of "  " -> " ".
std::string hellaswag_preprocess(const std::string& text);

// lm-eval's query from hub fields: preprocess(activity_label + ": " + ctx_a + " " +
// ctx_b.capitalize()) (capitalize: ASCII only, py_text.h).
std::string hellaswag_query(const std::string& activity_label, const std::string& ctx_a,
                            const std::string& ctx_b);

// The query lm-eval would build, recovered from a context line of llama.cpp's text form
// (activity_label + ": " + ctx with ctx = ctx_a + " " + ctx_b, uncapitalised, and a narrower
// bracket cleanup). Two repairs, both in docs/tasks.md:
//  1. ctx_b.capitalize(): when the line does not end a sentence ('.', '!' or '?', optionally
//     followed by '"'), the fragment after the last sentence break ("[.!?]\"? ") is ctx_b and gets
//     capitalize() (first letter upper, other ASCII letters lower);
//  2. a line that still holds '[' goes through hellaswag_preprocess() again (lm-eval removes every
//     [...] span, the text form removed only [header], [step], [substeps] and [title]).
std::string hellaswag_query_from_text_form(const std::string& line);

// An ending line of the text form, repaired as in 2. above.
std::string hellaswag_ending_from_text_form(const std::string& line);

}  // namespace attnbench::evals
