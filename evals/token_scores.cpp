#include "evals/token_scores.h"


#include "kernels/cpu/vocab_scores.h"

namespace attnbench::evals {

TokenScores token_scores(const torch::Tensor& logits, const torch::Tensor& rows,
                         const torch::Tensor& targets, int64_t vocab) {
  const torch::Tensor l = logits.narrow(1, 0, vocab).to(torch::kFloat32);
  const torch::Tensor r = rows.to(l.device()), t = targets.to(l.device());
  const torch::Tensor picked = l.index({r, t});
  const torch::Tensor lse = torch::logsumexp(l, 1).index_select(0, r);
  const torch::Tensor best = l.argmax(1).index_select(0, r);  // the first maximum, as lm-eval's
  return {(picked - lse).cpu(), best.eq(t).cpu()};
}

namespace {

// head_token_scores on the CPU in float32 (kernels/cpu/vocab_scores.h).
TokenScores cpu_head_token_scores(const torch::Tensor& h, const torch::Tensor& weight,
                                  const torch::Tensor& rows, const torch::Tensor& targets,
                                  int64_t vocab) {
  const torch::Tensor r = rows.to(torch::kCPU, torch::kInt64).contiguous();
  const torch::Tensor t = targets.to(torch::kCPU, torch::kInt64).contiguous();
  const torch::Tensor w = weight.narrow(0, 0, vocab).contiguous();
  const int64_t P = r.size(0);
  const kernels::cpu::VocabRowStats stats = kernels::cpu::vocab_row_stats(
      h.data_ptr<float>(), h.size(0), h.size(1), w.data_ptr<float>(), vocab, r.data_ptr<int64_t>(),
      t.data_ptr<int64_t>(), P);
  torch::Tensor logprob = torch::empty({P}, torch::kFloat32);
  torch::Tensor greedy = torch::empty({P}, torch::kBool);
  float* lp = logprob.data_ptr<float>();
  bool* g = greedy.data_ptr<bool>();
  const int64_t* row = r.data_ptr<int64_t>();
  const int64_t* target = t.data_ptr<int64_t>();
  for (int64_t p = 0; p < P; ++p) {
    const auto i = static_cast<size_t>(row[p]);
    // In float32, as lm-eval's log_softmax: logit - logsumexp.
    lp[p] = stats.picked[static_cast<size_t>(p)] - static_cast<float>(stats.lse[i]);
    g[p] = stats.argmax[i] == target[p];
  }
  return {logprob, greedy};
}

}  // namespace

TokenScores head_token_scores(const torch::Tensor& states, const torch::Tensor& weight,
                              const torch::Tensor& rows, const torch::Tensor& targets,
                              int64_t vocab) {
  torch::NoGradGuard no_grad;
  const torch::Tensor h = states.to(weight.scalar_type()).contiguous();
  if (h.device().is_cpu() && h.scalar_type() == torch::kFloat32) {
    return cpu_head_token_scores(h, weight, rows, targets, vocab);
  }
  // Elsewhere (a GPU, other dtypes): the logits at once, scored by the reference.
  return token_scores(torch::mm(h, weight.narrow(0, 0, vocab).t()), rows, targets, vocab);
}

}  // namespace attnbench::evals
