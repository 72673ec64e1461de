#include "results/compare_items.h"

#include <cmath>

#include "results/schema.h"

namespace attnbench::results {

namespace {

struct SampleRow {
  int64_t request;
  std::optional<double> ll;  // NULL: a non-finite log-likelihood
  bool gold, greedy;
  std::optional<int64_t> chars;  // the choice's length (acc_norm's denominator); NULL before v3
};

// numpy's argmax: the first maximum, and the first NaN if there is one.
size_t first_argmax(const std::vector<double>& v) {
  size_t best = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) return i;
    if (v[i] > v[best]) best = i;
  }
  return best;
}

// lm-eval's acc_norm of a multiple-choice doc: the argmax of ll / len(choice) (numpy's float
// division: a zero length gives +-inf or NaN) is the gold one; unset without the lengths.
std::optional<double> correct_norm_of(const std::vector<SampleRow>& reqs) {
  std::vector<double> normalised;
  for (const SampleRow& r : reqs) {
    if (!r.chars) return std::nullopt;
    normalised.push_back(r.ll.value_or(std::nan("")) / static_cast<double>(*r.chars));
  }
  return reqs[first_argmax(normalised)].gold ? 1.0 : 0.0;
}

// lm-eval's acc from the stored requests of a doc: with several requests (multiple choice), the
// first argmax of the log-likelihoods (a NaN wins, as numpy's argmax) is the gold one; with one
// gold request (a loglikelihood task such as LAMBADA), the continuation is the greedy one. acc_norm
// as correct_norm_of, where the samples hold the choices' lengths.
ItemOutcome outcome_of(const std::vector<SampleRow>& reqs) {
  ItemOutcome o;
  int golds = 0;
  double gold_ll = 0;
  bool ll_known = true;
  for (const SampleRow& r : reqs) {
    if (!r.gold) continue;
    ++golds;
    if (r.ll) gold_ll += *r.ll; else ll_known = false;
  }
  if (golds > 0 && ll_known) o.gold_ll = gold_ll;
  if (reqs.size() == 1 && golds == 1) o.correct = reqs[0].greedy ? 1.0 : 0.0;
  if (reqs.size() >= 2 && golds == 1) {
    std::vector<double> lls;
    for (const SampleRow& r : reqs) lls.push_back(r.ll.value_or(std::nan("")));
    o.correct = reqs[first_argmax(lls)].gold ? 1.0 : 0.0;
    o.correct_norm = correct_norm_of(reqs);
  }
  return o;
}

}  // namespace

Items load_items(Db& db, const std::string& run, const std::string& task) {
  // A length is a whole number of characters: anything else stored there (a REAL, a negative or
  // astronomically large number: a database written by something else) is read as no length.
  const std::string chars = samples_choice_chars_sql(db);
  Stmt s = db.prepare("SELECT doc, request, loglikelihood, is_gold, is_greedy, CASE WHEN typeof(" +
                      chars + ") = 'integer' AND " + chars + " BETWEEN 0 AND 2147483647 THEN " +
                      chars + " END FROM samples WHERE run = ? AND task = ? ORDER BY doc, request");
  s.bind_all(run, task);
  std::map<int64_t, std::vector<SampleRow>> docs;
  while (s.step()) {
    std::optional<int64_t> chars;
    if (!s.is_null(5)) chars = s.integer(5);
    docs[s.integer(0)].push_back(
        {s.integer(1), s.optional_real(2), s.integer(3) != 0, s.integer(4) != 0, chars});
  }
  Items out;
  for (const auto& [doc, reqs] : docs) out[doc] = outcome_of(reqs);
  return out;
}

ItemSeries item_series(const std::vector<std::pair<Items, Items>>& loaded,
                       std::optional<double> ItemOutcome::*measure) {
  ItemSeries s;
  for (const auto& [doc, first] : loaded[0].first) {
    double v = 0, b = 0;
    int64_t only_v = 0, only_b = 0;
    bool everywhere = true;
    for (const auto& [vi, bi] : loaded) {
      auto a = vi.find(doc), c = bi.find(doc);
      if (a == vi.end() || c == bi.end() || !(a->second.*measure) || !(c->second.*measure)) {
        everywhere = false;
        break;
      }
      v += *(a->second.*measure);
      b += *(c->second.*measure);
      only_v += *(a->second.*measure) > *(c->second.*measure);
      only_b += *(a->second.*measure) < *(c->second.*measure);
    }
    if (!everywhere) continue;
    s.variant.push_back(v / static_cast<double>(loaded.size()));
    s.baseline.push_back(b / static_cast<double>(loaded.size()));
    s.only_variant += only_v;
    s.only_baseline += only_b;
  }
  return s;
}


}  // namespace attnbench::results
