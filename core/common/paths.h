// Where attnbench finds its data (layout <root>/<task>/<files>: docs/tasks.md, "Data layout and
// format detection").
#pragma once
#include <filesystem>
#include <string>

namespace attnbench {

// `p` made absolute and normalised ("a/../b" -> "b"): the paths written into scripts, commands and
// manifests that are read from another folder or machine.
std::string absolute_path(const std::filesystem::path& p);

// The data root: --data-dir if given, else $ATTNBENCH_DATA, else ./data.
std::filesystem::path data_root(const std::string& cli_data_dir = "");

// True when the user named a data folder explicitly (--data-dir or ATTNBENCH_DATA); tests that need
// data must then fail loudly rather than skip when a file is missing.
bool data_root_is_explicit(const std::string& cli_data_dir = "");

// <root>/<relative>, or a UsageError naming the missing path, the expected layout and how to get it.
std::filesystem::path require_data_file(const std::string& relative,
                                        const std::string& cli_data_dir = "");

}  // namespace attnbench
