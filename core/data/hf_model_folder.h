// Whether a folder is a Hugging Face model folder (docs/pretrained.md, "What makes a folder a
// model"): its config.json is a JSON object naming a model_type. Run folders and attnbench's export
// hold a config.json of their own, without one. Torch-free, so that a sweep file's [[pretrained]]
// paths are checked where sweep files are parsed (and fuzzed).
#pragma once
#include <filesystem>
#include <string>

namespace attnbench::data {

// InputError naming config.json when it is there but is not JSON, or is nested or sized beyond
// what a config can be (core/common/json_input.h): neither a model nor a run folder holds such a
// file, and the folder's reader would otherwise report something else missing.
bool is_hf_model_folder(const std::filesystem::path& dir);

// The model's name: its folder's ("models/gpt2/" and "models/gpt2" are both "gpt2").
std::string model_folder_name(const std::filesystem::path& dir);

}  // namespace attnbench::data
