#include "model/checkpoint_model.h"

#include "core/common/error.h"
#include "model/checkpoint.h"
#include "model/checkpoint_dir.h"

namespace attnbench::model {

LoadedModel load_model(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) {
    throw UsageError(dir.string() + ": no such folder (expected a run folder with checkpoint/ "
                     "inside, or a checkpoint folder with MANIFEST.json)");
  }
  LoadedModel out;
  if (std::filesystem::exists(dir / "MANIFEST.json")) {
    out.checkpoint = dir;
  } else if (auto found = find_checkpoint(dir)) {
    out.checkpoint = *found;
  } else {
    throw UsageError(dir.string() + ": no complete checkpoint there (expected " +
                     (dir / "checkpoint" / "MANIFEST.json").string() + ", written by attnbench train)");
  }
  verify_checkpoint(out.checkpoint);
  out.cfg = read_checkpoint_config(out.checkpoint);
  out.model = model::DecoderLM(out.cfg);
  TrainState state = restore_checkpoint(out.checkpoint, *out.model, nullptr);
  out.step = state.step;
  out.model->eval();
  return out;
}

}  // namespace attnbench::model
