// Shared by the fuzz targets (docs/reliability.md, "Fuzzing and sanitizers"): what a parser may do
// with any input, and a scratch folder for parsers that read files.
//
// A parser may accept the input or reject it with an error the CLI turns into a message
// (docs/ARCHITECTURE.md, "Rules"): UsageError / InputError (exit 2) or another std::runtime_error
// (exit 1), with a message. Everything else is a bug and aborts, so libFuzzer saves the input:
// std::bad_alloc (a size taken from the input and believed), a raw library exception or a
// std::logic_error (an unwrapped nlohmann::json error, std::out_of_range from a container), an
// empty message, or anything that is not a std::exception. Crashes, hangs, leaks and ASan/UBSan
// reports are caught by libFuzzer and the sanitizers themselves.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>

namespace attnbench::fuzz {

[[noreturn]] inline void bug(const char* what, const std::exception* e) {
  std::fprintf(stderr, "fuzz: %s%s%s%s\n", what, e ? " " : "", e ? typeid(*e).name() : "",
               e ? (std::string(": ") + e->what()).c_str() : "");
  std::abort();
}

// Runs `parse` and lets only the expected errors through (see the top of this file).
template <typename Parse>
void expect_clean_errors(Parse&& parse) {
  try {
    parse();
  } catch (const std::bad_alloc& e) {
    bug("std::bad_alloc: a size from the input was believed", &e);
  } catch (const std::runtime_error& e) {  // UsageError and InputError included
    if (std::string_view(e.what()).empty()) bug("error without a message", &e);
  } catch (const std::exception& e) {
    bug("unexpected exception", &e);
  } catch (...) {
    bug("an exception that is not a std::exception", nullptr);
  }
}

// A folder for this process's files, removed at exit. The path is computed afresh at exit, when a
// static copy may already be destroyed.
inline std::filesystem::path scratch_path() {
  return std::filesystem::temp_directory_path() /
         ("attnbench-fuzz-" + std::to_string(::getpid()));
}
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    std::filesystem::create_directories(scratch_path());
    std::atexit([] { std::error_code ec; std::filesystem::remove_all(scratch_path(), ec); });
    return scratch_path();
  }();
  return dir;
}

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) bug("cannot write the scratch file", nullptr);
}

}  // namespace attnbench::fuzz
