#include "evals/loglikelihood.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

#include "evals/progress.h"
#include "evals/token_scores.h"

namespace attnbench::evals {

namespace {

std::string shape_string(const torch::Tensor& t) {
  std::string s = "[";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

// The (row, target) pairs of requests scored together (token_scores.h), and whose they are: a
// request reads the last contlen rows of its ranges (consecutive row ranges of one tensor: a
// shared prefix's rows, then the row's own; never copied into one), one pair per continuation
// token.
struct TokenPairs {
  std::vector<int64_t> rows, targets;
  std::vector<std::pair<size_t, size_t>> owners;  // (request, its first pair)

  torch::Tensor rows_tensor() const { return torch::tensor(rows, torch::kInt64); }
  torch::Tensor targets_tensor() const { return torch::tensor(targets, torch::kInt64); }
};

// What every scoring pass shares.
struct Scoring {
  LanguageModel& model;
  const std::vector<TokenRequest>& requests;
  const std::vector<ModelInput>& inputs;
  std::vector<Loglikelihood>& results;
  ProgressBar* progress;
  ForwardStats* stats;
  int64_t vocab;

  // Runs `pass` (a model call), timed, counting `rows` rows and `tokens` input positions.
  template <typename Pass>
  auto timed(int64_t rows, int64_t tokens, Pass pass) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = pass();
    if (stats) {
      stats->forward_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      stats->forward_calls += 1;
      stats->rows += rows;
      stats->tokens += tokens;
    }
    return out;
  }
  // Logits for `n_positions` positions, on the CPU; an error when the model returned another shape.
  torch::Tensor checked(const torch::Tensor& logits, int64_t n_positions) const {
    torch::Tensor out = logits.to(torch::kCPU).contiguous();
    if (out.dim() != 2 || out.size(0) != n_positions || out.size(1) < vocab) {
      throw std::runtime_error("the model returned logits of shape " + shape_string(out) +
                               " for " + std::to_string(n_positions) + " positions; expected [" +
                               std::to_string(n_positions) + ", >= " + std::to_string(vocab) + "]");
    }
    return out;
  }
  // Request m reads the last contlen rows of `ranges` ((first row, rows), in order).
  void add_request(TokenPairs& pairs, size_t m,
                   const std::vector<std::pair<int64_t, int64_t>>& ranges) const {
    const std::vector<int64_t>& continuation = requests[m].continuation;
    for (int64_t token : continuation) {
      if (token < 0 || token >= vocab) {
        throw std::runtime_error("continuation token " + std::to_string(token) +
                                 " is outside the model's vocabulary of " + std::to_string(vocab));
      }
    }
    std::vector<int64_t> rows;
    for (auto [first, n] : ranges)
      for (int64_t r = first; r < first + n; ++r) rows.push_back(r);
    const int64_t contlen = inputs[m].contlen;
    pairs.owners.emplace_back(m, pairs.rows.size());
    pairs.rows.insert(pairs.rows.end(), rows.end() - contlen, rows.end());
    pairs.targets.insert(pairs.targets.end(), continuation.end() - contlen, continuation.end());
  }
  // Each owner's log-likelihood: its pairs' float32 log-probabilities summed in float64, as lm-eval
  // sums them; greedy when every continuation token is its row's argmax.
  void finish(const TokenPairs& pairs, const TokenScores& scores) {
    const auto n = static_cast<int64_t>(pairs.rows.size());
    if (scores.logprob.numel() != n || scores.greedy.numel() != n) {
      throw std::runtime_error("the model scored " + std::to_string(scores.logprob.numel()) +
                               " tokens; expected " + std::to_string(n));
    }
    const torch::Tensor lp64 = scores.logprob.to(torch::kCPU, torch::kFloat64).contiguous();
    const torch::Tensor greedy = scores.greedy.to(torch::kCPU, torch::kBool).contiguous();
    const double* lp = lp64.data_ptr<double>();
    const bool* g = greedy.data_ptr<bool>();
    for (auto [m, first] : pairs.owners) {
      Loglikelihood out;
      out.is_greedy = true;
      for (int64_t k = 0; k < inputs[m].contlen; ++k) {
        out.logprob += lp[static_cast<int64_t>(first) + k];
        out.is_greedy = out.is_greedy && g[static_cast<int64_t>(first) + k];
      }
      results[m] = out;
    }
  }
};

torch::Tensor positions_tensor(std::vector<int64_t>& flat) {
  const auto n = static_cast<int64_t>(flat.size() / 2);
  return torch::from_blob(flat.data(), {n, 2}, torch::kInt64).clone();
}

// Output states of several model calls waiting for one vocabulary projection, and which rows of
// them each request reads.
struct PendingLogits {
  struct Reader {
    std::vector<size_t> members;
    std::vector<std::pair<int64_t, int64_t>> ranges;  // (first state row, rows), in order
  };
  std::vector<torch::Tensor> states;
  int64_t rows = 0;
  std::vector<Reader> readers;
  size_t requests = 0;

