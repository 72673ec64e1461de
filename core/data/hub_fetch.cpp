#include "core/data/hub_fetch.h"

#include <curl/curl.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/common/sha256.h"

namespace attnbench::data {
namespace fs = std::filesystem;

namespace {

struct HttpAnswer {
  long status = 0;
  std::string body;
};

std::string escape(CURL* curl, const std::string& s) {
  std::unique_ptr<char, void (*)(void*)> e(curl_easy_escape(curl, s.c_str(), static_cast<int>(s.size())),
                                           curl_free);
  return e.get();
}

size_t append(char* p, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(p, size * n);
  return size * n;
}

// One GET; throws NetworkError for transport failures (connection refused, dropped, timed out).
HttpAnswer get(const std::string& url, long timeout_s) {
  static const bool global_init = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  (void)global_init;
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  HttpAnswer a;
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, append);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &a.body);
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT, timeout_s);
  curl_easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT, 20L);
  curl_easy_setopt(curl.get(), CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_USERAGENT, "attnbench-data-fetch");
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  CURLcode rc = curl_easy_perform(curl.get());
  if (rc != CURLE_OK) throw NetworkError(std::string(curl_easy_strerror(rc)));
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &a.status);
  return a;
}

// GET with retries: transport errors, 429 and 5xx are retried with exponential backoff; other
// statuses are final. `accept` says whether a 200 body is complete (a cut-off body is retried).
std::string get_with_retries(const std::string& url, const FetchOptions& o,
                             const std::function<bool(const std::string&)>& accept) {
  double wait = o.backoff_s;
  std::string last;
  for (int attempt = 0; attempt <= o.retries; ++attempt) {
    if (attempt > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
      wait *= 2;
    }
    HttpAnswer a;
    try {
      a = get(url, o.timeout_s);
    } catch (const NetworkError& e) {
      last = e.what();
      continue;
    }
    if (a.status == 429 || a.status >= 500) {
      last = "HTTP " + std::to_string(a.status);
      continue;
    }
    if (a.status != 200) {
      throw std::runtime_error("GET " + url + " answered HTTP " + std::to_string(a.status) + ": " +
                               a.body.substr(0, 300));
    }
    if (accept(a.body)) return a.body;
    last = "answer incomplete or not the expected content (" + std::to_string(a.body.size()) +
           " bytes)";  // a cut-off body: retry
  }
  throw NetworkError("GET " + url + " failed after " + std::to_string(o.retries + 1) +
                     " tries: " + last);
}

nlohmann::json get_page(const std::string& url, const FetchOptions& o) {
  nlohmann::json page;
  get_with_retries(url, o, [&](const std::string& body) {
    try {
      page = nlohmann::json::parse(body);
      return true;
    } catch (const nlohmann::json::exception&) {
      return false;
    }
  });
  return page;
}

// Complete lines already in a partial download; a torn last line (killed mid-write) is cut off.
int64_t recover_partial(const fs::path& partial) {
  if (!fs::exists(partial)) return 0;
  std::ifstream in(partial, std::ios::binary);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t end = content.rfind('\n');
  size_t keep = end == std::string::npos ? 0 : end + 1;
  if (keep != content.size()) fs::resize_file(partial, keep);
  int64_t lines = 0;
  for (size_t i = 0; i < keep; ++i) lines += content[i] == '\n';
  return lines;
}

// The row offset to resume a split's download at: recovers the partial file's complete lines
// (counted in r.rows) and reads the cursor saved beside it, restoring r.skipped_truncated.
int64_t resume_offset(const fs::path& partial, const fs::path& cursor_file, FetchResult& r) {
  int64_t lines = recover_partial(partial);
  int64_t offset = 0;
  if (lines > 0 && fs::exists(cursor_file)) {
    std::ifstream(cursor_file) >> offset >> r.skipped_truncated;
    if (offset < lines) offset = lines;  // a cursor older than the data: trust the data
    r.resumed = true;
  } else if (lines > 0) {
    offset = lines;
    r.resumed = true;
  }
  r.rows = lines;
  return offset;
}

