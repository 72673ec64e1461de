// model.init_from (docs/pretrained.md, "Continuing a pretrained model"): a run whose decoder starts
// from the weights of a Hugging Face Llama-family folder. Resolving the config reads the folder's
// config.json into the run's shape (the resolver this file registers with core/config); the
// trainer then fills its new model from the weights, read by the same loader as `eval --checkpoint
// DIR` (model/pretrained/hf_folder.h).
#pragma once
#include "core/config/run_config.h"
#include "model/decoder.h"

namespace attnbench::model {

// Copies the folder's weights into `model`, built from `cfg` (whose shape the folder set), on any
// device; returns their SHA-256 (pretrained::PretrainedModel::weights_sha256). The variant's own
// parameters keep their initial values, at which it computes softmax attention (as the config's
// resolution checked); the rows padding the vocabulary to a multiple of 64 start at 0. While it
// runs, the folder's model is held in float32 on the CPU beside `model`. UsageError when the folder
// no longer has the shape cfg records.
std::string load_init_from(DecoderLMImpl& model, const config::RunConfig& cfg);

}  // namespace attnbench::model