  int64_t add(const torch::Tensor& st) {
    states.push_back(st);
    rows += st.size(0);
    return rows - st.size(0);
  }
};

// Output states projected together: enough rows that the projection's per-call cost (packing the
// [V, C] matrix) is amortised. The head reduces them a vocabulary chunk at a time
// (DecodingState::score_tokens), so their logits never exist at once.
constexpr int64_t kPendingStateRows = 512;

// One projection for every pending state, scored as it goes, then the pending requests' sums.
void flush(Scoring& s, DecodingState& head, PendingLogits& pending) {
  if (pending.readers.empty()) return;
  TokenPairs pairs;
  for (const auto& r : pending.readers)
    for (size_t m : r.members) s.add_request(pairs, m, r.ranges);
  const TokenScores scores = s.timed(0, 0, [&] {
    return head.score_tokens(torch::cat(pending.states, 0), pairs.rows_tensor(),
                             pairs.targets_tensor(), s.vocab);
  });
  s.finish(pairs, scores);
  if (s.progress) s.progress->advance(static_cast<int64_t>(pending.requests));
  pending = PendingLogits{};
}

// One planned batch of full rows, right-padded with token 0 (pad_and_concat pads with zeros:
// causal rows never see it), and the positions each row's members read: the last `span` of its
// input, span = its longest member continuation (members share the input, so one span serves them
// all).
struct FullRowBatch {
  torch::Tensor input;      // [rows, width] int64
  torch::Tensor positions;  // [N, 2] (row, position)
  std::vector<int64_t> span;
  int64_t tokens = 0;       // input positions, padding excluded
};

FullRowBatch full_row_batch(const Scoring& s, const std::vector<size_t>& indices,
                            const PlannedBatch& batch) {
  FullRowBatch out;
  const auto rows = static_cast<int64_t>(batch.groups.size());
  int64_t width = 0;
  for (const auto& g : batch.groups) {
    const auto len = static_cast<int64_t>(s.inputs[indices[g.members[0]]].tokens.size());
    width = std::max(width, len);
    out.tokens += len;
  }
  out.input = torch::zeros({rows, width}, torch::kInt64);
  auto acc = out.input.accessor<int64_t, 2>();
  out.span.assign(static_cast<size_t>(rows), 0);
  std::vector<int64_t> flat;
  for (int64_t b = 0; b < rows; ++b) {
    const auto& group = batch.groups[static_cast<size_t>(b)];
    const auto& t = s.inputs[indices[group.members[0]]].tokens;
    for (size_t i = 0; i < t.size(); ++i) acc[b][static_cast<int64_t>(i)] = t[i];
    auto& sp = out.span[static_cast<size_t>(b)];
    for (size_t m : group.members) sp = std::max(sp, s.inputs[indices[m]].contlen);
    for (auto p = static_cast<int64_t>(t.size()) - sp; p < static_cast<int64_t>(t.size()); ++p) {
      flat.push_back(b);
      flat.push_back(p);
    }
  }
  out.positions = positions_tensor(flat);
  return out;
}

// lm-eval's schedule: the requests `indices` as full rows, grouped by shared input (one row per
// group), in planned batches. With `head` (a model with a decoding state) each batch's output
// states wait in `pending` for one projection shared with other batches (flushed here when enough
// have gathered); without, each batch gets its logits from logits_at.
void score_full_rows(Scoring& s, const std::vector<size_t>& indices, int64_t batch_size,
                     DecodingState* head, PendingLogits& pending) {
  std::vector<TokenRequest> subset;
  for (size_t i : indices) subset.push_back(s.requests[i]);
  for (const PlannedBatch& batch : plan_batches(subset, batch_size)) {
    const FullRowBatch in = full_row_batch(s, indices, batch);
    const auto rows = static_cast<int64_t>(batch.groups.size());
    const int64_t n = in.positions.size(0);
    if (head) {  // a fresh state fed once is the full row
      int64_t at = pending.add(s.timed(rows, in.tokens, [&] {
        return s.model.start_decoding()->feed_states(in.input, in.positions);
      }));
      for (int64_t b = 0; b < rows; ++b) {
        const auto& members = batch.groups[static_cast<size_t>(b)].members;
        PendingLogits::Reader reader{{}, {{at, in.span[static_cast<size_t>(b)]}}};
        for (size_t m : members) reader.members.push_back(indices[m]);
        at += in.span[static_cast<size_t>(b)];
        pending.requests += members.size();
        pending.readers.push_back(std::move(reader));
      }
      if (pending.rows >= kPendingStateRows) flush(s, *head, pending);
      continue;
    }
    torch::Tensor logits = s.checked(s.timed(rows, in.tokens, [&] {
      return n > 0 ? s.model.logits_at(in.input, in.positions) : torch::zeros({0, s.vocab});
    }), n);
    TokenPairs pairs;
    int64_t offset = 0, done = 0;
    for (int64_t b = 0; b < rows; ++b) {
      const int64_t span = in.span[static_cast<size_t>(b)];
      for (size_t m : batch.groups[static_cast<size_t>(b)].members) {
        s.add_request(pairs, indices[m], {{offset, span}});
        ++done;
      }
      offset += span;
    }
    s.finish(pairs, token_scores(logits, pairs.rows_tensor(), pairs.targets_tensor(), s.vocab));
    if (s.progress) s.progress->advance(done);
  }
}

// One row continued after a window's prefix p: a distinct model input of a group (its members
// share it) from position p on, the window row it continues, and how many logits its members read
// (span, ending at the input's last position).
struct SuffixRow {
  std::vector<int64_t> suffix;
  int64_t inplen = 0, span = 0;
  int64_t parent = 0;       // the group's row in the window's prefix batch
  int64_t first_state = 0;  // where its continued states start in the pending states
  std::vector<size_t> members;

