#include "results/sqlite.h"

#include <sqlite3.h>

#include <stdexcept>

#include "core/common/error.h"

namespace attnbench::results {

namespace {
// Writers wait this long for another process's transaction before giving up (SQLITE_BUSY).
constexpr int kBusyTimeoutMs = 30000;
}  // namespace

Db::Db(const std::filesystem::path& path, bool read_only) : path_(path), read_only_(read_only) {
  if (read_only && !std::filesystem::exists(path)) {
    throw UsageError("no results database at " + path.string() +
                     " (run a sweep first, or pass --db PATH or set ATTNBENCH_DB)");
  }
  int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw std::runtime_error("cannot open results database " + path.string() + ": " + msg);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  exec("PRAGMA foreign_keys = ON");
  if (read_only) exec("PRAGMA query_only = ON");
}

Db::Db(Db&& o) noexcept : db_(o.db_), path_(std::move(o.path_)), read_only_(o.read_only_) {
  o.db_ = nullptr;
}

Db::~Db() {
  if (db_) sqlite3_close_v2(db_);
}

void Db::fail(const std::string& what) const {
  throw std::runtime_error(path_.string() + ": " + what + ": " + sqlite3_errmsg(db_));
}

void Db::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw std::runtime_error(path_.string() + ": " + msg + " (in: " + sql.substr(0, 80) + ")");
  }
}

Stmt Db::prepare(const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &s, nullptr) != SQLITE_OK) {
    fail("cannot prepare '" + sql.substr(0, 80) + "'");
  }
  return Stmt(*this, s);
}

int64_t Db::changes() const { return sqlite3_changes(db_); }

Stmt::~Stmt() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Stmt& Stmt::bind(int i, const std::string& v) {
  if (sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT) != SQLITE_OK)
    db_->fail("bind");
  return *this;
}
Stmt& Stmt::bind(int i, int64_t v) {
  if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) db_->fail("bind");
  return *this;
}
Stmt& Stmt::bind(int i, double v) {
  if (sqlite3_bind_double(stmt_, i, v) != SQLITE_OK) db_->fail("bind");
  return *this;
}
Stmt& Stmt::bind(int i, const std::optional<double>& v) { return v ? bind(i, *v) : bind_null(i); }
Stmt& Stmt::bind_null(int i) {
  if (sqlite3_bind_null(stmt_, i) != SQLITE_OK) db_->fail("bind");
  return *this;
}

Stmt& Stmt::bind_column(int i, const Stmt& source, int column) {
  if (sqlite3_bind_value(stmt_, i, sqlite3_column_value(source.stmt_, column)) != SQLITE_OK)
    db_->fail("bind");
  return *this;
}

bool Stmt::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->fail("step");
}

void Stmt::run() {
  while (step()) {
  }
}

void Stmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int Stmt::columns() const { return sqlite3_column_count(stmt_); }
std::string Stmt::column_name(int c) const { return sqlite3_column_name(stmt_, c); }
bool Stmt::is_null(int c) const { return sqlite3_column_type(stmt_, c) == SQLITE_NULL; }
std::string Stmt::text(int c) const {
  const unsigned char* t = sqlite3_column_text(stmt_, c);
  if (!t) return "";
  return std::string(reinterpret_cast<const char*>(t), sqlite3_column_bytes(stmt_, c));
}
int64_t Stmt::integer(int c) const { return sqlite3_column_int64(stmt_, c); }
double Stmt::real(int c) const { return sqlite3_column_double(stmt_, c); }
std::optional<double> Stmt::optional_real(int c) const {
  if (is_null(c)) return std::nullopt;
  return real(c);
}

Transaction::Transaction(Db& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!done_) {
    try {
      db_.exec("ROLLBACK");
    } catch (...) {
      // The transaction may already be gone (SQLite rolls back by itself on some errors).
    }
  }
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace attnbench::results
