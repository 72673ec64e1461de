#include "evals/checkpoint_model.h"

#include "harness/common/error.h"
#include "harness/train/checkpoint.h"
#include "harness/train/checkpoint_dir.h"

namespace attnbench::evals {

LoadedModel load_model(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) {
    throw UsageError("--checkpoint " + dir.string() + ": no such folder (expected a run folder "
                     "with checkpoint/ inside, or a checkpoint folder with MANIFEST.json)");
  }
  LoadedModel out;
  if (std::filesystem::exists(dir / "MANIFEST.json")) {
    out.checkpoint = dir;
  } else if (auto found = train::find_checkpoint(dir)) {
    out.checkpoint = *found;
  } else {
    throw UsageError("--checkpoint " + dir.string() + ": no complete checkpoint there (expected " +
                     (dir / "checkpoint" / "MANIFEST.json").string() + ")");
  }
  train::verify_checkpoint(out.checkpoint);
  out.cfg = train::read_checkpoint_config(out.checkpoint);
  out.model = model::DecoderLM(out.cfg);
  train::TrainState state = train::restore_checkpoint(out.checkpoint, *out.model, nullptr);
  out.step = state.step;
  out.model->eval();
  return out;
}

}  // namespace attnbench::evals
