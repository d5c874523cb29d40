// What classifying one new kernel name costs (TensorCoreRules::classify, run
// once per distinct name on the CUPTI processing thread), against the search
// it replaced: std::regex_search of each rule's pattern as written, which
// retries from every start position (quadratic in the name for a rule that
// begins with `.*`). Both with the same flags (libstdc++'s breadth-first
// matcher), the shipped table and a user rule, names of 256 to 4,096
// characters (the searched prefix) that no rule matches, so every rule runs.
// Figures go into docs/performance.md.
#include <benchmark/benchmark.h>

#include <memory>
#include <regex>
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

void Sizes(benchmark::internal::Benchmark* b) {
  for (int which : {0, 1})
    for (int length : {256, 1024, 4096}) b->Args({which, length});
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Classify)->Apply(Sizes);
BENCHMARK(BM_Classify)->Args({2, 4096})->Args({3, 4096})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SearchFromEveryStart)->Apply(Sizes);

}  // namespace

BENCHMARK_MAIN();
