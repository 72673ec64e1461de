// A progress line for long evaluations: requests done (the unit the model works in, as lm-eval's
// "Running loglikelihood requests" bar counts), the task's items (documents) per second and the ETA.
// On a terminal it redraws one live line (at most 10 times a second); otherwise it prints a plain
// line every `interval_s`.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace attnbench::evals {

class ProgressBar {
 public:
  // `out` nullptr = silent. `live` = redraw in place (pass isatty(fileno(out))).
  ProgressBar(std::FILE* out, bool live, double interval_s = 30.0);
  // `total` requests for `items` documents (a document has one request per choice or window).
  void start(const std::string& label, int64_t total, int64_t items);
  void advance(int64_t requests);
  void finish();
  // The printed line for the given state: "hellaswag 17395/40168 requests (10042 items) 10.2 items/s
  // ETA 9m18s", or "lambada_openai 120/5153 items 35.2 items/s ETA 2m23s" when every item is one
  // request. items/s = requests/s x items / requests.
  static std::string format(const std::string& label, int64_t done, int64_t total, int64_t items,
                            double elapsed_s);

 private:
  std::FILE* out_;
  bool live_;
  double interval_s_;
  std::string label_;
  int64_t total_ = 0, items_ = 0, done_ = 0;
  std::chrono::steady_clock::time_point start_, last_print_;
  void print(bool final);
};

// Whether `f` is a terminal (progress bars redraw in place there).
bool is_terminal(std::FILE* f);

}  // namespace attnbench::evals
