// Views of runs in the store: the listing, one run's details, its training curves, a sweep's
// members (results/runs.h).
#include "results/runs.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/common/error.h"
#include "results/sqlite.h"
#include "results/table.h"

namespace attnbench::results {

namespace {

std::vector<std::string> sweep_names(Db& db) {
  Stmt s = db.prepare("SELECT name FROM sweeps ORDER BY name");
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

}  // namespace

void require_sweep(Db& db, const std::string& sweep) {
  std::vector<std::string> names = sweep_names(db);
  if (std::find(names.begin(), names.end(), sweep) != names.end()) return;
  throw UsageError("no sweep '" + sweep + "' in " + db.path().string() + did_you_mean(sweep, names) +
                   (names.empty() ? "; it holds no sweeps" : "; sweeps: " + join(names)));
}

std::vector<SweepMember> sweep_members(Db& db, const std::string& sweep) {
  require_sweep(db, sweep);
  Stmt s = db.prepare("SELECT r.id, sr.cell, r.status FROM sweep_runs sr JOIN runs r ON r.id = sr.run "
                      "WHERE sr.sweep = ? ORDER BY r.created, r.id");
  s.bind(1, sweep);
  std::vector<SweepMember> out;
  while (s.step()) out.push_back({s.text(0), s.text(1), s.text(2)});
  return out;
}

std::vector<SweepMember> run_members(Db& db, const std::vector<std::string>& ids) {
  std::vector<SweepMember> out;
  for (const std::string& id : ids) {
    Stmt s = db.prepare("SELECT id, cell, status FROM runs WHERE id = ?");
    s.bind(1, id);
    if (!s.step()) throw UsageError("no run '" + id + "' in " + db.path().string());
    out.push_back({s.text(0), s.text(1), s.text(2)});
  }
  return out;
}

Grid runs_grid(Store& store, const RunFilter& filter) {
  Grid g;
  g.headers = {"id", "sweep", "cell", "status", "created", "started", "finished", "host", "error"};
  for (const RunInfo& r : store.runs(filter)) {
    auto opt = [](const std::string& s) { return s.empty() ? nlohmann::json() : nlohmann::json(s); };
    g.rows.push_back({r.id, opt(r.sweep), r.cell, to_string(r.status), r.created, opt(r.started),
                      opt(r.finished), opt(r.host), opt(r.error)});
  }
  return g;
}

std::string resolve_run_id(Db& db, const std::string& id) {
  if (id.empty()) throw UsageError("empty run id");
  // A prefix match without LIKE (whose wildcards would need escaping): compare the leading part.
  Stmt s = db.prepare("SELECT id FROM runs WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id LIMIT 6");
  s.bind(1, id);
  std::vector<std::string> found;
  while (s.step()) found.push_back(s.text(0));
  if (found.size() == 1) return found[0];
  if (std::find(found.begin(), found.end(), id) != found.end()) return id;
  if (found.empty()) {
    throw UsageError("no run '" + id + "' in " + db.path().string() +
                     " (attnbench results runs lists them)");
  }
  throw UsageError("run id '" + id + "' is ambiguous: " + join(found) + (found.size() > 5 ? ", ..." : ""));
}

nlohmann::json show_run(Store& store, const std::string& id_in) {
  Db& db = store.db();
  std::string id = resolve_run_id(db, id_in);
  RunInfo r = *store.run(id);
  nlohmann::json j;
  j["id"] = r.id;
  j["status"] = to_string(r.status);
  j["sweep"] = r.sweep;
  j["cell"] = r.cell;
  {
    Stmt s = db.prepare("SELECT sweep, cell FROM sweep_runs WHERE run = ? ORDER BY sweep");
    s.bind(1, id);
    j["sweeps"] = nlohmann::json::array();
    while (s.step()) j["sweeps"].push_back({{"sweep", s.text(0)}, {"cell", s.text(1)}});
  }
  j["created"] = r.created;
  j["started"] = r.started;
  j["finished"] = r.finished;
  j["error"] = r.error;
  j["metadata"] = {{"git_revision", r.git_revision}, {"host", r.host},
                   {"device", r.device},             {"blas", r.blas},
                   {"threads", r.threads},           {"attnbench_version", r.attnbench_version},
                   {"torch_version", r.torch_version}};
  nlohmann::json config = nlohmann::json::parse(r.config_json, nullptr, false);
  j["config"] = config.is_discarded() ? nlohmann::json(r.config_json) : config;
  j["params"] = nlohmann::json::object();
  for (const Param& p : store.params(id)) j["params"][p.key] = p.value;
  j["final_metrics"] = nlohmann::json::object();
  {
    // The last logged step of each key.
    Stmt s = db.prepare("SELECT key, step, value FROM metrics m WHERE run = ?1 AND step = "
                        "(SELECT max(step) FROM metrics WHERE run = ?1 AND key = m.key) ORDER BY key");
    s.bind(1, id);
    while (s.step()) {
      j["final_metrics"][s.text(0)] = {{"step", s.integer(1)},
                                       {"value", s.is_null(2) ? nlohmann::json() : nlohmann::json(s.real(2))}};
    }
  }
  j["evals"] = nlohmann::json::array();
  for (const EvalRow& e : store.evals(id)) {
    j["evals"].push_back({{"task", e.task},
                          {"metric", e.metric},
                          {"value", e.value},
                          {"stderr", e.std_error ? nlohmann::json(*e.std_error) : nlohmann::json()},
                          {"n", e.n},
                          {"limit", e.limit},
                          {"protocol_version", e.protocol_version},
                          {"bos", e.bos}});
  }
  for (const char* table : {"attn_stats", "samples"}) {
    // The table name is one of two literals, never user input.
    Stmt s = db.prepare(std::string("SELECT count(*) FROM ") + table + " WHERE run = ?");
    s.bind(1, id);
    s.step();
    j[std::string(table) + "_count"] = s.integer(0);
  }
  return j;
}

std::string show_run_text(const nlohmann::json& j) {
  auto str = [](const nlohmann::json& v) {
    return v.is_string() ? v.get<std::string>() : v.is_null() ? std::string("—") : v.dump();
  };
  std::string out = fmt::format("run {}  status {}\n", str(j["id"]), str(j["status"]));
  for (const auto& m : j["sweeps"]) out += fmt::format("  sweep {}  cell {}\n", str(m["sweep"]), str(m["cell"]));
  for (const char* k : {"created", "started", "finished", "error"}) {
    if (!j[k].get<std::string>().empty()) out += fmt::format("  {:<9} {}\n", k, str(j[k]));
  }
  out += "metadata\n";
  for (const auto& [k, v] : j["metadata"].items()) out += fmt::format("  {:<18} {}\n", k, str(v));
  out += "params\n";
  for (const auto& [k, v] : j["params"].items()) out += fmt::format("  {} = {}\n", k, str(v));
  out += "final metrics\n";
  for (const auto& [k, v] : j["final_metrics"].items()) {
    out += fmt::format("  {:<18} {} (step {})\n", k, str(v["value"]), str(v["step"]));
  }
  out += "evals\n";
  for (const auto& e : j["evals"]) {
    const std::optional<double> se =
        e["stderr"].is_number() ? std::optional<double>(e["stderr"].get<double>()) : std::nullopt;
    out += fmt::format("  {:<16} {:<16} {}", str(e["task"]), str(e["metric"]),
                       e["value"].is_number() ? format_with_error(e["value"].get<double>(), se) : str(e["value"]));
    out += fmt::format("  (n {}, limit {}, protocol {}, bos {})\n", str(e["n"]), str(e["limit"]),
                       str(e["protocol_version"]), str(e["bos"]));
  }
  out += fmt::format("attention statistics: {} rows; samples: {} rows\n",
                     str(j["attn_stats_count"]), str(j["samples_count"]));
  return out;
}

Grid curve_grid(Store& store, const std::string& id_in, const std::string& metric) {
  Db& db = store.db();
  std::string id = resolve_run_id(db, id_in);
  std::vector<std::string> keys;
  {
    Stmt s = db.prepare("SELECT DISTINCT key FROM metrics WHERE run = ? ORDER BY key");
    s.bind(1, id);
    while (s.step()) keys.push_back(s.text(0));
  }
  if (std::find(keys.begin(), keys.end(), metric) == keys.end()) {
    throw UsageError("--metric: run " + id + " has no metric '" + metric + "'" +
                     did_you_mean(metric, keys) +
                     (keys.empty() ? "; it has logged none" : "; it has: " + join(keys)));
  }
  Grid g;
  g.headers = {"step", metric, "time"};
  for (const Metric& m : store.metrics(id, metric)) {
    g.rows.push_back({m.step, std::isnan(m.value) ? nlohmann::json() : nlohmann::json(m.value), m.time});
  }
  return g;
}

}  // namespace attnbench::results
