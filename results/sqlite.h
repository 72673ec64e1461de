// A thin RAII layer over the SQLite C API: a connection, prepared statements with bound parameters
// (the only way user input ever reaches SQL), and an IMMEDIATE transaction guard.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace attnbench::results {

class Stmt;

class Db {
 public:
  // read_only: SQLITE_OPEN_READONLY and PRAGMA query_only; the file must exist. Otherwise the file
  // is created when missing. Sets the busy timeout (30 s) and foreign keys on either way.
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
  [[noreturn]] void fail(const std::string& what) const;  // runtime_error with SQLite's message

 private:
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
  Stmt& bind(int i, const std::optional<double>& v);
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
