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
#include "variants/rope.h"

namespace attnbench::model::pretrained {

enum class Norm { LayerNorm, RMSNorm };
// The MLP: act(up x) through down, or SwiGLU down(silu(gate x) * up x).
enum class Mlp { GeluExact, GeluTanh, Relu, SwiGLU };

struct Rope {
  int64_t dims = 0;  // rotated dimensions of each head, from the first (0 = no RoPE)
  variants::RopeFrequencies frequencies;  // the one frequency function (variants/rope.h)
};

struct ArchitectureConfig {
  std::string model_type;
  int64_t n_layer = 0, d_model = 0, n_head = 0, n_kv_head = 0, head_dim = 0, d_ffn = 0;
  int64_t vocab_size = 0;      // rows of the embedding and the head
  int64_t context_length = 0;  // max_position_embeddings / n_positions
  // Width of the token embedding and of the head's input when it differs from d_model (OPT's
  // word_embed_proj_dim: project_in after the embedding, project_out before the head); 0 = d_model.
  int64_t embed_dim = 0;
  Norm norm = Norm::RMSNorm;
  double norm_eps = 1e-5;
  Mlp mlp = Mlp::SwiGLU;
  bool learned_positions =
      false;  // GPT-2's wpe (OPT's embed_positions) added to the token embedding
  int64_t position_offset = 0;     // row of position 0 in that table (OPT: 2)
  Rope rope;
  bool parallel_residual = false;  // GPT-NeoX: h + attn(ln1 h) + mlp(ln2 h)
  bool pre_norm = true;            // false: OPT-350m's post-LN, h = ln1(h + attn(h)), ...
  bool final_norm = true;          // a norm after the last layer
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  bool tied = false;  // the head is the token embedding
  // Per layer, how many keys a query sees, itself included (a sliding window: key j is seen from
  // query i when i - j < window, as transformers masks it); 0 = every earlier key. Empty: all 0.
  std::vector<int64_t> layer_windows;
  int64_t window(int64_t layer) const {
    return layer_windows.empty() ? 0 : layer_windows.at(static_cast<size_t>(layer));
  }
  int64_t embed_width() const { return embed_dim ? embed_dim : d_model; }
};

// The model's weights by name, as the folder's safetensors files hold them, in float32.
class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Converts the tensor `name` straight into `out`, a contiguous float32 CPU tensor of the shape
  // the file must hold (UsageError naming the file and tensor when it is missing or has another
  // shape); each tensor may be taken once. Writing into the parameter itself, with no temporary,
  // is what keeps loading within the model's fp32 size (docs/pretrained.md, "Memory"). Into a
  // tensor on the meta device it only checks the name and shape, reading nothing.
  virtual void take_into(const std::string& name, torch::Tensor& out) = 0;
  // The same into a new tensor of `shape`, for weights laid out otherwise than their parameter
  // (GPT-2's Conv1D, fused q/k/v): one layer's matrix at a time, on the device `like` is on (the
  // meta device when only checking).
  torch::Tensor take(const std::string& name, const std::vector<int64_t>& shape,
                     const torch::Tensor& like) {
    torch::Tensor out =
        torch::empty(shape, torch::TensorOptions().dtype(torch::kFloat32).device(like.device()));
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

// Keys shared by the RoPE architectures: rope_parameters (transformers >= 5) and the older top-level
// keys, which may both be present (a folder re-saved by another version writes both; each value
// found must agree). `theta_keys`: the top-level names of the base (rope_theta; GPT-NeoX also its
// rotary_emb_base); `fraction_keys`: of the rotated fraction of each head (GPT-NeoX's rotary_pct
// and partial_rotary_factor; none = the whole head), else `default_fraction`. rope_scaling's types
// default, linear and llama3 are computed; any other is refused.
Rope parse_rope(const HFConfig& cfg, int64_t head_dim,
                const std::vector<std::string>& theta_keys = {"rope_theta"},
                const std::vector<std::string>& fraction_keys = {}, double default_fraction = 1.0);

// d_model / n_head for the architectures whose heads split the model's width (GPT-2, GPT-NeoX,
// OPT), refusing `heads_key` when they do not divide it.
int64_t whole_heads(const HFConfig& cfg, int64_t d_model, int64_t n_head,
                    const std::string& heads_key);

// The activation names of config.json (hidden_act, activation_function) an up/down MLP supports.
Mlp parse_activation(const HFConfig& cfg, const std::string& key, const std::string& fallback);

}  // namespace attnbench::model::pretrained
