// A thin RAII layer over the SQLite C API: a connection, prepared statements with bound parameters
// (the only way user input ever reaches SQL), and an IMMEDIATE transaction guard.
//
// Every SQLite failure is restated with the file, the table the statement reads or writes, and
// what to do ("database is locked" alone names neither). A file that is not an SQLite database is
// an InputError (exit 2): the user gave the wrong path.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace attnbench::results {

class Stmt;

// A restated SQLite failure (a runtime failure, exit 1); code is SQLite's extended result code.
class SqliteError : public std::runtime_error {
 public:
  SqliteError(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }
  bool busy() const { return (code_ & 0xff) == 5; }  // SQLITE_BUSY

 private:
  int code_;
};

class Db {
 public:
  // read_only: SQLITE_OPEN_READONLY and PRAGMA query_only; the file must exist (UsageError
  // otherwise; nothing is ever created). On read-only media (a folder where SQLite cannot create
  // the WAL index, the -shm file) the file is opened immutable, which needs no lock and no -shm,
  // provided no -wal file holds commits outside the main file. Otherwise the file is created when
  // missing. Sets the busy timeout (30 s) and foreign keys on either way. Either way the file is
  // read once here, so a path that is not an SQLite database fails at once (InputError).
  Db(const std::filesystem::path& path, bool read_only);
  Db(Db&&) noexcept;
  Db& operator=(Db&&) = delete;
  Db(const Db&) = delete;
  ~Db();

  void exec(const std::string& sql);  // statements without parameters or results
  Stmt prepare(const std::string& sql);
  int64_t changes() const;
  const std::filesystem::path& path() const { return path_; }
  bool read_only() const { return read_only_; }
  sqlite3* handle() { return db_; }
  // Throws the connection's last error restated (see the top of this file); `sql` is the statement
  // that failed.
  [[noreturn]] void fail(const std::string& sql) const;

 private:
  void connect();
  void open(int flags, const std::string& uri);
  int probe();
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
  bool read_only_ = false;
};

class Stmt {
 public:
  Stmt(Db& db, sqlite3_stmt* stmt) : db_(&db), stmt_(stmt) {}
  Stmt(Stmt&& o) noexcept : db_(o.db_), stmt_(o.stmt_) { o.stmt_ = nullptr; }
  Stmt(const Stmt&) = delete;
  ~Stmt();

  // Parameters are 1-based, as in SQLite.
  Stmt& bind(int i, const std::string& v);
  Stmt& bind(int i, const char* v) { return bind(i, std::string(v)); }
  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, int v) { return bind(i, int64_t{v}); }
  Stmt& bind(int i, double v);
  Stmt& bind(int i, bool v) { return bind(i, int64_t{v ? 1 : 0}); }
  Stmt& bind(int i, const std::optional<double>& v);    // NULL when unset
  Stmt& bind(int i, const std::optional<int64_t>& v);   // NULL when unset
  Stmt& bind_null(int i);
  Stmt& bind_column(int i, const Stmt& source, int column);  // copies the value with its type
  template <typename... T>
  Stmt& bind_all(const T&... v) {
    int i = 0;
    (bind(++i, v), ...);
    return *this;
  }

  bool step();  // true while a row is available
  void run();   // step to completion (writes)
  void reset(); // ready to run again with new bindings

  int columns() const;
  std::string column_name(int c) const;
  bool is_null(int c) const;
  std::string text(int c) const;  // "" for NULL
  int64_t integer(int c) const;
  double real(int c) const;
  std::optional<double> optional_real(int c) const;
  // True when column c holds the same type and value as `other`'s column oc (NULL equals NULL).
  bool same_value(int c, const Stmt& other, int oc) const;
  sqlite3_stmt* handle() { return stmt_; }

 private:
  Db* db_;
  sqlite3_stmt* stmt_;
};

// BEGIN IMMEDIATE (the write lock is taken at once, so two writers never deadlock on an upgrade);
// rolls back unless commit() was called.
class Transaction {
 public:
  explicit Transaction(Db& db);
  Transaction(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  Db& db_;
  bool done_ = false;
};

}  // namespace attnbench::results
