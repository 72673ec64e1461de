#include "core/config/fields.h"

#include <type_traits>

#include "core/common/error.h"
#include "core/config/sizes.h"

namespace attnbench::config {
namespace {

template <class T>
constexpr ValueType value_type() {
  if constexpr (std::is_same_v<T, bool>) return ValueType::Bool;
  if constexpr (std::is_same_v<T, int64_t>) return ValueType::Int;
  if constexpr (std::is_same_v<T, double>) return ValueType::Float;
  return ValueType::String;
}

template <class S, class T>
Field field(const char* section, S RunConfig::*sec, T S::*member, const char* name, const char* doc,
            std::function<std::string(const T&, const RunConfig&)> check = {}) {
  Field f;
  f.section = section;
  f.name = name;
  f.type = value_type<T>();
  f.doc = doc;
  f.set = [sec, member](RunConfig& c, const Value& v) { (c.*sec).*member = std::get<T>(v); };
  f.get = [sec, member](const RunConfig& c) { return Value{(c.*sec).*member}; };
  if (check) {
    f.check = [sec, member, check](const RunConfig& c) { return check((c.*sec).*member, c); };
  }
  return f;
}

// Reusable bounds.
template <class T>
std::function<std::string(const T&, const RunConfig&)> at_least(T lo) {
  return [lo](const T& v, const RunConfig&) {
    return v >= lo ? "" : "must be >= " + to_string(Value{lo});
  };
}
// A float key's valid range (docs/training.md, "Validation"): every bound lies within float32,
// the precision the model computes in, so a valid value never overflows when LibTorch converts it.
// `lo_open`: lo itself is excluded.
std::function<std::string(const double&, const RunConfig&)> between(double lo, double hi,
                                                                    bool lo_open) {
  return [lo, hi, lo_open](const double& v, const RunConfig&) {
    const bool ok = (lo_open ? v > lo : v >= lo) && v <= hi;
    return ok ? "" : "must be in " + std::string(lo_open ? "(" : "[") + to_string(Value{lo}) + ", " +
                         to_string(Value{hi}) + "]";
  };
}
std::function<std::string(const double&, const RunConfig&)> in_unit(bool open_right) {
  return [open_right](const double& v, const RunConfig&) {
    bool ok = v >= 0 && (open_right ? v < 1 : v <= 1);
    return ok ? "" : std::string("must be in [0, 1") + (open_right ? ")" : "]");
  };
}
std::function<std::string(const std::string&, const RunConfig&)> one_of(
    std::vector<std::string> allowed) {
  return [allowed](const std::string& v, const RunConfig&) {
    for (auto& a : allowed)
      if (v == a) return std::string();
    return "must be one of " + join(allowed) + did_you_mean(v, allowed);
  };
}

// [model]: the size preset, the shape that overrides it, normalisation and initialisation.
void add_model_fields(std::vector<Field>& f) {
  using RC = RunConfig;
  f.push_back(field<ModelConfig, std::string>(
      "model", &RC::model, &ModelConfig::preset, "preset",
      "size preset: tiny | small | 125m | 340m | 760m (defaults for the sizes below); "
      "\"pretrained\" with model.init_from",
      [](const std::string& p, const RC& c) -> std::string {
        if (!c.model.init_from.empty()) {
          return p == "pretrained" ? "" : "must be \"pretrained\" with model.init_from";
        }
        return one_of({"tiny", "small", "125m", "340m", "760m"})(p, c);
      }));
  f.push_back(field("model", &RC::model, &ModelConfig::n_layer, "n_layer",
                    "decoder blocks (0 = the preset's)", at_least<int64_t>(1)));
  f.push_back(field("model", &RC::model, &ModelConfig::d_model, "d_model",
                    "hidden size (0 = the preset's)", at_least<int64_t>(1)));
  f.push_back(field<ModelConfig, int64_t>(
      "model", &RC::model, &ModelConfig::n_head, "n_head", "attention heads (0 = the preset's)",
      [](const int64_t& h, const RC& c) -> std::string {
        if (h < 1) return "must be >= 1";
        if (c.model.d_model % h != 0) {
          return "= " + std::to_string(h) + " does not divide model.d_model = " +
                 std::to_string(c.model.d_model);
        }
        return "";
      }));
  f.push_back(field<ModelConfig, int64_t>(
      "model", &RC::model, &ModelConfig::n_kv_head, "n_kv_head",
      "key/value heads: fewer than n_head is grouped-query attention (0 = n_head)",
      [](const int64_t& g, const RC& c) -> std::string {
        if (g < 0) return "must be >= 0 (0 = model.n_head)";
        if (g > 0 && c.model.n_head > 0 && (g > c.model.n_head || c.model.n_head % g != 0)) {
          return "= " + std::to_string(g) + " does not divide model.n_head = " +
                 std::to_string(c.model.n_head);
        }
        return "";
      }));
  f.push_back(field("model", &RC::model, &ModelConfig::d_ffn, "d_ffn",
                    "SwiGLU hidden size (0 = the preset's, else round_up(8 d_model / 3, 256))",
                    at_least<int64_t>(1)));
  f.push_back(field("model", &RC::model, &ModelConfig::vocab_size, "vocab_size",
                    "tokenizer vocabulary (GPT-2: 50257); the embedding pads it to a multiple of 64",
                    at_least<int64_t>(2)));
  f.push_back(field("model", &RC::model, &ModelConfig::context_length, "context_length",
                    "training window and evaluation context, in tokens", at_least<int64_t>(1)));
  f.push_back(field("model", &RC::model, &ModelConfig::tie_embeddings, "tie_embeddings",
                    "share the token embedding with the LM head"));
  f.push_back(field("model", &RC::model, &ModelConfig::norm_eps, "norm_eps",
                    "RMSNorm epsilon, in (0, 1]", between(0, 1, true)));
  f.push_back(field("model", &RC::model, &ModelConfig::init_from, "init_from",
                    "a Hugging Face Llama-family folder whose weights start the run, its "
                    "config.json setting the shape (\"\" = random init)"));
  f.push_back(field("model", &RC::model, &ModelConfig::init_std, "init_std",
                    "std of the normal init (residual projections scaled by 1/sqrt(2 n_layer)), "
                    "in (0, 1]",
                    between(0, 1, true)));
}

// [data]: the shards, and the fixed token of the Mask@k ablation.
void add_data_fields(std::vector<Field>& f) {
  using RC = RunConfig;
  f.push_back(field("data", &RC::data, &DataConfig::train, "train",
                    "training shards: an llm.c .bin file, a folder of them, or a glob"));
  f.push_back(field("data", &RC::data, &DataConfig::val, "val",
                    "validation shards (same forms); empty = no validation loss"));
  f.push_back(field<DataConfig, int64_t>(
      "data", &RC::data, &DataConfig::fixed_token_position, "fixed_token_position",
      "Mask@k: 0-based position of a fixed token in every training window; -1 = off",
      [](const int64_t& k, const RC& c) -> std::string {
        if (k < -1 || k >= c.model.context_length) {
          return "must be -1 (off) or in [0, model.context_length = " +
                 std::to_string(c.model.context_length) + ")";
        }
        return "";
      }));
  f.push_back(field<DataConfig, int64_t>(
      "data", &RC::data, &DataConfig::fixed_token_id, "fixed_token_id",
      "Mask@k: the token id placed at fixed_token_position",
      [](const int64_t& id, const RC& c) -> std::string {
        if (c.data.fixed_token_position < 0) return "";  // Mask@k off: the id is unused
        if (id < 0 || id >= c.model.vocab_size) {
          return "must be a token id in [0, model.vocab_size = " +
                 std::to_string(c.model.vocab_size) + ")";
        }
        return "";
      }));
}

// [train], the steps and their batches: seed, step count, micro-batch and accumulation.
void add_train_batch_fields(std::vector<Field>& f) {
  using RC = RunConfig;
  f.push_back(field("train", &RC::train, &TrainConfig::seed, "seed",
                    "seed of initialisation and data order", at_least<int64_t>(0)));
  f.push_back(field("train", &RC::train, &TrainConfig::steps, "steps", "optimizer steps",
                    at_least<int64_t>(1)));
  f.push_back(field("train", &RC::train, &TrainConfig::batch_size, "batch_size",
                    "sequences per micro-batch", at_least<int64_t>(1)));
  f.push_back(field<TrainConfig, int64_t>(
      "train", &RC::train, &TrainConfig::batch_tokens, "batch_tokens",
      "tokens per optimizer step, reached by gradient accumulation; 0 = one micro-batch",
      [](const int64_t& bt, const RC& c) -> std::string {
        // Saturating: a product past 2^63 is left to the memory check, which names the key to
        // lower, instead of wrapping round (to 0, a division by zero).
        const int64_t micro = saturating_mul(c.train.batch_size, c.model.context_length);
        if (bt < 0 || (bt > 0 && micro < INT64_MAX && bt % micro != 0)) {
          return "= " + std::to_string(bt) + " must be 0 or a multiple of train.batch_size * " +
                 "model.context_length = " + std::to_string(micro);
        }
        return "";
      }));
}

// [train], the optimizer: AdamW, its learning-rate schedule and clipping.
void add_optimizer_fields(std::vector<Field>& f) {
  using RC = RunConfig;
  // 1000 is far above any learning rate AdamW trains with and still diverges in a few steps (the
  // divergence guard's test); 1e300 overflowed float32 inside LibTorch.
  f.push_back(field("train", &RC::train, &TrainConfig::lr, "lr", "peak learning rate, in (0, 1000]",
                    between(0, 1000, true)));
  f.push_back(field("train", &RC::train, &TrainConfig::min_lr_ratio, "min_lr_ratio",
                    "cosine decay ends at lr * min_lr_ratio", in_unit(false)));
  f.push_back(field<TrainConfig, double>(
      "train", &RC::train, &TrainConfig::attention_lr_scale, "attention_lr_scale",
      "the attention variant's own parameters train at lr * attention_lr_scale, in (0, 10000]",
      [](const double& s, const RC& c) -> std::string {
        std::string problem = between(0, 10000, true)(s, c);
        if (problem.empty() && c.train.lr * s > 1000) {
          problem = "makes lr * attention_lr_scale = " + to_string(Value{c.train.lr * s}) +
                    ", above 1000 (train.lr's bound)";
        }
        return problem;
      }));
  f.push_back(field("train", &RC::train, &TrainConfig::warmup_steps, "warmup_steps",
                    "linear warmup steps", at_least<int64_t>(0)));
  f.push_back(field("train", &RC::train, &TrainConfig::weight_decay, "weight_decay",
                    "AdamW decoupled weight decay, matrices only, in [0, 10]", between(0, 10, false)));
  f.push_back(field("train", &RC::train, &TrainConfig::beta1, "beta1", "AdamW beta1",
                    in_unit(true)));
  f.push_back(field("train", &RC::train, &TrainConfig::beta2, "beta2", "AdamW beta2",
                    in_unit(true)));
  f.push_back(field("train", &RC::train, &TrainConfig::adam_eps, "adam_eps",
                    "AdamW epsilon, in (0, 1]", between(0, 1, true)));
  f.push_back(field("train", &RC::train, &TrainConfig::grad_clip, "grad_clip",
                    "global gradient-norm clip; 0 = off; in [0, 3.4e38] (float32)",
                    between(0, 3.4e38, false)));
}

// [train], how the run proceeds: logging, validation, checkpoints, threads, device.
void add_train_run_fields(std::vector<Field>& f) {
  using RC = RunConfig;
  f.push_back(field("train", &RC::train, &TrainConfig::log_interval, "log_interval",
                    "progress line every N steps", at_least<int64_t>(1)));
  f.push_back(field("train", &RC::train, &TrainConfig::eval_interval, "eval_interval",
                    "validation loss every N steps and at the end; 0 = end only",
                    at_least<int64_t>(0)));
  f.push_back(field("train", &RC::train, &TrainConfig::eval_tokens, "eval_tokens",
                    "validation tokens per evaluation", at_least<int64_t>(1)));
  f.push_back(field("train", &RC::train, &TrainConfig::checkpoint_interval,
                    "checkpoint_interval", "checkpoint every N steps (and at the end)",
                    at_least<int64_t>(1)));
  f.push_back(field("train", &RC::train, &TrainConfig::threads, "threads",
                    "intra-op threads; 0 = $OMP_NUM_THREADS, else all cores",
                    at_least<int64_t>(0)));
  f.push_back(field("train", &RC::train, &TrainConfig::device, "device", "auto | cpu | cuda",
                    one_of({"auto", "cpu", "cuda"})));
  f.push_back(field("train", &RC::train, &TrainConfig::precision, "precision",
                    "fp32 | bf16 (bf16 autocast of matrix products, fp32 weights and loss; CUDA "
                    "only)",
                    one_of({"fp32", "bf16"})));
  f.push_back(field("train", &RC::train, &TrainConfig::tf32, "tf32",
                    "allow TF32 tensor cores for fp32 matrix products on CUDA"));
  f.push_back(field("train", &RC::train, &TrainConfig::deterministic, "deterministic",
                    "deterministic algorithms only (CUDA: slower, reproducible)"));
  f.push_back(field("train", &RC::train, &TrainConfig::peak_flops, "peak_flops",
                    "peak FLOP/s of the device for MFU; 0 = by GPU name (CPU: no MFU); in [0, 1e21]",
                    between(0, 1e21, false)));
}

// [eval] (tasks, a list, is handled beside these scalars in run_config.cpp).
void add_eval_fields(std::vector<Field>& f) {
  using RC = RunConfig;
  f.push_back(field("eval", &RC::eval, &EvalConfig::limit, "limit",
                    "score only the first N items of each task; 0 = all", at_least<int64_t>(0)));
  f.push_back(field("eval", &RC::eval, &EvalConfig::batch_size, "batch_size",
                    "requests per forward pass", at_least<int64_t>(1)));
  f.push_back(field("eval", &RC::eval, &EvalConfig::bos, "bos",
                    "BOS policy: none (lm-eval's default for GPT-2 tokenizers) | prepend",
                    one_of({"none", "prepend"})));
  f.push_back(field("eval", &RC::eval, &EvalConfig::attention_tokens, "attention_tokens",
                    "a sweep's attention statistics: tokens of held-out text measured (whole "
                    "windows)",
                    std::function<std::string(const int64_t&, const RunConfig&)>(
                        [](const int64_t& v, const RunConfig&) -> std::string {
                          return v >= 1 && v <= (int64_t{1} << 24) ? ""
                                                                   : "must be in [1, 16777216]";
                        })));
  f.push_back(field("eval", &RC::eval, &EvalConfig::attention_window, "attention_window",
                    "a sweep's attention statistics: tokens per window; 0 = the model's context "
                    "length",
                    at_least<int64_t>(0)));
}

// The order of these calls is the order `attnbench config --schema` lists the keys in and the
// order their checks run in (the first failing one is reported).
std::vector<Field> build() {
  std::vector<Field> f;
  add_model_fields(f);
  add_data_fields(f);
  add_train_batch_fields(f);
  add_optimizer_fields(f);
  add_train_run_fields(f);
  add_eval_fields(f);
  return f;
}

}  // namespace

const std::vector<Field>& fields() {
  static const std::vector<Field> all = build();
  return all;
}

const Field* find_field(const std::string& section, const std::string& name) {
  for (auto& f : fields())
    if (f.section == section && f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> field_names(const std::string& section) {
  std::vector<std::string> names;
  for (auto& f : fields())
    if (f.section == section) names.push_back(f.name);
  if (section == "eval") {
    names.push_back("tasks");
    names.push_back("task_limits");
    names.push_back("contexts");
  }
  return names;
}

const std::vector<std::string>& section_names() {
  static const std::vector<std::string> names = {"model", "attention", "data", "train", "eval"};
  return names;
}

}  // namespace attnbench::config
