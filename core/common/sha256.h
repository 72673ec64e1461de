// SHA-256 of files and strings (manifests and download checksums), through OpenSSL's EVP API.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

namespace attnbench {

std::string sha256_hex(std::string_view data);
std::string sha256_file(const std::filesystem::path& path);  // throws UsageError if unreadable

}  // namespace attnbench
