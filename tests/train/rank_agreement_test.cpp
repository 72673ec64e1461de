// Ranks agree or stop (train/rank_agreement.h) on an in-memory store, one thread per rank:
// equal facts pass; one differing key stops every rank naming it; a rank number already held is
// refused; a restarted attempt is not confused with the one before it; a rank that never comes ends
// the wait with the store's timeout.
#include <chrono>
#include <condition_variable>
#include <map>
#include <stdexcept>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "train/rank_agreement.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace rank_agreement_test {

using namespace attnbench;
using train::RankIdentity;

namespace {

// What the real store's wait throws (CollectiveError, in train/distributed.h with torch).
struct Timeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A store shared by the rank threads; wait_get gives up (CollectiveError) after `timeout`.
class MemoryStore {
 public:
  explicit MemoryStore(std::chrono::milliseconds timeout) : timeout_(timeout) {}

  train::AgreementStore view() {
    train::AgreementStore s;
    s.claim = [this](const std::string& k, const std::string& v) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = values_.emplace(k, v).first;
      changed_.notify_all();
      return it->second;
    };
    s.wait_get = [this](const std::string& k) {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!changed_.wait_for(lock, timeout_, [&] { return values_.count(k) > 0; }))
        throw Timeout("timed out waiting for " + k);
      return values_.at(k);
    };
    s.set = [this](const std::string& k, const std::string& v) {
      std::lock_guard<std::mutex> lock(mutex_);
      values_[k] = v;
      changed_.notify_all();
    };
    return s;
  }

 private:
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::string> values_;
};

// Each rank's outcome: "" when agree returned, else "usage: MESSAGE" or "timeout: MESSAGE".
std::vector<std::string> run(MemoryStore& store, const std::vector<RankIdentity>& facts,
                             int attempt = 0) {
  const int world = static_cast<int>(facts.size());
  std::vector<std::string> outcome(facts.size());
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r) {
    ranks.emplace_back([&, r] {
      try {
        train::agree(store.view(), r, world, attempt, facts[static_cast<size_t>(r)]);
      } catch (const UsageError& e) {
        outcome[static_cast<size_t>(r)] = std::string("usage: ") + e.what();
      } catch (const Timeout& e) {
        outcome[static_cast<size_t>(r)] = std::string("timeout: ") + e.what();
      }
    });
  }
  for (auto& t : ranks) t.join();
  return outcome;
}

const RankIdentity kJob = {{"model.n_layer", "2"}, {"data.train", "/d/train.bin"},
                           {"data.train (contents)", "1 shards, 800 tokens, xxh3 00ff"}};

}  // namespace

CATCH_TEST_CASE("ranks with equal facts agree", "[distributed]") {
  MemoryStore store(std::chrono::seconds(5));
  CATCH_CHECK(run(store, {kJob, kJob, kJob, kJob}) == std::vector<std::string>(4, ""));
}

CATCH_TEST_CASE("one differing key stops every rank, naming the key and both values", "[distributed]") {
  MemoryStore store(std::chrono::seconds(5));
  RankIdentity other = kJob;
  other[0].second = "4";
  const auto outcome = run(store, {kJob, kJob, other});
  for (const auto& o : outcome) {
    CATCH_CAPTURE(o);
    CATCH_CHECK(o.rfind("usage: rank 2 and rank 0", 0) == 0);
    CATCH_CHECK(o.find("model.n_layer = 4 on rank 2, 2 on rank 0") != std::string::npos);
    CATCH_CHECK(o.find("data.train") == std::string::npos);  // only what differs is named
  }
}

CATCH_TEST_CASE("a fact one rank lacks, and values with line breaks, are differences", "[distributed]") {
  MemoryStore store(std::chrono::seconds(5));
  RankIdentity fewer(kJob.begin(), kJob.end() - 1), multiline = kJob;
  multiline[1].second = "/d/train.bin\ndata.train (contents)\t1 shards";  // no forged line
  auto outcome = run(store, {kJob, fewer});
  CATCH_CHECK(outcome[1].find("data.train (contents) = (absent) on rank 1") != std::string::npos);
  MemoryStore second(std::chrono::seconds(5));
  outcome = run(second, {kJob, multiline});
  CATCH_CHECK(outcome[0].find("data.train = /d/train.bin\\ndata.train (contents)\\t1 shards on rank 1") !=
        std::string::npos);
}

CATCH_TEST_CASE("a rank number another process holds is refused at once", "[distributed]") {
  MemoryStore store(std::chrono::seconds(5));
  CATCH_REQUIRE(run(store, {kJob, kJob}) == std::vector<std::string>(2, ""));
  // A second job's rank 1 on the same store: refused before it waits for anything.
  const auto start = std::chrono::steady_clock::now();
  try {
    train::agree(store.view(), 1, 2, 0, kJob);
    CATCH_FAIL("a taken rank was accepted");
  } catch (const UsageError& e) {
    CATCH_CHECK(std::string(e.what()).find("another process already joined") != std::string::npos);
  }
  CATCH_CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
}

CATCH_TEST_CASE("a restarted attempt agrees on the store its first attempt used", "[distributed]") {
  MemoryStore store(std::chrono::seconds(5));
  CATCH_REQUIRE(run(store, {kJob, kJob}, 0) == std::vector<std::string>(2, ""));
  CATCH_CHECK(run(store, {kJob, kJob}, 1) == std::vector<std::string>(2, ""));
}

CATCH_TEST_CASE("a rank that never comes ends the wait with the timeout", "[distributed]") {
  MemoryStore store(std::chrono::milliseconds(200));
  // World size 3, rank 2 never started: rank 0 waits for its verdict, rank 1 for the job's.
  std::vector<std::string> outcome(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      try {
        train::agree(store.view(), r, 3, 0, kJob);
      } catch (const Timeout& e) {
        outcome[static_cast<size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : ranks) t.join();
  CATCH_CHECK(outcome[0] == "timed out waiting for attnbench/agree/0/verdict/2");
  CATCH_CHECK(outcome[1] == "timed out waiting for attnbench/agree/0/job");
}

}  // namespace rank_agreement_test
