#pragma once
// Which kernels ran on Tensor Cores, judged from the kernel's (demangled) name
// with the rule table resources/tensor_core_kernels.txt. Names are all the
// activity trace gives us; the table encodes the naming conventions of cuBLAS,
// cuBLASLt, cuDNN, CUTLASS, flash-attention and PyTorch's own kernels.
//
// File format, one rule a line:   <pattern> <yes|no> <family...>
//   pattern: an ECMAScript regex (no spaces; use \s), searched anywhere in the
//            name, case-insensitively. A plain word is its own substring.
//   family:  the rest of the line, a short label ("cuBLAS HMMA GEMM").
//   '#' starts a comment (at line start, or after whitespace). Blank lines ok.
// The first matching rule wins, so specific exceptions go above general rules.
//
// Limits, both because libstdc++'s std::regex is a backtracking matcher whose
// recursion grows with the text (a demangled CUTLASS name is kilobytes; a rule
// such as `cutlass.*gemm` over 16k characters overflowed an 8 MB stack, and a
// thread's stack may be far smaller):
//   - only a name's first kMaxClassifiedNameChars characters are searched; the
//     identifying tokens (xmma, gmma, s16816gemm, nvjet, flash_fwd, ...) come
//     early, and a longer name is never crashed on;
//   - under libstdc++ the patterns are compiled for its non-recursive
//     (breadth-first) matcher, so stack use no longer depends on the name;
//     that matcher refuses back-references ("bad regex" at load);
//   - each pattern is searched in one pass over the name, linear in its length
//     (a `.*` rule searched from every start position was quadratic: 1.4 s on
//     one 4,096-character name; see one_pass_search_pattern).
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ampscope::profiler::cupti {

struct TensorCoreClass {
  bool uses_tensor_cores = false;
  std::string family;  // the matching rule's family; "" when no rule matched
};

class TensorCoreRules {
 public:
  // 16x the longest name in the H100 fixture. Searched in one pass (linear in
  // the name; see one_pass_search_pattern), a rule over this many
  // characters costs about a millisecond, once per distinct name.
  static constexpr size_t kMaxClassifiedNameChars = 4096;
  // Longer patterns are refused at load ("line N: the pattern is ... characters long").
  static constexpr size_t kMaxPatternChars = 512;
  // A count ({n}, {n,m}) or back-reference (\N) with more digits is refused at
  // load: libstdc++ 12 reads it without an overflow check (the .cpp).
  static constexpr size_t kMaxPatternNumberDigits = 9;
  // Patterns whose automaton has more states are refused at load (libstdc++
  // only). The costliest accepted patterns, `.{0,450}zq` and
  // `(.{1,20}){1,20}zq`, search a 4,096-character name in about 0.15 s
  // (bench_tensor_core_classify); `(.{1,100}){1,100}zq` took 7.8 s. Literal
  // patterns up to kMaxPatternChars fit.
  static constexpr int kMaxPatternStates = 1000;
  // regex_search tries the pattern from every start position in turn, and the
  // breadth-first matcher runs each try to the end of what can still match: a
  // rule such as `.*cutlass.*gmma` cost O(n^2) on an n-character name, 1.4 s
  // at 4,096 characters, once per distinct name on the CUPTI processing thread.
  // Anchored behind a lazy any-character run, the same search is one pass that
  // follows every start position at once (libstdc++'s breadth-first matcher
  // keeps each state once per character), O(n) in the name. `^` inside the
  // pattern still means the name's start; `$`, `\b` and alternation keep their
  // meaning (the group is not capturing).
  // What each rule is compiled as: "^[\\s\\S]*?(?:" + pattern + ")".
  static std::string one_pass_search_pattern(std::string_view pattern);
  // How every pattern is compiled: ECMAScript, case-insensitive; under libstdc++
  // also __polynomial, its extension that selects the breadth-first executor.
  static constexpr std::regex::flag_type kPatternFlags = std::regex::ECMAScript | std::regex::icase |
                                                         std::regex::optimize
#if defined(__GLIBCXX__)
                                                         | std::regex_constants::__polynomial
#endif
      ;

  struct Rule {
    std::string pattern;  // as written in the file
    std::regex regex;     // the pattern, compiled for a one-pass search
    bool tensor_core = false;
    std::string family;
    int line = 0;
  };

  // An empty table: classifies everything as {false, ""}.
  TensorCoreRules() = default;
  TensorCoreRules(const TensorCoreRules&) = delete;
  TensorCoreRules& operator=(const TensorCoreRules&) = delete;

  // Throws std::runtime_error naming the file and line:
  // "tensor_core_kernels.txt line 12: bad regex '(hmma': ...".
  static std::shared_ptr<const TensorCoreRules> load(const std::string& path);
  // The same from text; `source_name` is what errors call the file.
  static std::shared_ptr<const TensorCoreRules> parse(std::string_view text,
                                                      const std::string& source_name);
  // resource_path("tensor_core_kernels.txt") (profiler/resource_files.h), or the AMPSCOPE_TENSOR_CORE_RULES
  // environment variable when set.
  static std::string default_path();

  // First matching rule over the name's first kMaxClassifiedNameChars characters.
  // Thread-safe; results are cached per (whole) name: kernel names repeat every
  // step, and a regex scan over long template names is not cheap.
  TensorCoreClass classify(const std::string& kernel_name) const;

  const std::vector<Rule>& rules() const { return rules_; }

 private:
  std::vector<Rule> rules_;
  mutable std::mutex cache_mu_;  // guards cache_ only; leaf lock
  mutable std::unordered_map<std::string, TensorCoreClass> cache_;
};

}  // namespace ampscope::profiler::cupti
