#include "model/pretrained/hf_folder.h"

#include <map>
#include <set>

#include "core/common/error.h"
#include "core/common/sha256.h"
#include "core/data/hf_model_folder.h"
#include "core/data/safetensors.h"
#include "model/device.h"

namespace attnbench::model::pretrained {

namespace fs = std::filesystem;

namespace {

// The folder's weight files: model.safetensors, or the shards its index names (each checked to
// exist before any is opened).
std::vector<fs::path> weight_files(const fs::path& dir) {
  const fs::path single = dir / "model.safetensors", index = dir / "model.safetensors.index.json";
  if (fs::exists(index)) {
    std::set<std::string> shards;
    for (const auto& [tensor, shard] : data::read_safetensors_index(index)) shards.insert(shard);
    std::vector<fs::path> files;
    for (const std::string& shard : shards) {
      if (!fs::is_regular_file(dir / shard)) {
        throw UsageError(index.string() + ": shard " + shard + " is missing from " + dir.string());
      }
      files.push_back(dir / shard);
    }
    return files;
  }
  if (fs::exists(single)) return {single};
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

// Every tensor the architecture needs is in the files with its shape, and no other is there
// (unless `ignorable`): checked against a model on the meta device, so nothing is allocated or
// read, and a config.json claiming a size its weights do not have fails before any memory is taken.
void check_weights(const ArchitectureConfig& a, const std::vector<fs::path>& files) {
  const Architecture& arch = architecture(a.model_type, "");
  PretrainedLM shapes(a, torch::Device(torch::kMeta));
  FolderWeights weights(files);
  arch.load(*shapes, weights);
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
