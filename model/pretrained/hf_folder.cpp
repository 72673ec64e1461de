#include "model/pretrained/hf_folder.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/common/sha256.h"
#include "core/data/hf_model_folder.h"
#include "core/data/safetensors.h"
#include "model/device.h"

namespace attnbench::model::pretrained {

namespace fs = std::filesystem;

namespace {

// The folder's weight files as transformers chooses them: model.safetensors when the folder has one
// (an index beside it is not read), else the shards model.safetensors.index.json names, each
// checked to exist before any is opened.
std::vector<fs::path> weight_files(const fs::path& dir) {
  const fs::path single = dir / "model.safetensors", index = dir / "model.safetensors.index.json";
  if (fs::exists(single)) return {single};
  if (fs::exists(index)) {
    std::set<std::string> shards;
    for (const auto& [tensor, shard] : data::read_safetensors_index(index)) shards.insert(shard);
    if (shards.empty()) throw UsageError(index.string() + ": weight_map names no tensor");
    std::vector<fs::path> files;
    for (const std::string& shard : shards) {
      if (!fs::is_regular_file(dir / shard)) {
        throw UsageError(index.string() + ": shard " + shard + " is missing from " + dir.string());
      }
      files.push_back(dir / shard);
    }
    return files;
  }
  throw UsageError(dir.string() + ": no weights (expected model.safetensors or "
                   "model.safetensors.index.json; pytorch_model.bin is not read)");
}

// Every tensor of the folder's files, read on demand into float32.
class FolderWeights : public WeightSource {
 public:
  explicit FolderWeights(const std::vector<fs::path>& files) {
    for (const fs::path& f : files) files_.push_back(data::SafetensorsFile::open(f));
    for (const auto& file : files_) {
      for (const auto& t : file.tensors()) {
        if (!by_name_.emplace(t.name, Entry{&t, &file}).second) {
          throw UsageError(file.path().string() + ": tensor " + t.name + " is in two weight files");
        }
      }
    }
  }

  bool has(const std::string& name) const override { return by_name_.count(name) > 0; }

  // The values the files hold, every tensor's.
  long double elements() const {
    long double n = 0;
    for (const auto& [name, entry] : by_name_) {
      long double size = 1;
      for (const int64_t d : entry.tensor->shape) size *= static_cast<long double>(d);
      n += size;
    }
    return n;
  }

  void take_into(const std::string& name, torch::Tensor& out) override {
    const bool check_only = out.is_meta();
    if (!check_only && (!out.is_contiguous() || out.scalar_type() != torch::kFloat32 ||
                        !out.device().is_cpu())) {
      throw std::logic_error("tensor " + name + ": take_into needs a contiguous float32 CPU tensor");
    }
    const std::vector<int64_t> shape = out.sizes().vec();
    auto it = by_name_.find(name);
    if (it == by_name_.end()) {
      throw UsageError(files_.front().path().parent_path().string() + ": tensor " + name +
                       " is missing from the weights");
    }
    const data::SafetensorsTensor& t = *it->second.tensor;
    if (t.shape != shape) {
      throw UsageError(it->second.file->path().string() + ": tensor " + name + " has shape " +
                       show(t.shape) + ", config.json implies " + show(shape));
    }
    if (!data::is_weight_dtype(t.dtype)) {
      throw UsageError(it->second.file->path().string() + ": tensor " + name + " has dtype " +
                       data::safetensors_dtype_name(t.dtype) + " (expected F32, F16 or BF16)");
    }
    if (!taken_.insert(name).second) throw std::logic_error("tensor " + name + " taken twice");
    if (check_only) return;
    data::to_float32(t, out.data_ptr<float>());
    it->second.file->release(t);  // read once: its pages need not stay resident
  }

  // A UsageError naming the first tensor neither taken nor `ignorable`.
  void check_all_taken(const std::function<bool(const std::string&)>& ignorable) const {
    for (const auto& [name, entry] : by_name_) {
      if (taken_.count(name) || (ignorable && ignorable(name))) continue;
      throw UsageError(entry.file->path().string() + ": tensor " + name +
                       " is not part of the architecture config.json declares (refused rather "
                       "than ignored)");
    }
  }

