// The one Catch2 main, compiled once and shared by every test executable (compiling Catch's main
// costs 12-30 s, TOOLCHAIN.md).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
