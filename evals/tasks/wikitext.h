// WikiText document splitting and detokenisation as lm-eval's wikitext task sees them, exposed for
// its tests.
#pragma once
#include <string>
#include <vector>

namespace attnbench::evals {

// The pages of EleutherAI/wikitext_document_level built from a wiki.*.raw file: the text is split
// on "\n" (after Python's universal-newline translation); a line whose
// line.replace("= = =", "===").replace("= =", "==").strip() starts with "= " and ends with " ="
// (an article title, not a section heading) starts a new page; a page is its lines joined with
// "\n"; pages that are only whitespace are dropped, except the last, which is always kept.
std::vector<std::string> wikitext_pages(const std::string& raw);

// lm-eval's wikitext_detokenizer (lm_eval/tasks/wikitext/preprocess_wikitext.py), step by step.
std::string wikitext_detokenize(const std::string& page);

}  // namespace attnbench::evals
