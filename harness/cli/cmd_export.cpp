// `attnbench export`: a checkpoint's tensors as safetensors plus a config JSON, and for softmax +
// RoPE models a Hugging Face Llama layout (evals/model_export.h, docs/evaluation.md).
#include <torch/torch.h>

#include <memory>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/common/output_path.h"
#include "core/data/tokenizer.h"
#include "evals/model_export.h"
#include "harness/cli/command.h"
#include "model/checkpoint_model.h"
#include "model/finite.h"

namespace attnbench::cli::cmd_export {
namespace {

struct Options {
  std::string checkpoint;
  std::string out;
  std::string format = "safetensors";
  std::string data_dir;  // gpt2_tokenizer/ for the Llama layout's tokenizer files
};

int run(const Options& o) {
  if (o.format != "safetensors") {
    throw UsageError("--format " + o.format + ": only safetensors is supported" +
                     did_you_mean(o.format, {"safetensors"}));
  }
  model::LoadedModel loaded = model::load_model(o.checkpoint);
  refuse_output_over_inputs({"--out", o.out}, {{"the checkpoint", loaded.checkpoint}});
  model::require_finite_model(*loaded.model, loaded.checkpoint.string());
  // GPT-2's tokenizer files are checked before anything is written (a continued model's own are
  // copied from its folder).
  const std::filesystem::path gpt2 =
      loaded.cfg.model.init_from.empty() ? data::gpt2_tokenizer_dir(o.data_dir) : std::filesystem::path();
  evals::ExportSummary s = evals::export_model(loaded.model, loaded.cfg, loaded.step, o.out, gpt2);
  for (const auto& f : s.files) fmt::print("wrote {}\n", f.string());
  if (!s.llama) fmt::print("no Llama layout: {}\n", s.llama_skipped);
  return 0;
}

RegisterCommand reg("export", "Write a checkpoint's tensors as safetensors (and a Llama layout)",
                    [](CLI::App& app) {
                      auto o = std::make_shared<Options>();
                      app.add_option("--checkpoint", o->checkpoint,
                                     "run folder or checkpoint folder")
                          ->required();
                      app.add_option("--out", o->out, "output folder")->required();
                      app.add_option("--format", o->format, "safetensors (the only format)");
                      app.add_option("--data-dir", o->data_dir,
                                     "data root with gpt2_tokenizer/ (the Llama layout's tokenizer; "
                                     "default: $ATTNBENCH_DATA, else ./data)");
                      refuse_empty_values(app);
                      return [o] { return run(*o); };
                    });

}  // namespace
}  // namespace attnbench::cli::cmd_export
