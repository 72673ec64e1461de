#include "evals/export_safetensors.h"

#include <fstream>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace attnbench::evals {

std::string safetensors_dtype(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat64: return "F64";
    case torch::kFloat32: return "F32";
    case torch::kFloat16: return "F16";
    case torch::kBFloat16: return "BF16";
    case torch::kInt64: return "I64";
    case torch::kInt32: return "I32";
    case torch::kInt16: return "I16";
    case torch::kInt8: return "I8";
    case torch::kUInt8: return "U8";
    case torch::kBool: return "BOOL";
    default:
      throw std::invalid_argument(std::string("safetensors has no dtype for ") +
                                  c10::toString(type));
  }
}

void write_safetensors(const std::filesystem::path& file, const std::vector<NamedTensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  // x86-64 and the GPU hosts are little-endian, as the format requires; the bytes are copied as is.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string> names;
  std::vector<torch::Tensor> data;
  int64_t offset = 0;
  for (const auto& t : tensors) {
    if (!names.insert(t.name).second) {
      throw std::invalid_argument("safetensors: duplicate tensor name " + t.name);
    }
    torch::Tensor c = t.tensor.detach().to(torch::kCPU).contiguous();
    const int64_t bytes = static_cast<int64_t>(c.numel() * c.element_size());
    header[t.name] = {{"dtype", safetensors_dtype(c.scalar_type())},
                      {"shape", c.sizes().vec()},
                      {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    data.push_back(c);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned

  std::filesystem::create_directories(file.parent_path().empty() ? "." : file.parent_path());
  std::filesystem::path tmp = file;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    const uint64_t n = text.size();
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>((n >> (8 * i)) & 0xff);
    out.write(reinterpret_cast<const char*>(len), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& c : data) {
      out.write(static_cast<const char*>(c.data_ptr()),
                static_cast<std::streamsize>(c.numel() * c.element_size()));
    }
    out.flush();
    if (!out) throw std::runtime_error("failed writing " + tmp.string());
  }
  std::filesystem::rename(tmp, file);
}

}  // namespace attnbench::evals
