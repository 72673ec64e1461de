#include "results/sqlite.h"

#include <sqlite3.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "core/common/error.h"

namespace attnbench::results {

namespace {
// Writers wait this long for another process's transaction before giving up (SQLITE_BUSY).
constexpr int kBusyTimeoutMs = 30000;

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The statement upper-cased, every other character a space, one space before and after: keywords
// are found as " INTO " whatever the spacing and case.
std::string upper_words(const std::string& sql) {
  std::string u;
  for (char c : sql) {
    u += identifier_char(c) ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : ' ';
  }
  return " " + u + " ";
}

// What a failed statement was doing, in the store's words: "writing table evals", "reading table
// runs", else the statement itself (BEGIN, PRAGMA, ...).
std::string subject(const std::string& sql) {
  const std::string u = upper_words(sql);
  std::istringstream words(u);
  std::string verb;
  words >> verb;
  const bool writes = verb == "INSERT" || verb == "REPLACE" || verb == "UPDATE" || verb == "DELETE";
  const bool reads = verb == "SELECT" || verb == "WITH";
  for (const char* before : {" INTO ", " UPDATE ", " FROM "}) {
    const size_t at = u.find(before);
    if ((!writes && !reads) || at == std::string::npos) continue;
    std::string table;  // the identifier after the keyword (u is sql with one space in front)
    for (size_t i = at + std::strlen(before) - 1; i < sql.size() && identifier_char(sql[i]); ++i) {
      table += sql[i];
    }
    if (!table.empty()) return std::string(writes ? "writing" : "reading") + " table " + table;
  }
  return "running '" + sql.substr(0, 60) + (sql.size() > 60 ? "...'" : "'");
}

// What the user can do about each class of failure (SQLite's primary result codes).
std::string hint(int code) {
  switch (code & 0xff) {
    case SQLITE_BUSY:
      return "another process held the write lock for longer than the 30 s busy timeout, a sweep "
             "or merge still writing perhaps; retry when it has finished";
    case SQLITE_READONLY:
      return "the file or its folder is not writable: writing commands need write access to "
             "both, since SQLite keeps -wal and -shm files next to the database";
    case SQLITE_CORRUPT:
      return "the file is damaged; restore it from a copy, or rebuild it with `attnbench results "
             "merge` from the per-cell databases";
    case SQLITE_NOTADB: return "it is not an SQLite database: is the path right?";
    case SQLITE_FULL: return "the disk is full";
    case SQLITE_IOERR:
      return "an I/O error on the file or its -wal/-shm; SQLite must not be used on a network "
             "file system";
    case SQLITE_CANTOPEN:
      return "the file cannot be opened, or its -wal/-journal cannot be created next to it: "
             "check the permissions and that the folder exists";
    default: return "";
  }
}

[[noreturn]] void throw_restated(const std::filesystem::path& path, const std::string& doing,
                                 int code, const std::string& sqlite_message) {
  const std::string h = hint(code);
  const std::string what = doing + " failed: " + sqlite_message + (h.empty() ? "" : " (" + h + ")");
  if ((code & 0xff) == SQLITE_NOTADB) throw InputError({path.string()}, what);
  throw SqliteError(path.string() + ": " + what, code);
}

// file:PATH?immutable=1 with PATH percent-encoded (a '?' or '#' in a folder name stays a name).
std::string immutable_uri(const std::filesystem::path& path) {
  std::string uri = "file:";
  for (unsigned char c : std::filesystem::absolute(path).string()) {
    if (std::isalnum(c) || std::strchr("/-._~", c)) {
      uri += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      uri += buf;
    }
  }
  return uri + "?immutable=1";
}

// A non-empty -wal or -journal beside the database holds committed or in-flight pages that the
// main file lacks: an immutable open would read stale or torn data, so it is never used then.
std::string pending_log(const std::filesystem::path& path) {
  for (const char* suffix : {"-wal", "-journal"}) {
    std::error_code ec;
    const std::filesystem::path log = path.string() + suffix;
    if (std::filesystem::file_size(log, ec) > 0 && !ec) return log.string();
  }
  return "";
}

}  // namespace

Db::Db(const std::filesystem::path& path, bool read_only) : path_(path), read_only_(read_only) {
  if (read_only && !std::filesystem::exists(path)) {
    throw UsageError("no results database at " + path.string() +
                     " (run a sweep first, or pass --db PATH or set ATTNBENCH_DB)");
  }
  if (std::filesystem::is_directory(path)) {
    throw UsageError(path.string() + " is a folder; expected a results database file (e.g. " +
                     (path / "attnbench.db").string() + ")");
  }
  // A FIFO would block SQLite's open() until a writer appears, a device its reads: only a regular
  // file (or a path to create) is a database, as for every other input (core/common/regular_file.h).
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    throw UsageError(path.string() + " is not a regular file (a FIFO, socket or device); expected "
                     "a results database file");
  }
  try {
    connect();
  } catch (...) {
    if (db_) sqlite3_close_v2(db_);  // the destructor does not run for a throwing constructor
    db_ = nullptr;
    throw;
  }
}

