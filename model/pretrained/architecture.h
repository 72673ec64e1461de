// Imported decoder architectures (docs/pretrained.md): what a Hugging Face model_type computes,
// as one ArchitectureConfig that model/pretrained/pretrained_lm.h runs, and where each of its
// weights comes from. One file per model_type registers itself (gpt2.cpp, llama.cpp, gpt_neox.cpp),
// as attention variants do.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/pretrained/hf_config.h"

namespace attnbench::model::pretrained {

enum class Norm { LayerNorm, RMSNorm };
// The MLP: act(up x) through down, or SwiGLU down(silu(gate x) * up x).
enum class Mlp { GeluExact, GeluTanh, SwiGLU };
enum class RopeScaling { None, Linear, Llama3 };

struct Rope {
  int64_t dims = 0;        // rotated dimensions of each head, from the first (0 = no RoPE)
  double theta = 10000.0;  // base of the frequencies theta^(-2i/dims)
  RopeScaling scaling = RopeScaling::None;
  double factor = 1.0;     // linear and llama3
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
  int64_t original_context = 8192;                       // llama3
};

struct ArchitectureConfig {
  std::string model_type;
  int64_t n_layer = 0, d_model = 0, n_head = 0, n_kv_head = 0, head_dim = 0, d_ffn = 0;
  int64_t vocab_size = 0;      // rows of the embedding and the head
  int64_t context_length = 0;  // max_position_embeddings / n_positions
  Norm norm = Norm::RMSNorm;
  double norm_eps = 1e-5;
  Mlp mlp = Mlp::SwiGLU;
  bool learned_positions = false;  // GPT-2's wpe added to the token embedding
  Rope rope;
  bool parallel_residual = false;  // GPT-NeoX: h + attn(ln1 h) + mlp(ln2 h)
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  bool tied = false;  // the head is the token embedding
};

// The model's weights by name, as the folder's safetensors files hold them, in float32.
class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Converts the tensor `name` straight into `out`, a contiguous float32 CPU tensor of the shape
  // the file must hold (UsageError naming the file and tensor when it is missing or has another
  // shape); each tensor may be taken once. Writing into the parameter itself, with no temporary,
  // is what keeps loading within the model's fp32 size (docs/pretrained.md, "Memory").
  virtual void take_into(const std::string& name, torch::Tensor& out) = 0;
  // The same into a new tensor of `shape`, for weights laid out otherwise than their parameter
  // (GPT-2's Conv1D, fused q/k/v): one layer's matrix at a time.
  torch::Tensor take(const std::string& name, const std::vector<int64_t>& shape) {
    torch::Tensor out = torch::empty(shape, torch::kFloat32);
    take_into(name, out);
    return out;
  }
  // Whether the folder has `name` (an optional tensor, e.g. a bias).
  virtual bool has(const std::string& name) const = 0;
};

class PretrainedLMImpl;

struct Architecture {
  // config.json -> the computation. Reads every key it honours, refuses what it cannot honour,
  // marks what does not matter; the caller then refuses whatever is left (HFConfig::finish).
  std::function<ArchitectureConfig(const HFConfig&)> parse;
  // Fills every parameter of the model from the folder's tensors.
  std::function<void(PretrainedLMImpl&, WeightSource&)> load;
  // Tensors the folder may hold that the model does not use (buffers older versions saved, e.g.
  // RoPE frequencies or a causal mask); any other tensor left over is refused.
  std::function<bool(const std::string&)> ignorable;
};

const Architecture& architecture(const std::string& model_type, const std::string& context);
std::vector<std::string> architecture_names();

struct RegisterArchitecture {
  RegisterArchitecture(const std::string& model_type, decltype(Architecture::parse) parse,
                       decltype(Architecture::load) load,
                       decltype(Architecture::ignorable) ignorable);
};

// Keys shared by the RoPE architectures: rope_parameters (transformers >= 5), else `theta_key` and
// rope_scaling (types default, linear and llama3; anything else refused) and the rotated fraction
// of each head from `fraction_key` (GPT-NeoX's rotary_pct; "" = the whole head), else
// `default_fraction` (also when rope_parameters has no partial_rotary_factor).
Rope parse_rope(const HFConfig& cfg, int64_t head_dim, const std::string& theta_key = "rope_theta",
                const std::string& fraction_key = "", double default_fraction = 1.0);

// The activation names of config.json (hidden_act, activation_function) an up/down MLP supports.
Mlp parse_gelu(const HFConfig& cfg, const std::string& key, const std::string& fallback);

}  // namespace attnbench::model::pretrained
