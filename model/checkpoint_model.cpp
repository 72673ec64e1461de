#include "model/checkpoint_model.h"

#include "core/common/error.h"
#include "model/checkpoint.h"
#include "model/checkpoint_dir.h"
#include "model/device.h"

namespace attnbench::model {

namespace {
std::filesystem::path checkpoint_folder(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) {
    throw UsageError(dir.string() + ": no such folder (expected a run folder with checkpoint/ "
                     "inside, or a checkpoint folder with MANIFEST.json)");
  }
  if (std::filesystem::exists(dir / "MANIFEST.json")) return dir;
  if (auto found = find_checkpoint(dir)) return *found;
  throw UsageError(dir.string() + ": no complete checkpoint there (expected " +
                   (dir / "checkpoint" / "MANIFEST.json").string() + ", written by attnbench train)");
}

LoadedModel load_verified(const std::filesystem::path& checkpoint, config::RunConfig cfg) {
  LoadedModel out;
  out.checkpoint = checkpoint;
  out.cfg = std::move(cfg);
  out.model = model::DecoderLM(out.cfg);
  TrainState state = restore_checkpoint(out.checkpoint, *out.model, nullptr);
  out.step = state.step;
  out.init_from_tokenizer_sha256 = state.init_from_tokenizer_sha256;
  out.model->eval();
  return out;
}
}  // namespace

LoadedModel load_model(const std::filesystem::path& dir) {
  const std::filesystem::path checkpoint = checkpoint_folder(dir);
  verify_checkpoint(checkpoint);
  return load_verified(checkpoint, read_checkpoint_config(checkpoint));
}

LoadedModel load_model(const std::filesystem::path& dir, const std::string& device_setting,
                       const std::string& device_key) {
  const std::filesystem::path checkpoint = checkpoint_folder(dir);
  verify_checkpoint(checkpoint);
  config::RunConfig cfg = read_checkpoint_config(checkpoint);
  const torch::Device device =
      resolve_device(device_setting.empty() ? cfg.train.device : device_setting,
                     device_setting.empty() ? "train.device (of the checkpoint's config)" : device_key);
  apply_numerics(cfg.train);
  // Restored on the CPU, then moved: the weights are the same bytes on either device.
  LoadedModel out = load_verified(checkpoint, std::move(cfg));
  if (!device.is_cpu()) out.model->to(device);
  out.device = device;
  return out;
}

}  // namespace attnbench::model
