// core/common/registry.h: the rules every extension point shares.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/common/registry.h"

using attnbench::Registry;
using attnbench::UsageError;
using Catch::Matchers::Contains;

CATCH_TEST_CASE("registry: names are listed sorted whatever the registration order") {
  Registry<int> r("widget");
  r.add("gamma", 3);
  r.add("alpha", 1);
  r.add("beta", 2);
  CATCH_CHECK(r.names() == std::vector<std::string>{"alpha", "beta", "gamma"});
  CATCH_REQUIRE(r.find("beta") != nullptr);
  CATCH_CHECK(*r.find("beta") == 2);
  CATCH_CHECK(r.get("gamma") == 3);
  CATCH_CHECK(r.find("delta") == nullptr);
}

CATCH_TEST_CASE("registry: an unknown name is a usage error with the list and one did-you-mean") {
  Registry<int> r("widget");
  r.add("softmax", 1);
  r.add("lazy", 2);
  CATCH_REQUIRE_THROWS_AS(r.get("lasy"), UsageError);
  CATCH_REQUIRE_THROWS_WITH(r.get("lasy", "--kind: "),
                            Contains("--kind: unknown widget 'lasy'; registered: lazy, softmax") &&
                                Contains("(did you mean 'lazy'?)"));
}

CATCH_TEST_CASE("registry: a duplicate name keeps the first item and is recorded for main") {
  const size_t before = attnbench::registration_errors().size();
  Registry<int> r("widget");
  r.add("one", 1);
  CATCH_CHECK(r.add("one", 2) == 1);
  CATCH_CHECK(r.get("one") == 1);
  const auto& errors = attnbench::registration_errors();
  CATCH_REQUIRE(errors.size() == before + 1);
  CATCH_CHECK(errors.back() == "widget 'one' registered twice");
}
