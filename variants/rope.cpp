#include "variants/rope.h"

#include <cmath>
#include <stdexcept>

namespace attnbench::variants {

const std::vector<std::string>& rope_scaling_names() {
  static const std::vector<std::string> names = {"none", "linear", "llama3"};
  return names;
}

RopeScaling parse_rope_scaling(const std::string& name) {
  if (name == "none") return RopeScaling::None;
  if (name == "linear") return RopeScaling::Linear;
  if (name == "llama3") return RopeScaling::Llama3;
  throw std::invalid_argument("unknown RoPE scaling '" + name + "'");
}

namespace {

// Llama 3.1's rule (transformers' _compute_llama3_parameters): wavelengths beyond
// original_context / low_freq_factor are stretched by `factor`, those below
// original_context / high_freq_factor kept, and the band between interpolated smoothly.
torch::Tensor llama3(const RopeFrequencies& f, const torch::Tensor& inv_freq) {
  const double low_wavelen = f.original_context / f.low_freq_factor;
  const double high_wavelen = f.original_context / f.high_freq_factor;
  const torch::Tensor wavelen = 2 * M_PI / inv_freq;
  const torch::Tensor scaled = torch::where(wavelen > low_wavelen, inv_freq / f.factor, inv_freq);
  const torch::Tensor smooth =
      (f.original_context / wavelen - f.low_freq_factor) / (f.high_freq_factor - f.low_freq_factor);
  const torch::Tensor smoothed = (1 - smooth) * scaled / f.factor + smooth * scaled;
  const torch::Tensor medium = (wavelen >= high_wavelen).logical_and(wavelen <= low_wavelen);
  return torch::where(medium, smoothed, scaled);
}

}  // namespace

torch::Tensor rope_inverse_frequencies(const RopeFrequencies& f, int64_t dims,
                                       torch::ScalarType dtype) {
  if (dims <= 0 || dims % 2 != 0) {
    throw std::invalid_argument("RoPE needs an even, positive number of rotated dimensions, got " +
                                std::to_string(dims));
  }
  const auto options = torch::TensorOptions().dtype(dtype);
  const torch::Tensor exponent = torch::arange(0, dims, 2, options) / static_cast<double>(dims);
  const torch::Tensor inv_freq = 1.0 / torch::pow(f.theta, exponent);
  switch (f.scaling) {
    case RopeScaling::None:
      return inv_freq;
    case RopeScaling::Linear:  // positions / factor, applied to the frequencies
      return inv_freq / f.factor;
    case RopeScaling::Llama3:
      return llama3(f, inv_freq);
  }
  throw std::logic_error("rope_inverse_frequencies: unhandled scaling");
}

}  // namespace attnbench::variants
