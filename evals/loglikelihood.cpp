#include "evals/loglikelihood.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

#include "evals/progress.h"

namespace attnbench::evals {

namespace {

std::string shape_string(const torch::Tensor& t) {
  std::string s = "[";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

// Scores one request from the logits of the last `span` input positions of its row, given as
// consecutive pieces [n_k, >= V] (a shared prefix's rows, then the row's own: never copied into
// one tensor): its continuation's logits are the last contlen rows. log p(token) = logit[token] -
// logsumexp(row), taken in the logits' dtype (float32), as lm-eval's log_softmax, and summed in
// float64. Greedy (lm-eval: every continuation token is the argmax of its row of log-probs) is read
// from the logits themselves: log_softmax is monotone per row, and torch's argmax returns the first
// maximum, as lm-eval's does. (Converting the rows to float64 first cost half of a small model's
// evaluation in allocation and memory traffic: contlen x 50257 doubles per request.)
Loglikelihood score(const std::vector<torch::Tensor>& span, int64_t contlen,
                    const std::vector<int64_t>& continuation, int64_t vocab) {
  Loglikelihood out;
  out.is_greedy = true;
  for (int64_t token : continuation) {
    if (token < 0 || token >= vocab) {
      throw std::runtime_error("continuation token " + std::to_string(token) +
                               " is outside the model's vocabulary of " + std::to_string(vocab));
    }
  }
  int64_t rows_after = 0;  // rows of the pieces after the current one
  for (auto piece = span.rbegin(); piece != span.rend() && rows_after < contlen; ++piece) {
    const int64_t n = std::min(piece->size(0), contlen - rows_after);
    const int64_t first_token = contlen - rows_after - n;  // continuation index of the first row
    torch::Tensor rows = piece->narrow(0, piece->size(0) - n, n).narrow(1, 0, vocab);
    torch::Tensor targets = torch::tensor(std::vector<int64_t>(continuation.begin() + first_token,
                                                               continuation.begin() + first_token + n),
                                          torch::kInt64)
                                .unsqueeze(1);
    torch::Tensor logprobs = (rows.gather(1, targets).squeeze(1) - torch::logsumexp(rows, 1))
                                 .to(torch::kFloat64);
    torch::Tensor best = rows.argmax(/*dim=*/1);
    auto lp = logprobs.accessor<double, 1>();
    auto argmax = best.accessor<int64_t, 1>();
    for (int64_t t = 0; t < n; ++t) {
      out.logprob += lp[t];
      if (argmax[t] != continuation[static_cast<size_t>(first_token + t)]) out.is_greedy = false;
    }
    rows_after += n;
  }
  return out;
}

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
  torch::Tensor timed(int64_t rows, int64_t tokens, Pass pass) {
    const auto t0 = std::chrono::steady_clock::now();
    torch::Tensor out = pass();
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
  void score_request(size_t m, const std::vector<torch::Tensor>& span) {
    results[m] = score(span, inputs[m].contlen, requests[m].continuation, vocab);
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
// [V, C] matrix) is amortised, few enough that the logits stay small (512 x 50257 floats, 100 MB).
constexpr int64_t kPendingStateRows = 512;

// One projection for every pending state, then the pending requests scored.
void flush(Scoring& s, DecodingState& head, PendingLogits& pending) {
  if (pending.readers.empty()) return;
  const torch::Tensor logits = s.checked(
      s.timed(0, 0, [&] { return head.logits(torch::cat(pending.states, 0)); }), pending.rows);
  for (const auto& r : pending.readers) {
    std::vector<torch::Tensor> span;
    for (auto [from, n] : r.ranges) span.push_back(logits.narrow(0, from, n));
    for (size_t m : r.members) s.score_request(m, span);
  }
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
    int64_t offset = 0, done = 0;
    for (int64_t b = 0; b < rows; ++b) {
      const int64_t span = in.span[static_cast<size_t>(b)];
      const std::vector<torch::Tensor> row_span = {logits.narrow(0, offset, span)};
      offset += span;
      for (size_t m : batch.groups[static_cast<size_t>(b)].members) {
        s.score_request(indices[m], row_span);
        ++done;
      }
    }
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
