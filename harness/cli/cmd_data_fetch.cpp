// `attnbench data fetch`: downloads every registered task's evaluation split (its DataSource,
// evals/tasks/task.h) and a FineWeb-Edu sample from the Hugging Face datasets-server rows API into
// a data folder, in the hub's JSONL layout that the task loaders read
// (<root>/<folder>/hf_format/<split>.jsonl). For users with internet access; a data folder that
// already holds the files (ATTNBENCH_DATA) makes it unnecessary.
#include <algorithm>
#include <ctime>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/sha256.h"
#include "core/data/hub_fetch.h"
#include "evals/tasks/task.h"
#include "harness/cli/command.h"

namespace attnbench::cli::cmd_data_fetch {
namespace {

namespace fs = std::filesystem;

// One file to download: a task's data source, or the pretraining sample.
struct PlanItem {
  std::string name;  // the task's name, or "fineweb_edu"
  evals::DataSource source;
  bool pretraining = false;
};

// The GPT-2 tokenizer files, as OpenAI publishes them; the checksums are the ones tiktoken pins.
struct TokenizerFile {
  std::string name, sha256;
};
const std::vector<TokenizerFile> kTokenizerFiles = {
    {"encoder.json", "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"},
    {"vocab.bpe", "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"},
};

// Every registered task's source (sorted by task name), then the pretraining sample.
std::vector<PlanItem> plan() {
  std::vector<PlanItem> items;
  for (const std::string& name : evals::task_names()) {
    PlanItem p;
    p.name = name;
    p.source = evals::find_task(name).source;
    items.push_back(p);
  }
  PlanItem pretraining;
  pretraining.name = "fineweb_edu";
  pretraining.source.folder = "fineweb_edu";
  pretraining.source.dataset = "HuggingFaceFW/fineweb-edu";
  pretraining.source.config = "sample-10BT";
  pretraining.source.split = "train";
  pretraining.pretraining = true;
  items.push_back(pretraining);
  return items;
}

std::string relative_file(const PlanItem& p) {
  return p.source.folder + "/hf_format/" + p.source.split + ".jsonl";
}

struct Options {
  std::string out = "data";
  std::string files_endpoint = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main";
  std::string only;
  int64_t pretrain_rows = 20000;
  bool no_pretrain = false;
  data::FetchOptions fetch;
};

// The manifest of earlier fetches; a damaged one is refused naming the file (it is only a record:
// deleting it makes the next fetch verify and rewrite every file).
nlohmann::json read_manifest(const fs::path& file) {
  if (!fs::exists(file)) return {{"files", nlohmann::json::array()}};
  std::ifstream in(file);
  nlohmann::json m = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  const bool ok = !m.is_discarded() && m.is_object() && m.contains("files") &&
                  m["files"].is_array() &&
                  std::all_of(m["files"].begin(), m["files"].end(),
                              [](const nlohmann::json& f) { return f.is_object(); });
  if (!ok) {
    throw UsageError(file.string() + " is not a fetch manifest (a JSON object with a \"files\" "
                     "array of objects); delete it and fetch again");
  }
  return m;
}

void write_manifest(const fs::path& file, const nlohmann::json& m) {
  fs::path tmp = file;
  tmp += ".tmp";
  std::ofstream(tmp) << m.dump(2) << "\n";
  fs::rename(tmp, file);
}

nlohmann::json* manifest_entry(nlohmann::json& m, const std::string& path) {
  for (auto& f : m["files"])
    if (f["path"] == path) return &f;
  return nullptr;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// What to fetch: everything (less the pretraining sample under --no-pretrain), or the --only list of
// task names or data folders (e.g. social_iqa or siqa).
std::vector<PlanItem> chosen_items(const Options& o) {
  const std::vector<PlanItem> all = plan();
  std::vector<PlanItem> chosen;
  if (o.only.empty()) {
    for (const PlanItem& p : all)
      if (!(p.pretraining && o.no_pretrain)) chosen.push_back(p);
    return chosen;
  }
  std::vector<std::string> names;
  for (const PlanItem& p : all) names.push_back(p.name);
  for (size_t start = 0; start <= o.only.size();) {
    size_t comma = std::min(o.only.find(',', start), o.only.size());
    std::string name = o.only.substr(start, comma - start);
    start = comma + 1;
    auto it = std::find_if(all.begin(), all.end(),
                           [&](const PlanItem& p) { return p.name == name || p.source.folder == name; });
    if (it == all.end()) {
      throw UsageError("data fetch --only: unknown task or dataset '" + name + "'" +
                       did_you_mean(name, names) + "; known: " + join(names));
    }
    chosen.push_back(*it);
  }
  return chosen;
}

// The GPT-2 tokenizer files, checked against their published checksums.
void fetch_tokenizer(const Options& o, const fs::path& root) {
  for (const TokenizerFile& f : kTokenizerFiles) {
    fs::path file = root / "gpt2_tokenizer" / f.name;
    try {
      data::fetch_file(o.files_endpoint + "/" + f.name, file, f.sha256, o.fetch);
    } catch (const data::NetworkError& e) {
      throw UsageError(fmt::format(
          "cannot download {} from {} ({})\n  expected: {} (sha256 {})\n  get it: point "
          "ATTNBENCH_DATA (or --data-dir) at a folder that has gpt2_tokenizer/ (layout: "
          "docs/data.md), or rerun with network access",
          f.name, o.files_endpoint, e.what(), file.string(), f.sha256));
    }
    fmt::print("gpt2_tokenizer/{}: sha256 {} verified\n", f.name, f.sha256.substr(0, 16));
  }
}

// Downloads item `i` of `chosen` into root/<folder>/hf_format/<split>.jsonl; its manifest entry.
nlohmann::json fetch_item(const Options& o, const fs::path& root,
                          const std::vector<PlanItem>& chosen, size_t i) {
  const PlanItem& p = chosen[i];
  const std::string rel = relative_file(p);
  data::HubSplit split;
  split.dataset = p.source.dataset;
  split.config = p.source.config;
  split.split = p.source.split;
  split.out_file = root / rel;
  split.max_rows = p.pretraining ? o.pretrain_rows : -1;
  data::FetchOptions fo = o.fetch;
  fo.progress = [&](int64_t rows, int64_t total) {
    fmt::print(stderr, "\r[{}/{}] {}: {} / {} rows", i + 1, chosen.size(), rel, rows,
               total >= 0 ? std::to_string(total) : "?");
  };
  data::FetchResult r;
  try {
    r = data::fetch_split(split, fo);
  } catch (const data::NetworkError& e) {
    std::vector<std::string> expected;
    for (auto& c : chosen)
      if (!fs::exists(root / relative_file(c))) expected.push_back((root / relative_file(c)).string());
    throw UsageError(
        fmt::format("cannot reach the datasets server {} ({})\n  missing files:\n    {}\n"
                    "  get them: run `attnbench data fetch --out DIR` on a machine with internet "
                    "access and copy DIR here, or point ATTNBENCH_DATA (or --data-dir) at a folder "
                    "that has them (layout: docs/data.md). Completed files are kept; a rerun resumes "
                    "partial downloads.",
                    o.fetch.endpoint, e.what(), join(expected, "\n    ")));
  }
  fmt::print(stderr, "\n");
  fmt::print("[{}/{}] {}: {} rows{}{}, sha256 {}\n", i + 1, chosen.size(), rel, r.rows,
             r.resumed ? " (resumed)" : "",
             r.skipped_truncated ? fmt::format(", {} rows skipped (cells truncated by the API)",
                                               r.skipped_truncated)
                                 : "",
             r.sha256.substr(0, 16));
  return {{"path", rel},
          {"dataset", p.source.dataset},
          {"config", p.source.config},
          {"split", p.source.split},
          {"rows", r.rows},
          {"max_rows", split.max_rows},
          {"skipped_truncated", r.skipped_truncated},
          {"sha256", r.sha256},
          {"fetched_at", utc_now()}};
}

int run(Options o) {
  const std::vector<PlanItem> chosen = chosen_items(o);
  fs::path root = o.out;
  fs::create_directories(root);
  fs::path manifest_file = root / "fetch_manifest.json";
  nlohmann::json manifest = read_manifest(manifest_file);
  manifest["endpoint"] = o.fetch.endpoint;

  fetch_tokenizer(o, root);  // first: every other step (prepare, eval) needs it

  for (size_t i = 0; i < chosen.size(); ++i) {
    const std::string rel = relative_file(chosen[i]);
    const int64_t max_rows = chosen[i].pretraining ? o.pretrain_rows : -1;
    if (nlohmann::json* e = manifest_entry(manifest, rel);
        e && fs::exists(root / rel) && (*e)["max_rows"] == max_rows &&
        sha256_file(root / rel) == (*e)["sha256"]) {
      fmt::print("[{}/{}] {}: up to date ({} rows)\n", i + 1, chosen.size(), rel,
                 (*e)["rows"].get<int64_t>());
      continue;
    }
    const nlohmann::json entry = fetch_item(o, root, chosen, i);
    if (nlohmann::json* e = manifest_entry(manifest, rel)) *e = entry;
    else manifest["files"].push_back(entry);
    write_manifest(manifest_file, manifest);
  }
  fmt::print("data fetch: {} file(s) in {}; checksums in {}\n", chosen.size(), root.string(),
             manifest_file.string());
  return 0;
}

RegisterCommand reg("data", "fetch",
                    "Download the evaluation splits and a FineWeb-Edu sample (needs internet)",
                    [](CLI::App& app) {
                      auto o = std::make_shared<Options>();
                      app.add_option("--out", o->out, "data folder to fill")->capture_default_str();
                      app.add_option("--only", o->only, "comma-separated tasks or data folders, e.g. arc_easy,copa");
                      app.add_option("--pretrain-rows", o->pretrain_rows,
                                     "FineWeb-Edu rows to download")
                          ->check(int_in(0))
                          ->capture_default_str();
                      app.add_flag("--no-pretrain", o->no_pretrain, "skip the FineWeb-Edu sample");
                      app.add_option("--endpoint", o->fetch.endpoint, "datasets-server base URL")
                          ->capture_default_str();
                      app.add_option("--files-endpoint", o->files_endpoint,
                                     "base URL of the GPT-2 tokenizer files")
                          ->capture_default_str();
                      app.add_option("--retries", o->fetch.retries, "retries per request")
                          ->check(int_in(0, 10))  // waits double: 10 retries wait 17 min
                          ->capture_default_str();
                      app.add_option("--backoff", o->fetch.backoff_s,
                                     "first retry wait in seconds (doubles)")
                          ->check(finite_in(0, 60))
                          ->capture_default_str();
                      refuse_empty_values(app);
                      return [o] { return run(*o); };
                    });

}  // namespace
}  // namespace attnbench::cli::cmd_data_fetch
