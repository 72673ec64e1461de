#include "core/common/json_input.h"

#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "core/common/error.h"
#include "core/common/regular_file.h"

namespace attnbench {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string quoted_excerpt(std::string_view s) {
  constexpr size_t kShown = 80;
  std::string out = "'";
  for (const char c : s.substr(0, kShown)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) {
      out += c;
      continue;
    }
    const char* hex = "0123456789abcdef";
    out += {'\\', 'x', hex[byte >> 4], hex[byte & 15]};
  }
  return out + (s.size() > kShown ? "...'" : "'");
}

std::string describe_json(const json& v) {
  if (v.is_number()) return "the number " + v.dump();
  if (v.is_string()) return "the string " + quoted_excerpt(v.get_ref<const std::string&>());
  if (v.is_null()) return "null";
  return std::string(v.is_boolean() ? "a " : "an ") + v.type_name();
}

namespace {

// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string json_message(const json::exception& e) {
  const std::string what = e.what();
  const size_t cut = what.find("] ");
  return cut == std::string::npos ? what : what.substr(cut + 2);
}

[[noreturn]] void refuse(const fs::path& file, const std::string& what) {
  throw InputError({file.string()}, what);
}

}  // namespace

namespace {

// nlohmann's own DOM builder with the bounds checked as each event arrives: its callback parser
// would do, but it scans the enclosing container for discarded values at every object's end, which
// is quadratic in an array of objects (200,000 added tokens: minutes).
class BoundedDom : public json::json_sax_t {
 public:
  BoundedDom(json& root, const fs::path& file, const std::string& what, int max_depth)
      : root_(root), file_(file), what_(what), max_depth_(max_depth) {}

  bool null() override { return value(nullptr); }
  bool boolean(bool v) override { return value(v); }
  bool number_integer(number_integer_t v) override { return value(v); }
  bool number_unsigned(number_unsigned_t v) override { return value(v); }
  bool number_float(number_float_t v, const string_t& text) override {
    if (!std::isfinite(v)) {
      refuse(file_, what_ + " is not valid JSON: number overflow (" + quoted_excerpt(text) + ")");
    }
    return value(v);
  }
  bool string(string_t& v) override { return value(std::move(v)); }
  bool binary(binary_t& v) override { return value(std::move(v)); }
  bool start_object(std::size_t) override { return open(json::value_t::object); }
  bool start_array(std::size_t) override { return open(json::value_t::array); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (!keys_.back().insert(k).second) {
      refuse(file_, what_ + " has the key " + quoted_excerpt(k) + " twice" +
                        (stack_.size() == 1 ? "" : " in " + quoted_excerpt(top_key_)) +
                        "; each key must appear once");
    }
    if (stack_.size() == 1) top_key_ = k;
    slot_ = &(*stack_.back())[k];
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const json::exception& e) override {
    refuse(file_, what_ + " is not valid JSON: " + json_message(e));
  }

 private:
  // Where the next value goes: the root, the end of the open array, or the key just read.
  template <typename V>
  json* place(V&& v) {
    if (stack_.empty()) return &(root_ = json(std::forward<V>(v)));
    if (stack_.back()->is_array()) return &stack_.back()->emplace_back(std::forward<V>(v));
    *slot_ = json(std::forward<V>(v));
    return slot_;
  }
  template <typename V>
  bool value(V&& v) {
    place(std::forward<V>(v));
    return true;
  }
  bool open(json::value_t type) {
    const int depth = static_cast<int>(stack_.size());
    if (depth > max_depth_) {
      refuse(file_, what_ + " nests objects or arrays " + std::to_string(depth + 1) +
                        " deep, more than the " + std::to_string(max_depth_ + 1) + " it can have");
    }
    stack_.push_back(place(type));
    if (type == json::value_t::object) keys_.emplace_back();
    return true;
  }
  bool close() {
    if (stack_.back()->is_object()) keys_.pop_back();
    stack_.pop_back();
    return true;
  }

  json& root_;
  const fs::path& file_;
  const std::string& what_;
  int max_depth_;
  std::vector<json*> stack_;                // the open objects and arrays
  std::vector<std::set<std::string>> keys_;  // one set per open object
  json* slot_ = nullptr;
  std::string top_key_;
};

}  // namespace

json parse_json_input(std::string_view text, const fs::path& file, const std::string& what,
                      const JsonLimits& limits) {
  json root;
  BoundedDom dom(root, file, what, limits.max_depth);
  json::sax_parse(text.begin(), text.end(), &dom);
  return root;
}

json read_json_input(const fs::path& file, const std::string& what, const JsonLimits& limits) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(file, ec);
  if (!ec && size > limits.max_bytes) {
    refuse(file, what + " is " + std::to_string(size) + " bytes, more than the " +
                     std::to_string(limits.max_bytes) + " such a file can have here");
  }
  return parse_json_input(read_regular_file(file, what), file, what, limits);
}

}  // namespace attnbench
