// Fuzzes the evaluation tasks' loaders (evals/tasks): JSONL rows, SciQ's JSON array, HellaSwag's
// text form, WikiText's raw file and the label files. An input is
//   <file>\n<content>[\0<labels>]
// where <file> is one of the task files below, relative to the data root: <content> is written
// there, <labels> (when given) to the task's label file, and the task's loader reads the folder.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "evals/tasks/task.h"
#include "tests/fuzz/fuzz_support.h"

using namespace attnbench;

namespace {

struct TaskFile {
  const char* task;
  const char* path;    // relative to the data root; its first component is the task's folder
  const char* labels;  // the official layout's label file in the same folder, or nullptr
};

// Every file a loader reads (docs/tasks.md, "Data layout"): the official one and the hub export.
constexpr TaskFile kFiles[] = {
    {"arc_easy", "arc_easy/ARC-Easy-Test.jsonl", nullptr},
    {"arc_easy", "arc_easy/hf_format/test.jsonl", nullptr},
    {"arc_challenge", "arc_challenge/ARC-Challenge-Test.jsonl", nullptr},
    {"arc_challenge", "arc_challenge/hf_format/test.jsonl", nullptr},
    {"boolq", "boolq/val.jsonl", nullptr},
    {"boolq", "boolq/hf_format/validation.jsonl", nullptr},
    {"copa", "copa/val.jsonl", nullptr},
    {"copa", "copa/hf_format/validation.jsonl", nullptr},
    {"hellaswag", "hellaswag/hellaswag_val_full.txt", nullptr},
    {"hellaswag", "hellaswag/hf_format/validation.jsonl", nullptr},
    {"lambada_openai", "lambada_openai/lambada_test.jsonl", nullptr},
    {"lambada_openai", "lambada_openai/hf_format/test.jsonl", nullptr},
    {"openbookqa", "openbookqa/test.jsonl", nullptr},
    {"openbookqa", "openbookqa/hf_format/test.jsonl", nullptr},
    {"piqa", "piqa/valid.jsonl", "valid-labels.lst"},
    {"piqa", "piqa/hf_format/validation.jsonl", nullptr},
    {"sciq", "sciq/test.json", nullptr},
    {"sciq", "sciq/hf_format/test.jsonl", nullptr},
    {"social_iqa", "siqa/dev.jsonl", "dev-labels.lst"},
    {"social_iqa", "siqa/hf_format/validation.jsonl", nullptr},
    {"wikitext", "wikitext2/wiki.test.raw", nullptr},
    {"wikitext", "wikitext2/hf_format/test.jsonl", nullptr},
    {"winogrande", "winogrande/dev.jsonl", "dev-labels.lst"},
    {"winogrande", "winogrande/hf_format/validation.jsonl", nullptr},
};

const TaskFile* find_file(std::string_view path) {
  for (const TaskFile& f : kFiles) {
    if (path == f.path) return &f;
  }
  return nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  if (newline == std::string_view::npos) return 0;
  const TaskFile* file = find_file(input.substr(0, newline));
  if (!file) return 0;  // not one of the task files: nothing reads it
  std::string_view content = input.substr(newline + 1), labels;
  const size_t nul = content.find('\0');
  if (nul != std::string_view::npos) {
    labels = content.substr(nul + 1);
    content = content.substr(0, nul);
  }
  const std::filesystem::path root = fuzz::scratch() / "data";
  const std::filesystem::path path(file->path);
  const std::filesystem::path folder = root / *path.begin();
  std::filesystem::remove_all(folder);
  fuzz::write_file(root / path, content);
  if (file->labels && nul != std::string_view::npos) fuzz::write_file(folder / file->labels, labels);
  fuzz::expect_clean_errors([&] {
    const evals::TaskSpec& task = evals::find_task(file->task);
    task.load(root);
    if (task.data_note) task.data_note(root);
  });
  return 0;
}
