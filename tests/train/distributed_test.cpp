// Data-parallel pieces (docs/distributed.md): the launch environment, the split of a step's batch,
// and, with real Gloo ranks (forked processes rendezvousing through a store hosted here), the
// gradient reducer against one process's gradients, the replica check and a dead peer.
#include <sys/wait.h>
#include <unistd.h>

#include <torch/torch.h>

#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <string>

#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/common/process.h"
#include "train/distributed.h"
#include "train/grad_reducer.h"
#include "train/windows.h"

// A namespace per file: the test executable is a unity build (tests/CMakeLists.txt).
namespace distributed_test {

using namespace attnbench;
using train::RankEnv;

namespace {

train::GetEnv env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

// Runs `body(comm)` in `world` forked ranks joined by Gloo; returns each rank's exit code. A rank
// exits 0 when `body` returns true; Catch2's checks cannot cross fork(), so a rank reports on stderr.
std::vector<int> run_ranks(int world, const std::function<bool(train::Communicator&)>& body) {
  train::HostedStore store(world, std::chrono::seconds(20));
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int code = 1;
      try {
        torch::set_num_threads(1);
        RankEnv env;
        env.launcher = "test";
        env.rank = r;
        env.world_size = world;
        env.local_rank = r;
        env.local_world_size = world;
        env.master_port = store.port();
        env.agent_store = true;
        train::Communicator comm(env, torch::kCPU, std::chrono::seconds(10));
        code = body(comm) ? 0 : 1;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
      }
      std::fflush(stderr);
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes;
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    codes.push_back(exit_code(status));
  }
  return codes;
}

// A small network with two layers (so several buckets) and a shared weight used twice (its
// gradient arrives summed, once).
struct Net {
  torch::Tensor w1, w2, shared;
  Net() {
    torch::manual_seed(3);
    w1 = torch::randn({8, 6}, torch::requires_grad());
    w2 = torch::randn({6, 4}, torch::requires_grad());
    shared = torch::randn({4}, torch::requires_grad());
  }
  std::vector<torch::Tensor> params() const { return {w1, w2, shared}; }
  torch::Tensor loss(const torch::Tensor& x) const {
    auto h = torch::tanh(x.matmul(w1)).matmul(w2) * shared;
    return (h * shared).pow(2).mean();
  }
};

bool close(const torch::Tensor& a, const torch::Tensor& b, const std::string& what) {
  const double err = (a - b).abs().max().item<double>();
  if (err <= 1e-6 * (1.0 + b.abs().max().item<double>())) return true;
  std::fprintf(stderr, "%s differs by %g\n", what.c_str(), err);
  return false;
}

}  // namespace

CATCH_TEST_CASE("rank environment: torchrun's variables, srun's, or none") {
  CATCH_CHECK(!train::rank_env(env_of({})).distributed());
  RankEnv t = train::rank_env(env_of({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
                                      {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "node7"},
                                      {"MASTER_PORT", "29600"},
                                      {"TORCHELASTIC_USE_AGENT_STORE", "True"}}));
  CATCH_CHECK(t.launcher == "torchrun");
  CATCH_CHECK((t.rank == 3 && t.world_size == 8 && t.local_rank == 1 && t.local_world_size == 2));
  CATCH_CHECK((t.master_addr == "node7" && t.master_port == 29600 && t.agent_store));

  RankEnv s = train::rank_env(env_of({{"SLURM_PROCID", "5"}, {"SLURM_STEP_NUM_TASKS", "8"},
                                      {"SLURM_LOCALID", "1"}, {"SLURM_STEP_TASKS_PER_NODE", "4(x2)"},
                                      {"MASTER_ADDR", "gpu01"}}));
  CATCH_CHECK(s.launcher == "slurm");
  CATCH_CHECK((s.rank == 5 && s.world_size == 8 && s.local_rank == 1 && s.local_world_size == 4));
  CATCH_CHECK((s.master_addr == "gpu01" && s.master_port == 29500 && !s.agent_store));
  // A batch script (or a one-task step) is one process even inside an allocation of many tasks.
  CATCH_CHECK(!train::rank_env(env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}})).distributed());
}

CATCH_TEST_CASE("rank environment: bad values name the variable") {
  auto message = [](std::map<std::string, std::string> vars) {
    try {
      train::rank_env(env_of(std::move(vars)));
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CATCH_CHECK_THAT(message({{"RANK", "x"}, {"WORLD_SIZE", "2"}}),
                   Catch::Contains("RANK=x: expected an integer"));
  CATCH_CHECK_THAT(message({{"RANK", "0"}}), Catch::Contains("WORLD_SIZE is not set"));
  CATCH_CHECK_THAT(message({{"RANK", "2"}, {"WORLD_SIZE", "2"}}), Catch::Contains("rank 2 of world size 2"));
  CATCH_CHECK_THAT(message({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}}),
                   Catch::Contains("MASTER_ADDR is not set"));
  // A port beyond 16 bits was cut to another port silently.
  for (const char* port : {"95000", "0", "65536", "99999999999999999999"}) {
    CATCH_CHECK_THAT(message({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", port}}),
                     Catch::Contains(std::string("MASTER_PORT=") + port +
                                     ": expected an integer in [1, 65535]"));
  }
  CATCH_CHECK(train::rank_env(env_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "65535"}}))
                  .master_port == 65535);
}

