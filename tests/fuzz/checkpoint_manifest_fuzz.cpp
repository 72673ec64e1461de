// Fuzzes the checkpoint manifest check (model/checkpoint_dir.h, torch-free): the input is
// MANIFEST.json in a checkpoint folder holding two small files, and verify_checkpoint reads it.
// The rest of a checkpoint (model.pt, optimizer.pt) is LibTorch's own format, read only after
// this check passes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/checkpoint_dir.h"
#include "tests/fuzz/fuzz_support.h"

using namespace attnbench;

namespace {

// The folder the manifest describes; the seed corpus lists these files with their true checksums.
const std::filesystem::path& checkpoint_folder() {
  static const std::filesystem::path dir = [] {
    auto d = fuzz::scratch() / "checkpoint";
    fuzz::write_file(d / "state.json", "{\"step\": 1}\n");
    fuzz::write_file(d / "config.json", "{}\n");
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& dir = checkpoint_folder();
  fuzz::write_file(dir / "MANIFEST.json",
                   std::string_view(reinterpret_cast<const char*>(data), size));
  fuzz::expect_clean_errors([&] { model::verify_checkpoint(dir); });
  return 0;
}
