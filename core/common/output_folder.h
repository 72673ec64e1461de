// A folder a command fills (docs/reliability.md, "Output folders"), one rule for every command that
// writes one (`data prepare --out`, `results export-tb --out`): it may be absent or empty; a
// non-empty one is replaced only under --force, and only when everything in it is what that
// command writes there (recognised by name), so --force never deletes a user's other files, a run
// folder's checkpoint or the working folder. Checked before any work; the inputs are checked apart
// (core/common/output_path.h).
#pragma once
#include <filesystem>
#include <functional>
#include <string>

namespace attnbench {

struct OutputFolder {
  std::filesystem::path path;
  std::string option = "--out";  // how the user named it
  std::string command;           // "data prepare", for messages
  std::string writes;            // what `owned` accepts, for messages: "shards and manifest.json"
  // Whether a top-level entry of `path` (a file or folder) is what the command writes there.
  std::function<bool(const std::filesystem::directory_entry& entry)> owned;
};

// UsageError naming the option and the path when the path exists and is not a folder; is the
// working folder or contains it; is not empty and `force` is false; or, under `force`, holds an
// entry `owned` does not recognise (named, with what the command writes).
void check_output_folder(const OutputFolder& out, bool force);

// Removes every entry of the folder (check_output_folder has found them all `owned`), keeping the
// folder itself; nothing when it does not exist.
void clear_output_folder(const OutputFolder& out);

}  // namespace attnbench
