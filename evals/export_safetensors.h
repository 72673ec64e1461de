// The safetensors format (huggingface/safetensors): an 8-byte little-endian header length N, N bytes
// of JSON {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}}
// padded with spaces to a multiple of 8, then the tensors' bytes (C order, little-endian), offsets
// relative to the end of the header. Written atomically (temporary file + rename).
#pragma once
#include <torch/torch.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace attnbench::evals {

struct NamedTensor {
  std::string name;
  torch::Tensor tensor;
};

// "F32", "BF16", "I64", ...; throws std::invalid_argument for a dtype safetensors lacks.
std::string safetensors_dtype(torch::ScalarType type);

// Tensors are written in the given order; names must be unique (std::invalid_argument).
void write_safetensors(const std::filesystem::path& file, const std::vector<NamedTensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace attnbench::evals
