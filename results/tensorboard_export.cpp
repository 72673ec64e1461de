#include "results/tensorboard_export.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/common/output_folder.h"
#include "core/common/tensorboard_events.h"
#include "results/runs.h"
#include "results/sqlite.h"

namespace attnbench::results {

namespace fs = std::filesystem;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Labelled {
  std::string id, label;
};

std::vector<Labelled> runs_to_export(Store& store, const std::string& sweep) {
  std::vector<Labelled> runs;
  if (!sweep.empty()) {
    for (const SweepMember& m : sweep_members(store.db(), sweep)) runs.push_back({m.id, m.cell});
  } else {
    for (const RunInfo& r : store.runs()) runs.push_back({r.id, r.cell});
  }
  if (runs.empty()) {
    throw UsageError("no runs to export in " + store.path().string() +
                     (sweep.empty() ? "" : " (sweep '" + sweep + "' has none)"));
  }
  return runs;
}

// A folder name from a cell label or run id: no separators, no "." or "..", at most 200 bytes
// (NAME_MAX is 255 on Linux file systems).
std::string safe_name(const std::string& label) {
  std::string name;
  for (char c : label.substr(0, 200)) {
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) != 0;
    name.push_back(plain || std::string("._-=,+").find(c) != std::string::npos ? c : '_');
  }
  if (name == "." || name == "..") name = "_" + name;
  return name;
}

// A stored value, NULL (a non-finite one, as the store keeps it) as NaN.
double value_or_nan(const Stmt& s, int column) { return s.is_null(column) ? kNaN : s.real(column); }

// The training curves at their steps; returns the last step (0 without curves).
int64_t write_curves(Db& db, const std::string& id, tensorboard::EventFileWriter& w, int64_t& n) {
  Stmt s =
      db.prepare("SELECT key, step, value, time FROM metrics WHERE run = ? ORDER BY key, step");
  s.bind(1, id);
  int64_t last = 0;
  while (s.step()) {
    w.add_scalar(s.text(0), s.integer(1), value_or_nan(s, 2), s.real(3));
    last = std::max(last, s.integer(1));
    ++n;
  }
  return last;
}

// Evaluation metrics and scalar attention statistics (profiles, idx >= 0, are left out: the report
// draws them) at the run's last step, stamped with the time of its latest stored row.
void write_final(Db& db, const std::string& id, int64_t step, tensorboard::EventFileWriter& w,
                 int64_t& n) {
  Stmt t = db.prepare("SELECT max(t) FROM (SELECT max(time) AS t FROM metrics WHERE run = ?1 "
                      "UNION ALL SELECT max(time) FROM evals WHERE run = ?1)");
  t.bind(1, id);
  const double when = t.step() && !t.is_null(0) ? t.real(0) : tensorboard::unix_now();
  Stmt e = db.prepare("SELECT task, metric, value FROM evals WHERE run = ? ORDER BY task, metric");
  e.bind(1, id);
  for (; e.step(); ++n) {
    w.add_scalar("eval/" + e.text(0) + "/" + e.text(1), step, value_or_nan(e, 2), when);
  }
  Stmt a = db.prepare("SELECT stat, layer, head, value FROM attn_stats WHERE run = ? AND idx = -1 "
                      "ORDER BY stat, layer, head");
  a.bind(1, id);
  for (; a.step(); ++n) {  // layer -1: the model as a whole; head -1: the layer as a whole
    std::string tag = "attn/" + a.text(0);
    if (a.integer(1) >= 0) tag += fmt::format("/layer{}", a.integer(1));
    if (a.integer(2) >= 0) tag += fmt::format("/head{}", a.integer(2));
    w.add_scalar(tag, step, value_or_nan(a, 3), when);
  }
}

ExportedRun export_run(Db& db, const std::string& id, const fs::path& folder) {
  fs::create_directories(folder);
  const double now = tensorboard::unix_now();
  tensorboard::EventFileWriter w;
  w.open(tensorboard::new_event_file(folder, now), now);
  ExportedRun run{id, folder, 0};
  const int64_t last = write_curves(db, id, w, run.scalars);
  write_final(db, id, last, w, run.scalars);
  w.close();
  return run;
}

}  // namespace

namespace {

// What export-tb writes into --out: a folder per run holding event files and nothing else.
OutputFolder export_folder(const TensorBoardExport& request) {
  OutputFolder out;
  out.path = request.out;
  out.command = "results export-tb";
  out.writes = "a folder per run of events.out.tfevents.* files";
  out.owned = [](const fs::directory_entry& e) {
    if (!e.is_directory()) return false;
    for (const fs::directory_entry& f : fs::directory_iterator(e.path())) {
      if (!f.is_regular_file() || f.path().filename().string().rfind("events.out.tfevents.", 0) != 0) {
        return false;
      }
    }
    return true;
  };
  return out;
}

}  // namespace

void check_export_folder(const TensorBoardExport& request) {
  check_output_folder(export_folder(request), request.force);
}

std::vector<ExportedRun> export_tensorboard(Store& store, const TensorBoardExport& request) {
  check_export_folder(request);
  const std::vector<Labelled> runs = runs_to_export(store, request.sweep);
  if (request.force) clear_output_folder(export_folder(request));
  fs::create_directories(request.out);
  std::set<std::string> used;
  std::vector<ExportedRun> done;
  for (const Labelled& r : runs) {
    std::string name = safe_name(r.label.empty() ? r.id : r.label);
    if (!used.insert(name).second) name += "-" + safe_name(r.id);
    used.insert(name);
    done.push_back(export_run(store.db(), r.id, request.out / name));
  }
  return done;
}

}  // namespace attnbench::results
