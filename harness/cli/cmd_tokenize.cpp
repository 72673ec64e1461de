// `attnbench tokenize` and `attnbench detokenize`: the GPT-2 tokenizer from the command line, for
// checking what a model sees (docs/tokenizer.md).
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <iostream>
#include <iterator>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/regular_file.h"
#include "core/data/tokenizer.h"
#include "harness/cli/command.h"

namespace attnbench::cli::cmd_tokenize {
namespace {

namespace fs = std::filesystem;
using data::Tokenizer;

struct Options {
  std::string text, file, format = "ids", data_dir, tokenizer;
  bool eot = false;
  std::vector<std::string> ids;
};

Tokenizer load(const Options& o) {
  return Tokenizer::load(o.tokenizer.empty() ? data::gpt2_tokenizer_dir(o.data_dir)
                                             : fs::path(o.tokenizer));
}

std::string read_all(std::istream& in) {
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

int tokenize(const Options& o) {
  std::string text;
  if (!o.file.empty() && !o.text.empty()) throw UsageError("tokenize: give TEXT or --file, not both");
  if (o.file == "-") {
    text = read_all(std::cin);
  } else if (!o.file.empty()) {
    text = read_regular_file(o.file, "tokenize --file");
  } else if (!o.text.empty()) {
    text = o.text;
  } else if (!::isatty(STDIN_FILENO)) {
    text = read_all(std::cin);
  } else {
    throw UsageError("tokenize: nothing to tokenize (give TEXT, --file F, or pipe text to stdin)");
  }
  Tokenizer tok = load(o);
  std::vector<uint32_t> ids = o.eot ? tok.encode_document(text) : tok.encode(text);
  if (o.format == "json") {
    nlohmann::json pieces = nlohmann::json::array();
    for (uint32_t id : ids) pieces.push_back(std::string(tok.token_bytes(id)));
    nlohmann::json j = {{"count", ids.size()}, {"bytes", text.size()}, {"ids", ids},
                        {"tokens", pieces}};
    // A token may hold part of a UTF-8 character: such bytes print as U+FFFD.
    std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << fmt::format("{}", fmt::join(ids, " ")) << "\n";
  }
  return 0;
}

// Ids from the arguments or stdin: integers separated by spaces, commas or brackets (so both the
// `ids` output and a JSON array work), or the JSON object `tokenize --format json` prints.
std::vector<uint32_t> parse_ids(const std::vector<std::string>& args) {
  std::string text;
  for (const auto& a : args) text += a + " ";
  if (args.empty()) text = read_all(std::cin);
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw UsageError(std::string("detokenize: invalid JSON on stdin: ") + e.what());
    }
    if (!j.contains("ids") || !j["ids"].is_array())
      throw UsageError("detokenize: the JSON object has no \"ids\" array");
    text = j["ids"].dump();
  }
  std::vector<uint32_t> ids;
  std::string word;
  auto flush = [&] {
    if (word.empty()) return;
    char* end = nullptr;
    unsigned long v = std::strtoul(word.c_str(), &end, 10);
    if (*end != '\0' || !std::isdigit(static_cast<unsigned char>(word[0])) || v > UINT32_MAX)
      throw UsageError("detokenize: '" + word + "' is not a token id (expected integers 0..50256)");
    ids.push_back(static_cast<uint32_t>(v));
    word.clear();
  };
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == '[' || c == ']') flush();
    else word += c;
  }
  flush();
  return ids;
}

int detokenize(const Options& o) {
  std::vector<uint32_t> ids = parse_ids(o.ids);
  Tokenizer tok = load(o);
  std::string text = tok.decode(ids);  // exact bytes: no newline added
  std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
  std::cout.flush();
  return 0;
}

void tokenizer_options(CLI::App& app, Options& o) {
  app.add_option("--data-dir", o.data_dir,
                 "data root holding gpt2_tokenizer/ (default: $ATTNBENCH_DATA, else ./data)");
  app.add_option("--tokenizer", o.tokenizer, "folder with encoder.json and vocab.bpe (overrides --data-dir)");
}

RegisterCommand reg_tokenize(
    "tokenize", "GPT-2 token ids of a text (tiktoken's gpt2 encode_ordinary)", [](CLI::App& app) {
      auto o = std::make_shared<Options>();
      app.add_option("text", o->text, "text to tokenize (or --file, or stdin)");
      app.add_option("--file,-f", o->file, "read the text from this file ('-' = stdin), bytes as they are");
      app.add_option("--format", o->format, "ids: space-separated; json: ids, token strings, counts")
          ->check(CLI::IsMember({"ids", "json"}))
          ->capture_default_str();
      app.add_flag("--eot", o->eot, "precede the text with the end-of-text token 50256, as shards do");
      tokenizer_options(app, *o);
      refuse_empty_values(app);
      return [o] { return tokenize(*o); };
    });

RegisterCommand reg_detokenize(
    "detokenize", "Text of GPT-2 token ids (from the arguments, else stdin)", [](CLI::App& app) {
      auto o = std::make_shared<Options>();
      app.add_option("ids", o->ids, "token ids; separators: spaces, commas, brackets");
      tokenizer_options(app, *o);
      refuse_empty_values(app);
      return [o] { return detokenize(*o); };
    });

}  // namespace
}  // namespace attnbench::cli::cmd_tokenize