 private:
  static std::string show(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
  }
  struct Entry {
    const data::SafetensorsTensor* tensor;
    const data::SafetensorsFile* file;
  };
  std::vector<data::SafetensorsFile> files_;
  std::map<std::string, Entry> by_name_;
  std::set<std::string> taken_;
};

std::string weights_digest(const std::vector<fs::path>& files) {
  if (files.size() == 1) return sha256_file(files.front());  // each file is hashed once
  std::string all;
  for (const fs::path& f : files) all += f.filename().string() + " " + sha256_file(f) + "\n";
  return sha256_hex(all);
}

ArchitectureConfig parse_architecture(const HFConfig& cfg) {
  const std::string file = cfg.file().string();
  if (!cfg.has("model_type")) throw UsageError(file + ": model_type is missing");
  const std::string type = cfg.string("model_type", "");
  const Architecture& arch = architecture(type, file + ": model_type: ");
  ArchitectureConfig a = arch.parse(cfg);
  cfg.finish();
  if (a.n_head % a.n_kv_head != 0) {
    cfg.refuse("num_key_value_heads", "num_attention_heads = " + std::to_string(a.n_head) +
                                          " must be a multiple of it");
  }
  return a;
}

// The parameters of a model of `a`'s architecture with `layers` layers, built on the meta device
// (shapes only: the module is the one definition of them). long double: no size overflows.
long double parameters(ArchitectureConfig a, int64_t layers) {
  a.n_layer = layers;
  a.layer_windows.clear();
  const PretrainedLM m(a, torch::Device(torch::kMeta));
  long double n = 0;
  for (const torch::Tensor& p : m->parameters()) {
    long double size = 1;
    for (const int64_t d : p.sizes()) size *= static_cast<long double>(d);
    n += size;
  }
  return n;
}

// The weights are checked against config.json before any is read or the model allocated. First
// their count: the parameters config.json implies, P(0) + n_layer (P(1) - P(0)) from models of no
// layer and of one (so a config claiming 100,000 layers is not built even on the meta device),
// cannot exceed the values the files hold. Then each tensor the architecture needs is in the files
// with its shape, and no other is there unless `ignorable`, against a model on the meta device.
void check_weights(const ArchitectureConfig& a, const std::vector<fs::path>& files) {
  const Architecture& arch = architecture(a.model_type, "");
  FolderWeights weights(files);
  const fs::path config = files.front().parent_path() / "config.json";
  try {
    const long double none = parameters(a, 0);
    const long double implied = none + static_cast<long double>(a.n_layer) * (parameters(a, 1) - none);
    if (implied > weights.elements()) {
      throw UsageError(config.string() + ": its sizes (" + std::to_string(a.n_layer) +
                       " layers of width " + std::to_string(a.d_model) + ", a vocabulary of " +
                       std::to_string(a.vocab_size) + ", " + std::to_string(a.context_length) +
                       " positions) imply " +
                       fmt::format("{:.4g}", static_cast<double>(implied)) +
                       " parameters, more than the " +
                       fmt::format("{:.4g}", static_cast<double>(weights.elements())) +
                       " values the weight files hold");
    }
    PretrainedLM shapes(a, torch::Device(torch::kMeta));
    arch.load(*shapes, weights);
  } catch (const c10::Error& e) {  // a size torch cannot represent, e.g. a numel past 2^63
    throw UsageError(config.string() + ": its sizes describe no model torch can build (" +
                     e.what_without_backtrace() + ")");
  }
  weights.check_all_taken(arch.ignorable);
}

}  // namespace

ArchitectureConfig read_architecture(const fs::path& dir) {
  return parse_architecture(HFConfig::read(dir / "config.json"));
}

ArchitectureConfig check_pretrained(const fs::path& dir) {
  const ArchitectureConfig a = read_architecture(dir);
  check_weights(a, weight_files(dir));
  return a;
}

PretrainedModel load_pretrained(const fs::path& dir, const std::string& device_setting,
                                const std::string& device_key) {
  // config.json is read once: the architecture and the run's identity come from the same bytes.
  const HFConfig cfg = HFConfig::read(dir / "config.json");
  const ArchitectureConfig a = parse_architecture(cfg);
  const torch::Device device = resolve_device(device_setting.empty() ? "cpu" : device_setting, device_key);
  const std::vector<fs::path> files = weight_files(dir);
  check_weights(a, files);
  PretrainedModel out;
  out.dir = dir;
  out.config_json = cfg.canonical();
  out.name = data::model_folder_name(dir);
  out.model = PretrainedLM(a);
  FolderWeights weights(files);
  architecture(a.model_type, "").load(*out.model, weights);
  out.weights_sha256 = weights_digest(files);
  out.model->eval();
  if (!device.is_cpu()) out.model->to(device);
  out.device = device;
  return out;
}

}  // namespace attnbench::model::pretrained
