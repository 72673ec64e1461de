// A Hugging Face model folder as a checkpoint (docs/pretrained.md): config.json, the weights in
// model.safetensors or shards listed by model.safetensors.index.json, and the tokenizer files
// (read by core/data/hf_tokenizer.h). Recognised by its config.json naming a model_type
// (core/data/hf_model_folder.h); everything is checked before the weights are read: the
// architecture (model_type) is registered, every config key is honoured or refused, every tensor
// the architecture needs is present with its shape, and no tensor is left over unexplained.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "model/pretrained/pretrained_lm.h"

namespace attnbench::model::pretrained {

struct PretrainedModel {
  PretrainedLM model{nullptr};
  std::filesystem::path dir;
  std::string name;            // the folder's name, e.g. "gpt2"
  std::string weights_sha256;  // SHA-256 over the weight files' bytes, in file-name order
  std::string config_json;     // config.json as loaded, canonical (keys sorted, no spaces)
  torch::Device device{torch::kCPU};
};

// The architecture config.json declares, parsed and checked (UsageError naming the file and key).
ArchitectureConfig read_architecture(const std::filesystem::path& dir);

// read_architecture, and the weight files checked against it without reading any weight: every
// tensor present with its shape, none left over (UsageError naming the file and tensor). What
// load_pretrained checks first; it takes no memory beyond the files' headers.
ArchitectureConfig check_pretrained(const std::filesystem::path& dir);

// Loads the model in float32 (bf16 and fp16 weights are converted) on the CPU, then moves it to
// the device `device_setting` names (auto | cpu | cuda; "" = cpu); `device_key` names the option
// in errors. Extra memory beyond the mapped files: the float32 parameters.
PretrainedModel load_pretrained(const std::filesystem::path& dir,
                                const std::string& device_setting = "",
                                const std::string& device_key = "--device");

}  // namespace attnbench::model::pretrained
