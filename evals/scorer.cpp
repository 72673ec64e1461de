#include "evals/scorer.h"

#include <cmath>

namespace attnbench::evals {

std::optional<double> stderr_or_none(double v) {
  if (std::isnan(v)) return std::nullopt;
  return v;
}

std::runtime_error document_error(const std::string& task, const Doc& doc, const std::string& what) {
  return std::runtime_error("task " + task + ": document " + std::to_string(doc.index) + " " + what);
}

void throw_undefined_metric(const std::string& task, const std::string& metric) {
  throw std::logic_error("task " + task + ": metric '" + metric +
                         "' is not defined for its output type");
}

}  // namespace attnbench::evals
