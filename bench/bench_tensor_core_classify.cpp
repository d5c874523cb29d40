// What classifying one new kernel name costs (TensorCoreRules::classify, run
// once per distinct name on the CUPTI processing thread), against the search
// it replaced: std::regex_search of each rule's pattern as written, which
// retries from every start position (quadratic in the name for a rule that
// begins with `.*`). Both with the same flags (libstdc++'s breadth-first
// matcher), the shipped table and a user rule, names of 256 to 4,096
// characters (the searched prefix) that no rule matches, so every rule runs.
// And what loading a rule the state bound refuses costs (TensorCoreRules::parse,
// once per rule file), against the order before it: the pattern compiled alone
// and wrapped for the one-pass search, then probed.
// Figures go into docs/performance.md.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "profiler/cupti/tensor_core_rules.h"

namespace {

using ampscope::profiler::cupti::TensorCoreRules;

// 0: the shipped table; 1: a user rule that begins with .*; 2 and 3: the
// costliest user rules that still load (about kMaxPatternStates states each).
constexpr const char* kUserRules[] = {nullptr, ".*cutlass.*gmma", ".{0,450}zq", "(.{1,20}){1,20}zq"};

std::shared_ptr<const TensorCoreRules> table(int which) {
  if (which == 0) return TensorCoreRules::load(TensorCoreRules::default_path());
  return TensorCoreRules::parse(std::string(kUserRules[which]) + " yes a user rule\n", "user.txt");
}

std::string label(int which, const char* how) {
  return std::string(which == 0 ? "shipped table" : kUserRules[which]) + ", " + how;
}

// A CUTLASS-style demangled template tail that none of the rules match; the
// first 8 characters are the iteration number, so every call is a new name
// (classify caches per name).
std::string template_name(size_t length, size_t iteration) {
  std::string name = "k" + std::to_string(10'000'000 + iteration) + "<cute::tuple<";
  while (name.size() < length) name += "cute::C<128>, cute::C<64>, ";
  name.resize(length);
  return name;
}

void BM_Classify(benchmark::State& state) {
  const auto rules = table(static_cast<int>(state.range(0)));
  const auto length = static_cast<size_t>(state.range(1));
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(rules->classify(template_name(length, i++)));
  state.SetLabel(label(static_cast<int>(state.range(0)), "one pass"));
}

void BM_SearchFromEveryStart(benchmark::State& state) {
  const auto rules = table(static_cast<int>(state.range(0)));
  std::vector<std::regex> plain;
  for (const auto& rule : rules->rules())
    plain.emplace_back(rule.pattern, TensorCoreRules::kPatternFlags);
  const auto length = static_cast<size_t>(state.range(1));
  size_t i = 0;
  for (auto _ : state) {
    const std::string name = template_name(length, i++);
    bool found = false;
    for (const std::regex& r : plain)
      if ((found = std::regex_search(name, r))) break;
    benchmark::DoNotOptimize(found);
  }
  state.SetLabel(label(static_cast<int>(state.range(0)), "search as before"));
}

// Rules the state bound refuses: a large literal count (the kind that
// fuzz_tensor_core_rules' corpus fills with) and a bounded gap over the bound.
constexpr const char* kRefusedPatterns[] = {"f{60198}", ".{0,2000}gemm"};

void load_refused(const std::string& pattern) {
  try {
    (void)TensorCoreRules::parse(pattern + " yes refused\n", "user.txt");
  } catch (const std::runtime_error&) {
    return;  // "user.txt line 1: the pattern '...' is too complex ..."
  }
  std::abort();  // the bound no longer refuses it: the figures would mean nothing
}

void BM_LoadRefusedRule(benchmark::State& state) {
  const std::string pattern = kRefusedPatterns[state.range(0)];
  for (auto _ : state) load_refused(pattern);
  state.SetLabel(pattern + ", probe first");
}

// The two compiles that parse() ran before the probe until the probe moved first.
void BM_LoadRefusedRuleAsBefore(benchmark::State& state) {
  const std::string pattern = kRefusedPatterns[state.range(0)];
  for (auto _ : state) {
    benchmark::DoNotOptimize(std::regex(pattern, TensorCoreRules::kPatternFlags));
    benchmark::DoNotOptimize(
        std::regex(TensorCoreRules::one_pass_search_pattern(pattern), TensorCoreRules::kPatternFlags));
    load_refused(pattern);
  }
  state.SetLabel(pattern + ", compiled twice, then the probe");
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int which : {0, 1})
    for (int length : {256, 1024, 4096}) b->Args({which, length});
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Classify)->Apply(Sizes);
BENCHMARK(BM_Classify)->Args({2, 4096})->Args({3, 4096})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SearchFromEveryStart)->Apply(Sizes);
BENCHMARK(BM_LoadRefusedRule)->DenseRange(0, 1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LoadRefusedRuleAsBefore)->DenseRange(0, 1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
