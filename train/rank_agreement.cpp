#include "train/rank_agreement.h"

#include <unistd.h>

#include <cstdint>
#include <random>

#include <fmt/format.h>

#include "core/common/error.h"

namespace attnbench::train {
namespace {

constexpr const char* kOk = "ok";
constexpr size_t kNamedDifferences = 6;  // a message names this many keys, then counts the rest

std::string key(int attempt, const std::string& what, int rank = -1) {
  return fmt::format("attnbench/agree/{}/{}", attempt, what) +
         (rank >= 0 ? "/" + std::to_string(rank) : "");
}

// This process, distinguishable from any other that claims the same key.
std::string process_token() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::random_device rd;
  const uint64_t nonce = (static_cast<uint64_t>(rd()) << 32) | rd();
  return fmt::format("{}:{}:{:016x}", host, static_cast<long>(getpid()), nonce);
}

// One fact per line, "name\tvalue", with \, tab and newline escaped in both.
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string encode(const std::string& token, const RankIdentity& facts) {
  std::string out = token + "\n";
  for (const auto& [name, value] : facts) out += escape(name) + "\t" + escape(value) + "\n";
  return out;
}

// The facts of an encoded claim, still escaped (compared with escaped ones, printed as they are).
RankIdentity decode(const std::string& text) {
  RankIdentity facts;
  size_t at = text.find('\n');
  while (at != std::string::npos && at + 1 < text.size()) {
    const size_t end = text.find('\n', at + 1);
    const std::string line = text.substr(at + 1, end - at - 1);
    const size_t tab = line.find('\t');
    if (tab != std::string::npos) facts.emplace_back(line.substr(0, tab), line.substr(tab + 1));
    at = end;
  }
  return facts;
}

const std::string* find(const RankIdentity& facts, const std::string& name) {
  for (const auto& [n, v] : facts)
    if (n == name) return &v;
  return nullptr;
}

// "" when rank `rank`'s facts equal rank 0's, else the message that stops the job.
std::string differences(int rank, const RankIdentity& mine, const RankIdentity& first) {
  std::vector<std::string> named;
  auto add = [&](const std::string& name, const std::string* here, const std::string* there) {
    named.push_back(fmt::format("{} = {} on rank {}, {} on rank 0", name,
                                here ? *here : "(absent)", rank, there ? *there : "(absent)"));
  };
  for (const auto& [name, value] : mine) {
    const std::string* there = find(first, name);
    if (!there || *there != value) add(name, &value, there);
  }
  for (const auto& [name, value] : first)
    if (!find(mine, name)) add(name, nullptr, &value);
  if (named.empty()) return "";
  std::string list;
  for (size_t i = 0; i < named.size() && i < kNamedDifferences; ++i)
    list += (i ? "; " : "") + named[i];
  if (named.size() > kNamedDifferences)
    list += fmt::format("; and {} more", named.size() - kNamedDifferences);
  return fmt::format(
      "rank {} and rank 0 of this data-parallel job differ: {}. Every rank must train the same "
      "config on the same data (docs/distributed.md, \"Ranks agree or stop\")",
      rank, list);
}

}  // namespace

void agree(const AgreementStore& store, int rank, int world_size, int attempt,
           const RankIdentity& mine) {
  RankIdentity escaped;
  for (const auto& [name, value] : mine) escaped.emplace_back(escape(name), escape(value));
  const std::string claim = encode(process_token(), mine);
  if (store.claim(key(attempt, "identity", rank), claim) != claim) {
    throw UsageError(fmt::format(
        "rank {} of {}: another process already joined this job's rendezvous as rank {} (a second "
        "job on the same MASTER_ADDR:MASTER_PORT, or a rank started twice); give each job a port "
        "of its own",
        rank, world_size, rank));
  }
  if (rank != 0) {
    const RankIdentity first = decode(store.wait_get(key(attempt, "identity", 0)));
    const std::string verdict = differences(rank, escaped, first);
    store.set(key(attempt, "verdict", rank), verdict.empty() ? kOk : verdict);
    if (!verdict.empty()) throw UsageError(verdict);
    const std::string job = store.wait_get(key(attempt, "job"));
    if (job != kOk) throw UsageError(job);
    return;
  }
  for (int r = 1; r < world_size; ++r) {
    const std::string verdict = store.wait_get(key(attempt, "verdict", r));
    if (verdict != kOk) {
      store.set(key(attempt, "job"), verdict);
      throw UsageError(verdict);
    }
  }
  store.set(key(attempt, "job"), kOk);
}

}  // namespace attnbench::train
