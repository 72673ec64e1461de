// `attnbench report`: the static HTML page of a sweep or of runs named one by one (results/report/report.h;
// docs/diagnostics.md, "The report"). Tables, curves and statistics come from the results store; the attention heatmaps are
// computed here from each finished run's checkpoint under --runs-dir, and for a sweep's imported
// models from their folders as its file names them (the page says which runs had none).
#include <torch/torch.h>

#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/common/output_path.h"
#include "evals/diagnostics/heatmap_png.h"
#include "evals/diagnostics/model_diagnostics.h"
#include "evals/diagnostics/text_source.h"
#include "harness/cli/command.h"
#include "harness/cli/runtime.h"
#include "core/data/utf8.h"
#include "harness/sweep/sweep_file.h"
#include "model/checkpoint_dir.h"
#include "evals/scored_model.h"
#include "results/report/report.h"
#include "results/runs.h"
#include "results/store.h"

namespace attnbench::cli::cmd_report {
namespace {

namespace dx = evals::diagnostics;

struct Options {
  std::string sweep;
  std::vector<std::string> runs;  // instead of a sweep: run ids (prefixes)
  std::string out;
  std::string db;
  std::string runs_dir = "runs";
  int64_t heatmap_layer = -1;  // -1 = the last layer
  int64_t heatmap_head = 0;
  int64_t heatmap_tokens = 64;
  bool no_heatmaps = false;
  int threads = 0;
  std::string baseline;  // "" = the default row (results/compare.h default_baseline_row)
  std::string data_dir;  // gpt2_tokenizer/ (the heatmaps' token labels); "" = $ATTNBENCH_DATA
};

// A token as a tick label: its text (special tokens spelled out), well-formed UTF-8, spaces as
// the visible U+2423 (GPT-2's " The" is not "The"), control characters as escapes.
std::string token_label(const data::TextTokenizer& tok, int64_t id) {
  std::string out;
  for (char c : data::utf8_lossy(tok.decode({static_cast<uint32_t>(id)}))) {
    if (c == ' ') out += "\u2423";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\x{:02x}", c);
    else out += c;
  }
  return out;
}

// The map of one loaded model over the first tokens of `source` (its own validation shard when
// empty): the PNG in --out, its tokens and weight range in `f`.
void draw_heatmap(const Options& o, const evals::ScoredModel& loaded, const dx::TextSource& source,
                  results::HeatmapFigure& f, std::string& text_note) {
  const model::LMShape mc = loaded.model->shape();
  f.layer = o.heatmap_layer < 0 ? mc.n_layer - 1 : o.heatmap_layer;
  f.head = o.heatmap_head;
  if (f.layer >= mc.n_layer || f.head >= mc.n_head) {
    f.note = fmt::format("the model has {} layers and {} heads", mc.n_layer, mc.n_head);
    return;
  }
  const int64_t n = std::min(o.heatmap_tokens, mc.context_length);
  const dx::HeldOutTokens text = dx::read_held_out(source, loaded, n);
  dx::DiagnosticsOptions opts;
  opts.window = n;
  opts.max_tokens = n;
  if (loaded.cfg) {
    opts.fixed_position = loaded.cfg->data.fixed_token_position;
    opts.fixed_token_id = loaded.cfg->data.fixed_token_id;
  }
  const torch::Tensor window = dx::diagnostic_windows(text.tokens, opts)[0];
  const torch::Tensor a = dx::attention_map(*loaded.model, window, f.layer, f.head).contiguous();
  const torch::Tensor causal = a.masked_select(torch::ones_like(a, torch::kBool).tril());
  f.max_weight = causal.max().item<double>();
  f.min_weight = causal.min().item<double>();
  for (int64_t i = 0; i < window.size(0); ++i) f.tokens.push_back(token_label(loaded.tokenizer(), window[i].item<int64_t>()));
  f.file = "heatmap_" + f.run_id + ".png";
  dx::write_heatmap_png(std::filesystem::path(o.out) / f.file,
                        std::vector<float>(a.data_ptr<float>(), a.data_ptr<float>() + a.numel()), a.size(0));
  f.note = loaded.cfg ? "step " + std::to_string(loaded.step) : "imported " + loaded.source.string();
  text_note = "the first " + std::to_string(window.size(0)) + " tokens of each run's validation shard (data.val); " +
              "an imported model's, of the first trained run's in its own tokens";
}

// A member's figure, its note saying why it is not drawn until it is.
results::HeatmapFigure figure_of(const results::SweepMember& m, std::string note) {
  results::HeatmapFigure f;
  f.run_id = m.id;
  f.label = m.cell.empty() ? m.id : m.cell;
  f.note = std::move(note);
  return f;
}

// `draw` into f; one unreadable run must not cost the whole page: the page says what went wrong.
void draw_or_say_why(results::HeatmapFigure& f, const std::function<void()>& draw) {
  try {
    draw();
  } catch (const std::exception& e) {
    f.file.clear();
    f.note = std::string("heatmap not computed: ") + e.what();
    std::cerr << "report: run " << f.run_id << ": " << f.note << "\n";
  }
}

// The heatmap of a finished trained run, from its checkpoint under --runs-dir; the first drawn
// gives its validation shard to `val_shard` (the text the imported models are shown on).
results::HeatmapFigure trained_heatmap(const Options& o, const results::SweepMember& m,
                                       std::string& val_shard, std::string& text_note) {
  const std::filesystem::path run_dir = std::filesystem::path(o.runs_dir) / m.id;
  results::HeatmapFigure f = figure_of(m, "no checkpoint under " + run_dir.string() + ": heatmap not computed");
  if (!model::find_checkpoint(run_dir)) return f;
  draw_or_say_why(f, [&] {
    const evals::ScoredModel loaded = evals::load_scored_model(run_dir, "cpu", "--runs-dir", o.data_dir);
    draw_heatmap(o, loaded, {}, f, text_note);
    if (val_shard.empty() && !f.file.empty()) val_shard = loaded.cfg->data.val;
  });
  return f;
}

// The heatmaps of the sweep's imported models (`imported`): each [[pretrained]] folder of the
// sweep file the store recorded is loaded once (its weights hashed to learn which run it is) and
// drawn for that run, on `val_shard` read in its own tokens. A model no folder is found for, or
// with no trained run's text to show it on, says so.
std::vector<results::HeatmapFigure> imported_heatmaps(results::Store& store, const Options& o,
                                                      const std::vector<results::SweepMember>& imported,
                                                      const std::string& val_shard, std::string& text_note) {
  const std::optional<std::string> file = o.sweep.empty() ? std::nullopt : store.sweep_file(o.sweep);
  std::vector<results::HeatmapFigure> figures;
  for (const auto& m : imported) {
    const std::string why =
        val_shard.empty() ? "an imported model, shown on a trained run's validation text: no trained run's "
                            "heatmap was computed"
        : !file           ? "an imported model: its folder is known from its sweep's file only (report --sweep)"
                          : "an imported model whose folder no [[pretrained]] entry of " + *file + " holds now";
    figures.push_back(figure_of(m, why));
  }
  if (figures.empty() || val_shard.empty() || !file) return figures;
  std::vector<sweep::PretrainedEntry> entries;
  try {
    entries = sweep::parse_sweep_file(*file).pretrained;
  } catch (const std::exception& e) {
    std::cerr << "report: imported models of " << *file << ": " << e.what() << "\n";
  }
  dx::TextSource source;
  source.shard = val_shard;
  for (const sweep::PretrainedEntry& p : entries) {
    std::optional<evals::ScoredModel> loaded;
    try {
      loaded = evals::load_scored_model(p.path, "cpu", "[[pretrained]]", o.data_dir);
    } catch (const std::exception& e) {  // its figure keeps saying that no folder holds it now
      std::cerr << "report: [[pretrained]] " << p.path.string() << ": " << e.what() << "\n";
      continue;
    }
    for (results::HeatmapFigure& f : figures) {
      if (f.run_id == loaded->run_id) draw_or_say_why(f, [&] { draw_heatmap(o, *loaded, source, f, text_note); });
    }
  }
  return figures;
}

// Whether the stored run is an imported model (its params name one: evals/scored_model.h).
bool is_imported(results::Store& store, const std::string& run) {
  for (const results::Param& p : store.params(run)) {
    if (p.key == "pretrained.name") return true;
  }
  return false;
}

// Every finished member's heatmap: trained runs first, whose text the imported models are shown on.
std::vector<results::HeatmapFigure> heatmaps(results::Store& store, const Options& o,
                                             const std::vector<results::SweepMember>& members,
                                             std::string& text_note) {
  std::vector<results::SweepMember> imported;
  std::vector<results::HeatmapFigure> out;
  std::string val_shard;
  for (const auto& m : members) {
    if (m.status != "finished") continue;
    if (is_imported(store, m.id)) {
      imported.push_back(m);
    } else {
      out.push_back(trained_heatmap(o, m, val_shard, text_note));
    }
  }
  for (auto& f : imported_heatmaps(store, o, imported, val_shard, text_note)) out.push_back(std::move(f));
  return out;
}

int run(const Options& o) {
  init_threads(o.threads);
  const std::filesystem::path db = results::default_db_path(o.db);
  refuse_output_over_inputs({"--out", o.out}, {{"--db", db}});
  results::Store store = results::Store::open(db, /*read_only=*/true);
  if (o.sweep.empty() == o.runs.empty()) {
    throw UsageError("give --sweep NAME or --runs ID[,ID...] (standalone runs), one of the two");
  }
  results::ReportOptions ro;
  ro.sweep = o.sweep;
  for (const std::string& id : o.runs) ro.runs.push_back(results::resolve_run_id(store.db(), id));
  ro.out = o.out;
  ro.baseline = o.baseline;
  // The runs and --baseline are checked (and the paired tests run) before any checkpoint is read.
  const std::vector<results::SweepMember> members = results::report_members(store.db(), ro);
  ro.paired = results::paired_comparison(store.db(), ro);
  if (!o.no_heatmaps) {  // the heatmaps read each run's checkpoint
    std::vector<NamedPath> runs;
    for (const auto& m : members) runs.push_back({"run folder", std::filesystem::path(o.runs_dir) / m.id});
    refuse_output_over_inputs({"--out", o.out}, runs);
  }
  std::filesystem::create_directories(ro.out);
  if (!o.no_heatmaps) ro.heatmaps = heatmaps(store, o, members, ro.heatmap_text);
  const std::filesystem::path page = results::write_report(store.db(), ro);
  std::cout << page.string() << "\n";
  return 0;
}

RegisterCommand reg("report", "Static HTML report of a sweep or of runs (tables, curves, attention diagnostics)",
                    [](CLI::App& app) {
  auto o = std::make_shared<Options>();
  app.add_option("--sweep", o->sweep, "Sweep name");
  app.add_option("--runs", o->runs,
                 "Instead of --sweep: these runs (ids or unique prefixes, comma-separated), e.g. "
                 "standalone `attnbench train` runs and imported models scored with `eval --db`")
      ->delimiter(',');
  app.add_option("--out", o->out, "Output folder (index.html and figures)")->required();
  app.add_option("--db", o->db, "Results database (default $ATTNBENCH_DB, else runs/attnbench.db)");
  app.add_option("--runs-dir", o->runs_dir, "Folder of the run folders <runs-dir>/<run id>/ (heatmaps)")
      ->capture_default_str();
  app.add_option("--heatmap-layer", o->heatmap_layer, "Heatmap layer (-1 = the last)")
      ->capture_default_str()
      ->check(int_in(-1));
  app.add_option("--heatmap-head", o->heatmap_head, "Heatmap head")
      ->capture_default_str()
      ->check(int_in(0));
  app.add_option("--heatmap-tokens", o->heatmap_tokens, "Heatmap size in tokens")
      ->capture_default_str()
      ->check(int_in(1));
  app.add_flag("--no-heatmaps", o->no_heatmaps, "Do not load checkpoints");
  app.add_option("--data-dir", o->data_dir,
                 "Data root with gpt2_tokenizer/ (the heatmaps' token labels; default $ATTNBENCH_DATA)");
  app.add_option("--baseline", o->baseline,
                 "Baseline row of the paired differences: key=value[,key=value] over the row keys or a "
                 "run id, as `results compare` takes it (default: the first softmax row with finished "
                 "runs, else the first row with finished runs)");
  app.add_option("--threads", o->threads, "Intra-op threads (0 = $OMP_NUM_THREADS or all cores)")
      ->check(int_in(0));
  refuse_empty_values(app);
  return [o] { return run(*o); };
});

}  // namespace
}  // namespace attnbench::cli::cmd_report
