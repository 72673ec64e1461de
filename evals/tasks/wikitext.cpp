// wikitext (lm_eval/tasks/wikitext/wikitext.yaml): EleutherAI/wikitext_document_level
// wikitext-2-raw-v1, test split, 62 pages, output_type loglikelihood_rolling:
//   doc_to_text "" ; doc_to_target = wikitext_detokenizer(page) -> Doc.text (the one request's
//   continuation); process_results counts words = len(re.split(r"\s+", page)) and
//   bytes = len(page.encode("utf-8")) on the ORIGINAL page -> Doc.word_count / Doc.byte_count.
// Official file (data folder wikitext2): wiki.test.raw, split into the hub export's rows {"page"}
// exactly as the wikitext_document_level dataset script does; hub export: hf_format/test.jsonl.
#include "evals/tasks/wikitext.h"

#include "evals/tasks/py_text.h"
#include "evals/tasks/task_data.h"

namespace attnbench::evals {

namespace {
bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// Python's text-mode read (newline=None): "\r\n" and lone "\r" become "\n".
std::string universal_newlines(const std::string& raw) {
  if (raw.find('\r') == std::string::npos) return raw;
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\r') {
      out += raw[i];
    } else {
      out += '\n';
      if (i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
    }
  }
  return out;
}

// re.sub(r"X\s*([^Y]*?)\s*Y", r"X\1Y", s) for an opening X and closing Y (X == Y for quotes): from
// each X to the first Y after it, the text between loses its leading and trailing whitespace; an X
// with no Y after it is left alone.
std::string tighten_pairs(const std::string& s, char open, char close) {
  std::string out;
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t o = s.find(open, pos);
    if (o == std::string::npos) break;
    const size_t c = s.find(close, o + 1);
    if (c == std::string::npos) break;
    out.append(s, pos, o - pos);
    out += open;
    out += py_strip(s.substr(o + 1, c - o - 1));
    out += close;
    pos = c + 1;
  }
  out.append(s, pos, std::string::npos);
  return out;
}

// re.sub(r"/' [0-9]/", r"/'[0-9]/", s): the replacement is the literal text "/'[0-9]/" (a quirk of
// the original, reproduced as is).
std::string contraction_quirk(const std::string& s) {
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = s.find("/' ", pos)) != std::string::npos;) {
    if (hit + 4 < s.size() && s[hit + 3] >= '0' && s[hit + 3] <= '9' && s[hit + 4] == '/') {
      out.append(s, pos, hit - pos).append("/'[0-9]/");
      pos = hit + 5;
    } else {
      out.append(s, pos, hit + 1 - pos);
      pos = hit + 1;
    }
  }
  out.append(s, pos, std::string::npos);
  return out;
}
}  // namespace

std::vector<std::string> wikitext_pages(const std::string& raw) {
  const std::string text = universal_newlines(raw);
  std::vector<std::string> pages;
  std::string page;
  bool empty = true;  // no line collected yet
  auto add_line = [&](const std::string& line) {
    if (!empty) page += '\n';
    page += line;
    empty = false;
  };
  size_t pos = 0;
  while (true) {
    size_t nl = text.find('\n', pos);
    const std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    const std::string rline = py_strip(py_replace(py_replace(line, "= = =", "==="), "= =", "=="));
    if (starts_with(rline, "= ") && ends_with(py_strip(rline), " =")) {
      if (!py_strip(page).empty()) pages.push_back(page);
      page.clear();
      empty = true;
    }
    add_line(line);
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  pages.push_back(page);  // the dataset script yields the last page unconditionally
  return pages;
}

std::string wikitext_detokenize(const std::string& page) {
  std::string s = page;
  // contractions
  s = py_replace(s, "s '", "s'");
  s = contraction_quirk(s);
  // number separators
  s = py_replace(s, " @-@ ", "-");
  s = py_replace(s, " @,@ ", ",");
  s = py_replace(s, " @.@ ", ".");
  // punctuation
  s = py_replace(s, " : ", ": ");
  s = py_replace(s, " ; ", "; ");
  s = py_replace(s, " . ", ". ");
  s = py_replace(s, " ! ", "! ");
  s = py_replace(s, " ? ", "? ");
  s = py_replace(s, " , ", ", ");
  // double brackets
  s = tighten_pairs(s, '(', ')');
  s = tighten_pairs(s, '[', ']');
  s = tighten_pairs(s, '{', '}');
  s = tighten_pairs(s, '"', '"');
  s = tighten_pairs(s, '\'', '\'');
  // miscellaneous
  s = py_replace(s, "= = = =", "====");
  s = py_replace(s, "= = =", "===");
  s = py_replace(s, "= =", "==");
  s = py_replace(s, " \u00b0 ", "\u00b0");  // chr(176), the degree sign
  s = py_replace(s, " \n", "\n");
  s = py_replace(s, "\n ", "\n");
  s = py_replace(s, " N ", " 1 ");
  s = py_replace(s, " 's", "'s");
  return s;
}

namespace {

// wiki.test.raw as the hub export's rows {"page"} (wikitext_pages: the dataset script's split).
std::vector<JsonRow> raw_file_rows(const std::filesystem::path& file) {
  std::vector<JsonRow> rows;
  for (const auto& page : wikitext_pages(read_text(file))) {
    rows.push_back({{{"page", page}}, {file.string() + " [page " + std::to_string(rows.size()) + "]"}});
  }
  return rows;
}

TaskFiles wikitext_files() {
  TaskFiles f;
  f.folder = "wikitext2";
  f.official = "wiki.test.raw";
  f.official_layout = "wikitext-2-raw-v1 test file, one paragraph or heading per line";
  f.hub = {"hf_format/test.jsonl"};
  f.hub_layout = "EleutherAI/wikitext_document_level wikitext-2-raw-v1 JSONL: {\"page\"}";
  f.official_text = raw_file_rows;
  return f;
}

const TaskFiles kFiles = wikitext_files();

Doc page_doc(int64_t index, const std::string& page) {
  Doc doc;
  doc.index = index;
  doc.text = wikitext_detokenize(page);
  doc.requests.push_back({"", doc.text});
  doc.word_count = py_split_whitespace_count(page);
  doc.byte_count = static_cast<int64_t>(page.size());
  return doc;
}

std::vector<Doc> load_wikitext(const std::filesystem::path& root) {
  std::vector<Doc> docs;
  for (const auto& row : read_rows(root, kFiles)) {
    docs.push_back(page_doc(static_cast<int64_t>(docs.size()), string_field(row, "page")));
  }
  return docs;
}

TaskSpec wikitext_task() {
  TaskSpec t;
  t.name = "wikitext";
  t.description = "WikiText-2 raw test articles, rolling perplexity (62 pages)";
  t.source.folder = kFiles.folder;
  t.source.dataset = "EleutherAI/wikitext_document_level";
  t.source.config = "wikitext-2-raw-v1";
  t.source.split = "test";
  t.type = OutputType::LoglikelihoodRolling;
  t.metrics = {"word_perplexity", "byte_perplexity", "bits_per_byte"};
  t.paper_metric = "word_perplexity";
  t.load = load_wikitext;
  return t;
}

const RegisterTask kWikitext(wikitext_task());

}  // namespace
}  // namespace attnbench::evals
