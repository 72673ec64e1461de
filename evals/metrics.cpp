#include "evals/metrics.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "evals/python_random.h"
#include "evals/text_units.h"

namespace attnbench::evals {

size_t argmax_first(const std::vector<double>& values) {
  if (values.empty()) throw std::invalid_argument("argmax of an empty list");
  size_t best = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) return i;
    if (values[i] > values[best]) best = i;
  }
  return best;
}

MultipleChoiceOutcome score_multiple_choice(const std::vector<double>& lls,
                                            const std::vector<std::string>& choices, int gold) {
  if (lls.size() != choices.size() || lls.empty()) {
    throw std::invalid_argument("score_multiple_choice: one log-likelihood per choice expected");
  }
  std::vector<double> normalised(lls.size());
  for (size_t i = 0; i < lls.size(); ++i) {
    // numpy float / int: a zero-length choice gives +-inf (or NaN for 0/0), as in lm-eval.
    normalised[i] = lls[i] / static_cast<double>(codepoint_length(choices[i]));
  }
  MultipleChoiceOutcome out;
  out.pred = argmax_first(lls);
  out.pred_norm = argmax_first(normalised);
  out.acc = static_cast<int>(out.pred) == gold ? 1.0 : 0.0;
  out.acc_norm = static_cast<int>(out.pred_norm) == gold ? 1.0 : 0.0;
  return out;
}

double mean(const std::vector<double>& items) {
  if (items.empty()) throw std::invalid_argument("mean of an empty list");
  double sum = 0;
  for (double x : items) sum += x;
  return sum / static_cast<double>(items.size());
}

double sample_stddev(const std::vector<double>& items) {
  if (items.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  const double mu = mean(items);
  double ss = 0;
  for (double x : items) ss += (x - mu) * (x - mu);
  return std::sqrt(ss / static_cast<double>(items.size() - 1));
}

double mean_stderr(const std::vector<double>& items) {
  return sample_stddev(items) / std::sqrt(static_cast<double>(items.size()));
}

double perplexity(const std::vector<double>& items) { return std::exp(-mean(items)); }

double weighted_mean(const std::vector<WeightedLoglikelihood>& items) {
  double ll = 0, weight = 0;
  for (const auto& it : items) {
    ll += it.loglikelihood;
    weight += it.weight;
  }
  return ll / weight;
}

double weighted_perplexity(const std::vector<WeightedLoglikelihood>& items) {
  return std::exp(-weighted_mean(items));
}

double bits_per_byte(const std::vector<WeightedLoglikelihood>& items) {
  return -weighted_mean(items) / std::log(2.0);
}

double bits_per_byte_stderr(const std::vector<WeightedLoglikelihood>& items) {
  if (items.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  const double ratio = weighted_mean(items);
  double weight = 0, ss = 0;
  for (const auto& it : items) {
    const double residual = it.loglikelihood - ratio * it.weight;
    ss += residual * residual;
    weight += it.weight;
  }
  const double n = static_cast<double>(items.size());
  return std::sqrt(n / (n - 1) * ss) / weight / std::log(2.0);
}

double bootstrap_stderr(const std::function<double(const std::vector<double>&)>& statistic,
                        const std::vector<double>& items, int64_t iters) {
  if (iters <= 0 || items.empty()) return std::numeric_limits<double>::quiet_NaN();
  const int64_t chunk = std::min<int64_t>(1000, iters), chunks = iters / chunk;
  std::vector<double> replicates(static_cast<size_t>(chunks * chunk));
  // Each chunk has its own generator (seeded with its index, as lm-eval's pool workers are), so
  // chunks run in parallel and the replicates do not depend on the number of threads.
  at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> resample(items.size());
    for (int64_t i = begin; i < end; ++i) {
      PythonRandom rng(static_cast<uint64_t>(i));
      for (int64_t r = 0; r < chunk; ++r) {
        for (auto& x : resample) {
          x = items[static_cast<size_t>(std::floor(rng.random() * static_cast<double>(items.size())))];
        }
        replicates[static_cast<size_t>(i * chunk + r)] = statistic(resample);
      }
    }
  });
  return sample_stddev(replicates);
}

}  // namespace attnbench::evals