  // The first position whose logits its members read.
  int64_t first_read() const { return inplen - span; }
  // The positions read at or after p, i.e. from the continued pass.
  int64_t continued_reads(int64_t p) const { return inplen - std::max(first_read(), p); }
};

void add_suffix_rows(const Scoring& s, const PrefixGroup& g, int64_t p, int64_t parent,
                     std::vector<SuffixRow>& rows) {
  std::map<std::vector<int64_t>, size_t> by_input;
  for (size_t m : g.members) {
    const ModelInput& in = s.inputs[m];
    auto [it, inserted] = by_input.emplace(in.tokens, rows.size());
    if (inserted) {
      rows.push_back({{in.tokens.begin() + p, in.tokens.end()},
                      static_cast<int64_t>(in.tokens.size()), 0, parent, 0, {}});
    }
    rows[it->second].span = std::max(rows[it->second].span, in.contlen);
    rows[it->second].members.push_back(m);
  }
}

// The rows `batch` (indices into `rows`), right-padded as above, continued from their parents in
// `prefix`; their states at the read positions go to `pending`.
void continue_rows(Scoring& s, const DecodingState& prefix, std::vector<SuffixRow>& rows,
                   const std::vector<size_t>& batch, int64_t p, PendingLogits& pending) {
  const auto n = static_cast<int64_t>(batch.size());
  const auto width = static_cast<int64_t>(rows[batch.front()].suffix.size());  // longest first
  torch::Tensor input = torch::zeros({n, width}, torch::kInt64);
  std::vector<int64_t> flat, parents;
  int64_t tokens = 0;
  for (int64_t b = 0; b < n; ++b) {
    const SuffixRow& r = rows[batch[static_cast<size_t>(b)]];
    std::copy(r.suffix.begin(), r.suffix.end(), input[b].data_ptr<int64_t>());
    tokens += static_cast<int64_t>(r.suffix.size());
    parents.push_back(r.parent);
    for (int64_t q = r.inplen - r.continued_reads(p); q < r.inplen; ++q) {
      flat.push_back(b);
      flat.push_back(q - p);
    }
  }
  torch::Tensor positions = positions_tensor(flat);
  int64_t at = pending.add(s.timed(n, tokens, [&] {
    return prefix.select(parents)->feed_states(input, positions);
  }));
  for (size_t r : batch) {
    rows[r].first_state = at;
    at += rows[r].continued_reads(p);
  }
}

// A window of prefix groups (request_plan.h): each group's first p tokens in one batch, the states
// its requests read there computed once for all of them; then every row with tokens after p
// continued from its group's cache, in batches of similar lengths. The states wait in `pending`.
void score_window(Scoring& s, const std::vector<PrefixGroup>& groups, const PrefixWindow& w,
                  int64_t batch_size, PendingLogits& pending) {
  const int64_t p = w.prefix, G = static_cast<int64_t>(w.groups.size());
  torch::Tensor input = torch::empty({G, p}, torch::kInt64);
  std::vector<int64_t> flat;
  std::vector<SuffixRow> rows;
  // Group g's prefix states cover positions first_read[g]..p-1, from prefix_state[g] on.
  std::vector<int64_t> first_read(static_cast<size_t>(G), p), prefix_state(static_cast<size_t>(G));
  for (int64_t g = 0; g < G; ++g) {
    const PrefixGroup& group = groups[w.groups[static_cast<size_t>(g)]];
    const std::vector<int64_t>& tokens = s.inputs[group.members.front()].tokens;
    std::copy(tokens.begin(), tokens.begin() + p, input[g].data_ptr<int64_t>());
    const size_t first_row = rows.size();
    add_suffix_rows(s, group, p, g, rows);
    auto& from = first_read[static_cast<size_t>(g)];
    for (size_t r = first_row; r < rows.size(); ++r) from = std::min(from, rows[r].first_read());
    prefix_state[static_cast<size_t>(g)] = static_cast<int64_t>(flat.size() / 2);
    for (int64_t t = from; t < p; ++t) flat.insert(flat.end(), {g, t});
    pending.requests += group.members.size();
  }
  std::unique_ptr<DecodingState> prefix = s.model.start_decoding();
  torch::Tensor positions = positions_tensor(flat);
  const int64_t base = pending.add(s.timed(G, G * p, [&] { return prefix->feed_states(input, positions); }));

  std::vector<int64_t> lengths;
  std::vector<size_t> continued;  // rows with tokens after the prefix
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].suffix.empty()) continue;
    continued.push_back(r);
    lengths.push_back(static_cast<int64_t>(rows[r].suffix.size()));
  }
  for (std::vector<size_t> batch : plan_length_batches(lengths, batch_size)) {
    for (size_t& b : batch) b = continued[b];
    continue_rows(s, *prefix, rows, batch, p, pending);
  }
  for (const SuffixRow& r : rows) {
    // The row reads positions inplen - span .. inplen - 1: those before p from its group's prefix
    // states, then the continued ones.
    PendingLogits::Reader reader{r.members, {}};
    const auto g = static_cast<size_t>(r.parent);
    const int64_t start = r.first_read();
    if (start < p && r.span > 0) {
      reader.ranges.emplace_back(base + prefix_state[g] + start - first_read[g],
                                 std::min(r.inplen, p) - start);
    }
    if (r.continued_reads(p) > 0) reader.ranges.emplace_back(r.first_state, r.continued_reads(p));
    pending.readers.push_back(std::move(reader));
  }
}

