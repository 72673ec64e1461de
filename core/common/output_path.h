// An output is never one of the command's inputs (docs/reliability.md, "Outputs"): every command
// that writes a file or folder checks, before any work, that its output path is not an input (the
// database, a checkpoint, a shard, a config), does not lie inside an input folder and, as a folder
// to fill, does not hold an input. Links and ".." are resolved first: a link to an input is the
// input.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace attnbench {

struct NamedPath {
  std::string role;  // how the user gave it: "--db", "--checkpoint", "the sweep file"
  std::filesystem::path path;
};

// UsageError naming the output option, both paths and the input's role when `output` and an
// input are the same file or folder or one lies inside the other. Inputs with an empty path are
// skipped (an option not given).
void refuse_output_over_inputs(const NamedPath& output, const std::vector<NamedPath>& inputs);

}  // namespace attnbench