// The rows API URL for a split, without offset and length.
std::string rows_url(const HubSplit& s, const FetchOptions& o) {
  std::unique_ptr<CURL, void (*)(CURL*)> esc(curl_easy_init(), curl_easy_cleanup);
  return o.endpoint + "/rows?dataset=" + escape(esc.get(), s.dataset) +
         "&config=" + escape(esc.get(), s.config) + "&split=" + escape(esc.get(), s.split);
}

// Writes a page's rows as JSON lines, skipping (and counting) rows with truncated cells.
void write_rows(const nlohmann::json& rows, std::ofstream& out, FetchResult& r) {
  for (const auto& row : rows) {
    if (row.contains("truncated_cells") && !row["truncated_cells"].empty()) {
      ++r.skipped_truncated;  // the API cut a cell: writing it would corrupt the text
      continue;
    }
    out << row.at("row").dump() << '\n';
    ++r.rows;
  }
}

}  // namespace

std::string fetch_file(const std::string& url, const fs::path& out_file,
                       const std::string& expected_sha256, const FetchOptions& o) {
  if (fs::exists(out_file) && sha256_file(out_file) == expected_sha256) return expected_sha256;
  fs::create_directories(out_file.parent_path());
  // The checksum is the completeness test: a body cut short by a dropped connection is retried.
  std::string body = get_with_retries(url, o, [&](const std::string& b) {
    return sha256_hex(b) == expected_sha256;
  });
  fs::path partial = out_file;
  partial += ".partial";
  std::ofstream(partial, std::ios::binary | std::ios::trunc).write(body.data(), body.size());
  fs::rename(partial, out_file);
  return expected_sha256;
}

FetchResult fetch_split(const HubSplit& s, const FetchOptions& o) {
  FetchResult r;
  fs::create_directories(s.out_file.parent_path());
  fs::path partial = s.out_file;
  partial += ".partial";
  // Rows already written (the API's row_idx counts every row, truncated or not, so the resume
  // offset is kept beside the data).
  fs::path cursor_file = s.out_file;
  cursor_file += ".partial.offset";
  int64_t offset = resume_offset(partial, cursor_file, r);

  const std::string base = rows_url(s, o);
  std::ofstream out;  // opened at the first page: a failed first request leaves no file behind
  int64_t total = -1;
  while (true) {
    int64_t want = o.page_rows;
    if (s.max_rows >= 0) want = std::min(want, s.max_rows - offset);
    if (total >= 0) want = std::min(want, total - offset);
    if (want <= 0) break;
    nlohmann::json page =
        get_page(base + "&offset=" + std::to_string(offset) + "&length=" + std::to_string(want), o);
    if (!page.contains("rows") || !page["rows"].is_array()) {
      throw std::runtime_error("rows API answer for " + s.dataset + " has no \"rows\" array");
    }
    if (page.contains("num_rows_total")) total = page["num_rows_total"].get<int64_t>();
    const auto& rows = page["rows"];
    if (rows.empty()) break;
    if (!out.is_open()) out.open(partial, std::ios::binary | std::ios::app);
    write_rows(rows, out, r);
    offset += static_cast<int64_t>(rows.size());
    out.flush();
    std::ofstream(cursor_file, std::ios::trunc) << offset << ' ' << r.skipped_truncated << '\n';
    if (o.progress) o.progress(r.rows, s.max_rows >= 0 && total >= 0 ? std::min(total, s.max_rows)
                                                     : (s.max_rows >= 0 ? s.max_rows : total));
  }
  out.close();
  if (!fs::exists(partial)) std::ofstream(partial, std::ios::binary);  // an empty split
  r.sha256 = sha256_file(partial);
  fs::rename(partial, s.out_file);
  fs::remove(cursor_file);
  return r;
}

}  // namespace attnbench::data
