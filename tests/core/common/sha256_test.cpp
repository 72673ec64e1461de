#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include "core/common/sha256.h"

// FIPS 180-2 test vectors.
CATCH_TEST_CASE("sha256 matches the published test vectors") {
  CATCH_CHECK(attnbench::sha256_hex("") ==
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CATCH_CHECK(attnbench::sha256_hex("abc") ==
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  auto path = std::filesystem::temp_directory_path() / "attnbench_sha_test.txt";
  { std::ofstream(path) << "abc"; }
  CATCH_CHECK(attnbench::sha256_file(path) == attnbench::sha256_hex("abc"));
  std::filesystem::remove(path);
}