void Db::connect() {
  const int flags = read_only_ ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  open(flags, path_.string());
  int code = probe();
  // Read-only media: SQLite cannot create the WAL index (-shm) in a folder it may not write.
  const bool no_shm = (code & 0xff) == SQLITE_READONLY || (code & 0xff) == SQLITE_CANTOPEN;
  if (read_only_ && no_shm) {
    if (std::string log = pending_log(path_); !log.empty()) {
      throw std::runtime_error(
          path_.string() + ": cannot read it in a read-only folder: " + log +
          " holds changes that are not in the database file yet, and SQLite cannot create the "
          "-shm file it needs to read them; copy the database together with " + log +
          " to a writable folder and read the copy");
    }
    sqlite3_close_v2(db_);
    db_ = nullptr;
    open(SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, immutable_uri(path_));
    code = probe();
  }
  if (code != SQLITE_OK) {
    throw_restated(path_, "opening the database", code, sqlite3_errmsg(db_));
  }
  exec("PRAGMA foreign_keys = ON");
  if (read_only_) exec("PRAGMA query_only = ON");
}

void Db::open(int flags, const std::string& uri) {
  int rc = sqlite3_open_v2(uri.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    if (db_) rc = sqlite3_extended_errcode(db_);
    throw_restated(path_, "opening the database", rc, msg);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
}

// The first read of the file: SQLITE_OK, or the extended code of why it cannot be read (the
// connection's error message says more).
int Db::probe() {
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v2(db_, "SELECT count(*) FROM sqlite_master", -1, &s, nullptr);
  if (rc == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) rc = SQLITE_OK;
  else rc = sqlite3_extended_errcode(db_);
  sqlite3_finalize(s);
  return rc;
}

Db::Db(Db&& o) noexcept : db_(o.db_), path_(std::move(o.path_)), read_only_(o.read_only_) {
  o.db_ = nullptr;
}

Db::~Db() {
  if (db_) sqlite3_close_v2(db_);
}

void Db::fail(const std::string& sql) const {
  throw_restated(path_, subject(sql), sqlite3_extended_errcode(db_), sqlite3_errmsg(db_));
}

void Db::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw_restated(path_, subject(sql), sqlite3_extended_errcode(db_), msg);
  }
}

Stmt Db::prepare(const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &s, nullptr) != SQLITE_OK) {
    fail(sql);
  }
  return Stmt(*this, s);
}

int64_t Db::changes() const { return sqlite3_changes(db_); }

Stmt::~Stmt() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Stmt& Stmt::bind(int i, const std::string& v) {
  if (sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT) != SQLITE_OK)
    db_->fail(sqlite3_sql(stmt_));
  return *this;
}
Stmt& Stmt::bind(int i, int64_t v) {
  if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) db_->fail(sqlite3_sql(stmt_));
  return *this;
}
Stmt& Stmt::bind(int i, double v) {
  if (sqlite3_bind_double(stmt_, i, v) != SQLITE_OK) db_->fail(sqlite3_sql(stmt_));
  return *this;
}
Stmt& Stmt::bind(int i, const std::optional<double>& v) { return v ? bind(i, *v) : bind_null(i); }
Stmt& Stmt::bind(int i, const std::optional<int64_t>& v) { return v ? bind(i, *v) : bind_null(i); }
Stmt& Stmt::bind_null(int i) {
  if (sqlite3_bind_null(stmt_, i) != SQLITE_OK) db_->fail(sqlite3_sql(stmt_));
  return *this;
}

Stmt& Stmt::bind_column(int i, const Stmt& source, int column) {
  if (sqlite3_bind_value(stmt_, i, sqlite3_column_value(source.stmt_, column)) != SQLITE_OK)
    db_->fail(sqlite3_sql(stmt_));
  return *this;
}

bool Stmt::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->fail(sqlite3_sql(stmt_));
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

bool Stmt::same_value(int c, const Stmt& other, int oc) const {
  const int type = sqlite3_column_type(stmt_, c);
  if (type != sqlite3_column_type(other.stmt_, oc)) return false;
  switch (type) {
    case SQLITE_NULL: return true;
    case SQLITE_INTEGER: return integer(c) == other.integer(oc);
    case SQLITE_FLOAT: return real(c) == other.real(oc);
    default: return text(c) == other.text(oc);  // text and blobs, byte for byte
  }
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
