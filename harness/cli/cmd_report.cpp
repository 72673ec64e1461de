// `attnbench report`: the static HTML page of a sweep (results/report/report.h;
// docs/diagnostics.md, "The report"). Tables, curves and statistics come from the results store; the attention heatmaps are
// computed here from each finished run's checkpoint under --runs-dir (the page says which runs had
// none).
#include <torch/torch.h>

#include <filesystem>
#include <iostream>
#include <vector>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/common/output_path.h"
#include "evals/diagnostics/heatmap_png.h"
#include "evals/diagnostics/model_diagnostics.h"
#include "evals/diagnostics/text_source.h"
#include "harness/cli/command.h"
#include "harness/cli/runtime.h"
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
  std::string out;
  std::string db;
  std::string runs_dir = "runs";
  int64_t heatmap_layer = -1;  // -1 = the last layer
  int64_t heatmap_head = 0;
  int64_t heatmap_tokens = 64;
  bool no_heatmaps = false;
  int threads = 0;
  std::string baseline;  // "" = the default row (results/compare.h default_baseline_row)
};

// The heatmap of one finished run, or the reason there is none.
results::HeatmapFigure heatmap(const Options& o, const results::SweepMember& m, std::string& text_note) {
  results::HeatmapFigure f;
  f.run_id = m.id;
  f.label = m.cell.empty() ? m.id : m.cell;
  const std::filesystem::path run_dir = std::filesystem::path(o.runs_dir) / m.id;
  if (!model::find_checkpoint(run_dir)) {
    f.note = "no checkpoint under " + run_dir.string() + ": heatmap not computed";
    return f;
  }
  try {
    const evals::ScoredModel loaded = evals::load_scored_model(run_dir, "cpu", "--runs-dir", "");
    const model::LMShape mc = loaded.model->shape();
    f.layer = o.heatmap_layer < 0 ? mc.n_layer - 1 : o.heatmap_layer;
    f.head = o.heatmap_head;
    if (f.layer >= mc.n_layer || f.head >= mc.n_head) {
      f.note = fmt::format("the model has {} layers and {} heads", mc.n_layer, mc.n_head);
      return f;
    }
    const int64_t n = std::min(o.heatmap_tokens, mc.context_length);
    const dx::HeldOutTokens text = dx::read_held_out({}, loaded, n);
    dx::DiagnosticsOptions opts;
    opts.window = n;
    opts.max_tokens = n;
    opts.fixed_position = loaded.cfg->data.fixed_token_position;
    opts.fixed_token_id = loaded.cfg->data.fixed_token_id;
    const torch::Tensor window = dx::diagnostic_windows(text.tokens, opts)[0];
    const torch::Tensor a = dx::attention_map(*loaded.model, window, f.layer, f.head).contiguous();
    f.file = "heatmap_" + m.id + ".png";
    dx::write_heatmap_png(std::filesystem::path(o.out) / f.file,
                          std::vector<float>(a.data_ptr<float>(), a.data_ptr<float>() + a.numel()), a.size(0));
    f.note = "step " + std::to_string(loaded.step);
    text_note = "each run's validation shard (data.val), first " + std::to_string(window.size(0)) + " tokens";
  } catch (const std::exception& e) {
    // One unreadable run must not cost the whole page: the page says what went wrong.
    f.file.clear();
    f.note = std::string("heatmap not computed: ") + e.what();
    std::cerr << "report: run " << m.id << ": " << f.note << "\n";
  }
  return f;
}

int run(const Options& o) {
  init_threads(o.threads);
  const std::filesystem::path db = results::default_db_path(o.db);
  refuse_output_over_inputs({"--out", o.out}, {{"--db", db}});
  results::Store store = results::Store::open(db, /*read_only=*/true);
  results::ReportOptions ro;
  ro.sweep = o.sweep;
  ro.out = o.out;
  ro.baseline = o.baseline;
  // The sweep and --baseline are checked (and the paired tests run) before any checkpoint is read.
  const std::vector<results::SweepMember> members = results::sweep_members(store.db(), o.sweep);
  ro.paired = results::paired_comparison(store.db(), ro);
  if (!o.no_heatmaps) {  // the heatmaps read each run's checkpoint
    std::vector<NamedPath> runs;
    for (const auto& m : members) runs.push_back({"run folder", std::filesystem::path(o.runs_dir) / m.id});
    refuse_output_over_inputs({"--out", o.out}, runs);
  }
  std::filesystem::create_directories(ro.out);
  if (!o.no_heatmaps) {
    for (const auto& m : members) {
      if (m.status != "finished") continue;
      ro.heatmaps.push_back(heatmap(o, m, ro.heatmap_text));
    }
  }
  const std::filesystem::path page = results::write_report(store.db(), ro);
  std::cout << page.string() << "\n";
  return 0;
}

RegisterCommand reg("report", "Static HTML report of a sweep (tables, curves, attention diagnostics)",
                    [](CLI::App& app) {
  auto o = std::make_shared<Options>();
  app.add_option("--sweep", o->sweep, "Sweep name")->required();
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