CATCH_TEST_CASE("a step's batch splits into equal shares that cover it once") {
  // (batch, accumulation, world): whole micro-batches when world divides the accumulation, slices
  // of each otherwise.
  for (auto [batch, micro, world] : std::vector<std::tuple<int64_t, int64_t, int>>{
           {4, 1, 2}, {4, 1, 4}, {8, 4, 2}, {6, 4, 4}, {4, 3, 2}, {5, 1, 1}}) {
    std::vector<int> covered(static_cast<size_t>(batch * micro), 0);
    int64_t per_rank = -1;
    for (int r = 0; r < world; ++r) {
      int64_t n = 0;
      for (const auto& mb : train::rank_micro_batches(batch, micro, r, world)) {
        CATCH_CHECK(mb.count > 0);
        for (int64_t i = mb.first; i < mb.first + mb.count; ++i) covered[static_cast<size_t>(i)]++;
        n += mb.count;
      }
      if (per_rank >= 0) CATCH_CHECK(n == per_rank);
      per_rank = n;
    }
    CATCH_CHECK(std::all_of(covered.begin(), covered.end(), [](int c) { return c == 1; }));
  }
  auto one = train::rank_micro_batches(4, 3, 0, 1);  // one process: the micro-batches in order
  CATCH_REQUIRE(one.size() == 3);
  CATCH_CHECK((one[1].first == 4 && one[1].count == 4));
  CATCH_CHECK_THROWS_AS(train::rank_micro_batches(3, 1, 0, 2), UsageError);
  CATCH_CHECK_THROWS_WITH(train::rank_micro_batches(6, 3, 0, 4),
                          Catch::Contains("cannot be split evenly over 4 ranks"));
}

CATCH_TEST_CASE("gradient reducer: 2 ranks x 2 accumulated halves == one process's gradient") {
  auto codes = run_ranks(2, [](train::Communicator& comm) {
    torch::manual_seed(11);
    auto x = torch::randn({2, 8, 8});  // 2 micro-batches of 8 rows: the step's global batch
    // One process: the mean over both micro-batches.
    Net ref;
    ((ref.loss(x[0]) + ref.loss(x[1])) / 2).backward();
    // This rank: half of each micro-batch, accumulated; 64-byte buckets force several all-reduces.
    Net net;
    train::GradReducer reducer({"w1", "w2", "shared"}, net.params(), comm, 64);
    bool ok = reducer.bucket_count() == 2;  // {shared, w2} then {w1}
    for (int m = 0; m < 2; ++m) {
      if (m == 1) reducer.arm();
      (net.loss(x[m].narrow(0, 4 * comm.rank(), 4)) / 2).backward();
    }
    reducer.finish();
    ok = close(net.w1.grad(), ref.w1.grad(), "w1") && ok;
    ok = close(net.w2.grad(), ref.w2.grad(), "w2") && ok;
    return close(net.shared.grad(), ref.shared.grad(), "shared") && ok;
  });
  CATCH_CHECK(codes == std::vector<int>{0, 0});
}

CATCH_TEST_CASE("replica check: identical parameters pass, one rank's change stops every rank") {
  auto same = run_ranks(2, [](train::Communicator& comm) {
    Net net;
    train::check_parameters_identical(comm, {"w1", "w2", "shared"}, net.params(), 5);
    return true;
  });
  CATCH_CHECK(same == std::vector<int>{0, 0});
  auto differ = run_ranks(2, [](train::Communicator& comm) {
    Net net;
    if (comm.rank() == 1) net.w2.data()[0][0] += 1e-3;
    try {
      train::check_parameters_identical(comm, {"w1", "w2", "shared"}, net.params(), 5);
    } catch (const std::runtime_error& e) {
      return std::string(e.what()).find("parameters differ after step 5 (parameter w2") !=
             std::string::npos;
    }
    return false;
  });
  CATCH_CHECK(differ == std::vector<int>{0, 0});
}

CATCH_TEST_CASE("a rank that dies fails the others' next collective, which name it") {
  auto codes = run_ranks(2, [](train::Communicator& comm) {
    auto t = torch::ones({4});
    comm.allreduce_sum(t, "warm-up");
    if (comm.rank() == 1) ::_exit(9);
    comm.set_step(6);
    try {
      comm.allreduce_sum(t, "all-reduce of the losses");
    } catch (const train::CollectiveError& e) {
      // The store (hosted here) outlives rank 1: its heartbeat has stopped, its steps are known.
      const std::string m = e.what();
      const bool ok =
          m.find("rank 0 of 2: all-reduce of the losses at step 7 failed") != std::string::npos &&
          m.find("not responding (stopped or dead): rank 1;") != std::string::npos &&
          m.find("steps completed: rank 0: 6, rank 1: none") != std::string::npos;
      if (!ok) std::fprintf(stderr, "unexpected message: %s\n", m.c_str());
      return ok;
    }
    return false;
  });
  CATCH_CHECK(codes == std::vector<int>{0, 9});
}

}  // namespace distributed_test
