// `results sql "SELECT ..."`: one statement on a read-only connection (SQLITE_OPEN_READONLY and
// PRAGMA query_only). Statements that would write are refused before they run, with a clear error;
// ATTACH and DETACH are refused too (an attached file is outside what the user asked to read).
#pragma once
#include <filesystem>
#include <string>

#include "results/grid.h"

namespace attnbench::results {

Grid run_readonly_sql(const std::filesystem::path& db, const std::string& sql);

}  // namespace attnbench::results