// Positions lm-eval's schedule computes: one full row per distinct model input.
int64_t full_row_tokens(const std::vector<ModelInput>& inputs) {
  std::set<std::vector<int64_t>> distinct;
  int64_t tokens = 0;
  for (const ModelInput& in : inputs) {
    if (distinct.insert(in.tokens).second) tokens += static_cast<int64_t>(in.tokens.size());
  }
  return tokens;
}

}  // namespace

std::vector<Loglikelihood> compute_loglikelihoods(LanguageModel& model,
                                                  const std::vector<TokenRequest>& requests,
                                                  int64_t batch_size, ProgressBar* progress,
                                                  ForwardStats* stats, bool reuse_prefixes) {
  torch::NoGradGuard no_grad;
  std::vector<Loglikelihood> results(requests.size());
  std::vector<ModelInput> inputs;
  inputs.reserve(requests.size());
  for (const auto& r : requests) inputs.push_back(model_input(r, model.max_length()));
  Scoring s{model, requests, inputs, results, progress, stats, model.vocab_size()};

  // `head` projects the pending states of every pass; a model without a cache gets full rows with
  // their logits per batch (logits_at).
  std::unique_ptr<DecodingState> head = model.start_decoding();
  PrefixPlan plan;
  if (head && reuse_prefixes) {
    plan = plan_prefix_groups(requests, inputs);
  } else {
    for (size_t i = 0; i < requests.size(); ++i) plan.rest.push_back(i);
  }
  PendingLogits pending;
  for (const PrefixWindow& w : plan_prefix_windows(plan.groups, batch_size)) {
    score_window(s, plan.groups, w, batch_size, pending);
    if (pending.rows >= kPendingStateRows) flush(s, *head, pending);
  }
  score_full_rows(s, plan.rest, batch_size, head.get(), pending);
  if (head) flush(s, *head, pending);
  if (stats) stats->tokens_full += full_row_tokens(inputs);
  return results;
}

}  // namespace attnbench::evals
