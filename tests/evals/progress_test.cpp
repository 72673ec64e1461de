// The evaluation progress line: requests are what the model works through, items (documents) per
// second is what a user compares with the task's size, and the ETA follows the request rate.
#include <cstdio>

#include <catch2/catch.hpp>

#include "evals/progress.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace progress_test {

using attnbench::evals::ProgressBar;

CATCH_TEST_CASE("the progress line converts the request rate into items per second") {
  // HellaSwag: 4 requests per item; 4000 of 40168 requests in 100 s = 40 requests/s = 10 items/s,
  // 36168 requests left at 40/s = 904.2 s = 15m04s.
  CATCH_CHECK(ProgressBar::format("hellaswag", 4000, 40168, 10042, 100.0) ==
              "hellaswag 4000/40168 requests (10042 items) 10.0 items/s ETA 15m04s");
  // One request per item: the line counts items only.
  CATCH_CHECK(ProgressBar::format("lambada_openai", 120, 5153, 5153, 4.0) ==
              "lambada_openai 120/5153 items 30.0 items/s ETA 2m48s");
  // Done: ETA 0s; nothing done yet: no rate, unknown ETA.
  CATCH_CHECK(ProgressBar::format("copa", 200, 200, 100, 2.0) ==
              "copa 200/200 requests (100 items) 50.0 items/s ETA 0s");
  CATCH_CHECK(ProgressBar::format("piqa", 0, 3676, 1838, 0.0) ==
              "piqa 0/3676 requests (1838 items) 0.0 items/s ETA ?");
}

CATCH_TEST_CASE("a progress bar without an output prints nothing and a finished one prints its line") {
  ProgressBar silent(nullptr, false);
  silent.start("arc_easy", 8, 2);
  silent.advance(8);
  silent.finish();  // must not touch a null FILE*

  std::FILE* f = std::tmpfile();
  CATCH_REQUIRE(f != nullptr);
  ProgressBar bar(f, /*live=*/false, /*interval_s=*/3600.0);
  bar.start("arc_easy", 8, 2);
  bar.advance(3);  // inside the interval: no line yet
  bar.advance(5);
  bar.finish();
  std::rewind(f);
  char buf[256] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  const std::string text(buf, n);
  CATCH_CHECK(text.rfind("arc_easy 8/8 requests (2 items) ", 0) == 0);
  CATCH_CHECK(text.find("ETA 0s\n") != std::string::npos);
  CATCH_CHECK(text.find('\n') == text.size() - 1);  // exactly one line
}

}  // namespace progress_test
