// Input files are opened without blocking and must be regular files (docs/data.md, "Inputs"): a
// FIFO named where a shard, an input or a tokenizer file belongs would block open() until a writer
// appears, a device or socket would block read(), so they are refused with the path named.
#pragma once
#include <filesystem>
#include <string>

namespace attnbench {

// A read-only descriptor (close-on-exec) of the regular file `path`, for the caller to close.
// `what` names its role in messages ("shard", "input", "tokenizer file"). A path that is missing,
// unreadable or not a regular file throws UsageError naming it and what was found instead.
int open_regular_file(const std::filesystem::path& path, const std::string& what);

// The whole content of the regular file `path` (open_regular_file's checks and errors).
std::string read_regular_file(const std::filesystem::path& path, const std::string& what);

}  // namespace attnbench
