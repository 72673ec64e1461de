// Downloads dataset splits through the Hugging Face datasets-server rows API
//   GET {endpoint}/rows?dataset=D&config=C&split=S&offset=O&length=L
//   -> {"rows": [{"row_idx": i, "row": {...}, "truncated_cells": [...]}, ...], "num_rows_total": N}
// and writes them in the hub's JSONL layout (one `row` object per line), which the task loaders and
// `data prepare` read. Resumable (complete lines so far live in <file>.partial, a rerun continues
// from there), retried with exponential backoff on connection errors and 429/5xx answers, and
// checksummed (sha256 in the fetch manifest). A final file appears only once it is complete.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>

namespace attnbench::data {

// The endpoint could not be reached (after every retry): no network, DNS, refused, dropped.
class NetworkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct HubSplit {
  std::string dataset;              // e.g. "allenai/ai2_arc"
  std::string config;               // e.g. "ARC-Easy"
  std::string split;                // e.g. "test"
  std::filesystem::path out_file;   // where the JSONL goes
  int64_t max_rows = -1;            // -1 = the whole split
};

struct FetchOptions {
  std::string endpoint = "https://datasets-server.huggingface.co";
  int retries = 5;            // per request, after the first try
  double backoff_s = 1.0;     // first wait; doubles each retry
  int64_t page_rows = 100;    // the rows API serves at most 100 rows per request
  long timeout_s = 60;        // per request
  // Progress callback: (rows written so far, rows expected or -1).
  std::function<void(int64_t, int64_t)> progress;
};

struct FetchResult {
  int64_t rows = 0;
  int64_t skipped_truncated = 0;  // rows the API served with truncated cells (not written)
  std::string sha256;
  bool resumed = false;           // continued from an earlier partial download
};

// Fetches one split into split.out_file. Throws NetworkError when the endpoint cannot be reached
// after all retries, std::runtime_error for other failures (bad answers, HTTP 4xx).
FetchResult fetch_split(const HubSplit& split, const FetchOptions& options);

// Downloads one file from `url` into `out_file` (through <file>.partial, with the retries of
// `options`) and checks its sha256 against `expected_sha256`; a mismatch throws and keeps nothing.
// An existing file with the expected checksum is kept without a request. Returns the sha256.
std::string fetch_file(const std::string& url, const std::filesystem::path& out_file,
                       const std::string& expected_sha256, const FetchOptions& options);

}  // namespace attnbench::data
