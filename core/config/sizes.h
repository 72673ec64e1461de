// Whether a run config can fit in memory, decided before any work: a closed-form lower bound of
// training memory (parameters with their gradients and AdamW moments, plus the activations every
// layer must keep for the backward pass) against a memory limit (docs/training.md, "Validation").
// All arithmetic saturates at INT64_MAX, so a product of huge sizes can never wrap round to a small
// or zero value; a saturated estimate is beyond any limit and is refused like any other.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/config/attention_schema.h"
#include "core/config/run_config.h"

namespace attnbench::config {

// a * b and a + b for non-negative sizes, INT64_MAX when the exact result does not fit.
int64_t saturating_mul(int64_t a, int64_t b);
int64_t saturating_add(int64_t a, int64_t b);

struct MemoryEstimate {
  int64_t parameters = 0;        // lower bound: embeddings, attention and SwiGLU matrices
  int64_t parameter_bytes = 0;   // 16 bytes each: fp32 weight, gradient, two AdamW moments
  int64_t activation_bytes = 0;  // 4 (bf16: 2) bytes x batch x context x (layers x d_model + vocab)
  int64_t total_bytes = 0;
  std::string key;               // the dotted key that contributes most (what to lower)
};

// The lower bound for `cfg` (already checked field by field: sizes >= 1).
MemoryEstimate estimate_training_memory(const RunConfig& cfg);

// The most memory a run may need: this machine's physical memory (sysconf) when train.device is
// "cpu"; otherwise the larger of that and 256 GiB, as a GPU's memory is not known here and none
// holds more. 256 GiB when the machine's memory cannot be read.
int64_t memory_limit_bytes(const std::string& device);

// nullopt when the estimate fits memory_limit_bytes(device), else the refusal: the key that
// contributes most and a message naming the keys, the estimate and the limit. Reading a config
// checks it for any device ("": sizes no machine holds, wherever the config came from); training
// checks it for its own train.device (train/preflight.h), since a config trained on a
// larger machine may still be loaded and evaluated on a smaller one.
std::optional<ConfigProblem> check_memory(const RunConfig& cfg, const std::string& device);

// "12.5 GiB": a byte count for messages.
std::string format_bytes(int64_t bytes);

}  // namespace attnbench::config
