// The ulimit-adjuster annotation read by ParseUlimitYaml and by the NRI
// sample's own parser (containerd/nri v0.12.2's parseUlimits and
// adjustUlimits, built as ../shared/peers/nri-ulimit-parse): for every value
// of the corpus (ulimit_corpus.txt) and of the seeded random generator
// (ulimit_gen.h, for OCI_RLIMIT_ORACLE_SECONDS, 20 by default, from seed
// OCI_RLIMIT_ORACLE_SEED, 0 by default), the same
// limits, a refusal where the sample refuses, or one of the refusals
// docs/policy.md lists, in one line. A disagreeing value is printed as a
// corpus line to add.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "formats/text.h"
#include "formats/ulimit_yaml.h"
#include "harness.h"
#include "peers.h"
#include "ulimit_gen.h"

namespace ocirlimit {
namespace {

using itest::CmdResult;

// docs/policy.md: where the sample reads a number other than the text's.
constexpr std::string_view kListed[] = {
    "the NRI sample reads a missing",            // soft or hard missing
    "is null: the NRI sample reads it as 0",     // null or ~
    "reads as octal",                            // 0777
    "is one key (YAML needs a space after the",  // soft:1024 in a flow mapping
    "given twice",                               // a field or a type twice
    "a second document, which the NRI sample",   // --- after the first
    "text after the document, which the NRI",    // the same, not a document
    "is read as a float: the NRI sample reads",  // a float that rounds
};

std::string Ours(const std::string& value) {
  auto r = ParseUlimitYaml(value);
  if (!r) return "ERR " + r.error().Text();
  if (r->empty()) return "OK none";
  std::string out;
  for (const auto& l : *r) {
    out += Cat("OK ", l.info().spec_type, " soft=", std::to_string(l.soft),
               " hard=", std::to_string(l.hard), "\n");
  }
  return out.substr(0, out.size() - 1);
}

// Why the two disagree, or "" when they agree.
std::string Disagreement(const std::string& sample, const std::string& ours) {
  const bool sample_ok = sample.starts_with("OK");
  if (ours.starts_with("OK")) {
    if (!sample_ok) return "accepted where the sample refuses";
    return ours == sample ? "" : "read differently";
  }
  if (ours.find('\n') != std::string::npos) return "a refusal over several lines";
  if (!sample_ok) return "";
  for (auto listed : kListed) {
    if (ours.find(listed) != std::string::npos) return "";
  }
  return "refused where the sample reads it, and not as listed";
}

class UlimitOracle : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testsupport::TempDir("peers");
    peer_ = itest::FindPeer("nri-ulimit-parse", itest::kUlimitParseSha256, *dir_);
  }
  static void TearDownTestSuite() { delete dir_; }
  void SetUp() override {
    if (!peer_.error.empty()) FAIL() << peer_.error;
    if (!peer_.skip.empty()) GTEST_SKIP() << "the NRI sample's parser: " << peer_.skip;
  }

  // The value through both; false (and a failure naming it) when they disagree.
  bool Agree(const std::string& value) {
    itest::RunOptions opts;
    opts.stdin_data = value;
    opts.timeout_s = 10;
    CmdResult r = itest::RunCmd({peer_.path}, opts);
    std::string sample = r.out;
    while (!sample.empty() && sample.back() == '\n') sample.pop_back();
    if (r.status != 0 || sample.empty()) {
      ADD_FAILURE() << "nri-ulimit-parse failed (" << r.status << "): " << r.err;
      return false;
    }
    const std::string ours = Ours(value);
    const std::string why = Disagreement(sample, ours);
    if (why.empty()) return true;
    ADD_FAILURE() << why << "\n  value:  " << peers::CorpusLine(value) << "\n  sample: " << sample
                  << "\n  ours:   " << ours;
    return false;
  }

  static testsupport::TempDir* dir_;
  static itest::PeerBinary peer_;
};

testsupport::TempDir* UlimitOracle::dir_ = nullptr;
itest::PeerBinary UlimitOracle::peer_;

TEST_F(UlimitOracle, CorpusReadsAsTheSampleReadsIt) {
  std::ifstream in(std::string(OCI_RLIMIT_PEERS_TEST_DIR) + "/ulimit_corpus.txt");
  ASSERT_TRUE(in) << "no ulimit_corpus.txt";
  std::string line, value;
  int n = 0;
  while (std::getline(in, line)) {
    if (!peers::FromCorpusLine(line, value)) continue;
    Agree(value);
    ++n;
  }
  EXPECT_GT(n, 100);
  std::printf("corpus: %d values through both\n", n);
}

TEST_F(UlimitOracle, RandomValuesReadAsTheSampleReadsThem) {
  const char* env = std::getenv("OCI_RLIMIT_ORACLE_SECONDS");
  const int seconds = env != nullptr ? std::atoi(env) : 20;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  // OCI_RLIMIT_ORACLE_SEED: where to start, to explore past CI's seeds.
  const char* first = std::getenv("OCI_RLIMIT_ORACLE_SEED");
  const uint64_t start = first != nullptr ? std::strtoull(first, nullptr, 10) : 0;
  uint64_t seed = start;
  std::vector<std::string> disagreed;
  // Batches of 100 seeds in order: a run reaches seed N whatever the machine.
  while (std::chrono::steady_clock::now() < end && disagreed.size() < 20) {
    for (int i = 0; i < 100; ++i, ++seed) {
      const std::string value = peers::RandomUlimitYaml(seed);
      if (!Agree(value)) disagreed.push_back(peers::CorpusLine(value));
    }
  }
  std::printf("generator: seeds %llu..%llu in %d s, %zu disagreed\n",
              static_cast<unsigned long long>(start), static_cast<unsigned long long>(seed),
              seconds, disagreed.size());
  for (const auto& d : disagreed) std::printf("add to ulimit_corpus.txt: %s\n", d.c_str());
}

}  // namespace
}  // namespace ocirlimit
