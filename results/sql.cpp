#include "results/sql.h"

#include <sqlite3.h>

#include <cctype>
#include <cstring>

#include "core/common/error.h"
#include "results/schema.h"
#include "results/sqlite.h"

namespace attnbench::results {

namespace {

// SQLite asks before compiling each action; ATTACH and DETACH are denied (SQLITE_DENY makes the
// prepare fail with "not authorized").
int authorize(void* denied, int action, const char*, const char*, const char*, const char*) {
  if (action == SQLITE_ATTACH || action == SQLITE_DETACH) {
    *static_cast<std::string*>(denied) = action == SQLITE_ATTACH ? "ATTACH" : "DETACH";
    return SQLITE_DENY;
  }
  return SQLITE_OK;
}

bool blank(const char* s) {
  // What may follow the statement: whitespace, semicolons and comments.
  while (*s) {
    if (std::isspace(static_cast<unsigned char>(*s)) || *s == ';') {
      ++s;
    } else if (s[0] == '-' && s[1] == '-') {
      while (*s && *s != '\n') ++s;
    } else if (s[0] == '/' && s[1] == '*') {
      const char* end = std::strstr(s + 2, "*/");
      if (!end) return true;
      s = end + 2;
    } else {
      return false;
    }
  }
  return true;
}

nlohmann::json column_json(sqlite3_stmt* s, int c) {
  switch (sqlite3_column_type(s, c)) {
    case SQLITE_INTEGER: return sqlite3_column_int64(s, c);
    case SQLITE_FLOAT: return sqlite3_column_double(s, c);
    case SQLITE_TEXT:
      return std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, c)),
                         sqlite3_column_bytes(s, c));
    case SQLITE_BLOB: return "<blob " + std::to_string(sqlite3_column_bytes(s, c)) + " bytes>";
    default: return nullptr;
  }
}

}  // namespace

Grid run_readonly_sql(const std::filesystem::path& path, const std::string& sql) {
  Db db(path, /*read_only=*/true);
  require_current_schema(db);
  std::string denied;
  sqlite3_set_authorizer(db.handle(), authorize, &denied);

  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db.handle(), sql.c_str(), static_cast<int>(sql.size()), &raw, &tail);
  if (rc != SQLITE_OK) {
    if (!denied.empty()) {
      throw UsageError("results sql is read-only: " + denied + " is refused");
    }
    throw UsageError("results sql on " + path.string() + ": " + sqlite3_errmsg(db.handle()));
  }
  Stmt stmt(db, raw);  // finalizes on every path below
  if (!raw) throw UsageError("results sql: no SQL statement given");
  if (!blank(tail)) {
    throw UsageError("results sql runs one statement at a time; remove what follows: '" +
                     std::string(tail).substr(0, 40) + "'");
  }
  if (!sqlite3_stmt_readonly(raw)) {
    throw UsageError("results sql is read-only: this statement would write to the database "
                     "(INSERT, UPDATE, DELETE, CREATE, DROP, ... are refused)");
  }
  Grid g;
  for (int c = 0; c < sqlite3_column_count(raw); ++c) g.headers.push_back(sqlite3_column_name(raw, c));
  for (;;) {
    rc = sqlite3_step(raw);
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) {
      throw UsageError("results sql on " + path.string() + ": " + sqlite3_errmsg(db.handle()));
    }
    std::vector<nlohmann::json> row;
    for (int c = 0; c < sqlite3_column_count(raw); ++c) row.push_back(column_json(raw, c));
    g.rows.push_back(std::move(row));
  }
  return g;
}

}  // namespace attnbench::results
