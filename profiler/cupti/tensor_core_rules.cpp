#include "profiler/cupti/tensor_core_rules.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "profiler/resource_files.h"

namespace ampscope::profiler::cupti {
namespace {

// Distinct kernel names in a training run are a few hundred to a few thousand;
// past this the cache is cleared rather than grown (a name-generating bug, e.g.
// per-call JIT names, must not eat memory).
constexpr size_t kMaxCachedNames = 1 << 16;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Cuts a comment: '#' at the start or after whitespace (a '#' inside a regex
// token such as "a#b" stays).
std::string_view strip_comment(std::string_view line) {
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
      return line.substr(0, i);
    }
  }
  return line;
}

#if defined(__GLIBCXX__)
// One pass still costs (automaton states alive at once) x (name length), and a
// counted repetition multiplies states: a user rule `(.{1,100}){1,100}zq` took
// 7.8 s on one 4,096-character name, on the CUPTI processing thread, once per
// distinct name. libstdc++ counts states as it compiles and refuses an
// automaton over _GLIBCXX_REGEX_STATE_LIMIT (100,000) with error_space, so the
// pattern repeated kStateProbeCopies times is refused when the pattern alone
// has over about kMaxPatternStates (the repetition adds a few states of its own).
// That compile costs up to about 25 ms, so it is skipped for a pattern without
// `{`: without a counted repetition the kMaxPatternChars limit bounds the cost
// (the costliest such patterns measured, 255 `.*` or a 255-way alternation of
// `.`, search a 4,096-character name in 112 and 119 ms). No shipped pattern has one.
constexpr int kStateProbeCopies = _GLIBCXX_REGEX_STATE_LIMIT / TensorCoreRules::kMaxPatternStates;

bool has_too_many_states(const std::string& pattern) {
  if (pattern.find('{') == std::string::npos) return false;
  try {
    (void)std::regex("(?:" + pattern + "){" + std::to_string(kStateProbeCopies) + "}",
                     TensorCoreRules::kPatternFlags);
  } catch (const std::regex_error& e) {
    return e.code() == std::regex_constants::error_space;
  }
  return false;
}
#else
// Other standard libraries expose no state count: the check is libstdc++'s.
bool has_too_many_states(const std::string&) { return false; }
#endif

// libstdc++ 12.2 (Debian 12's; PR 106607 added the check later) reads the number of
// a counted repetition or a back-reference into a long with no overflow check,
// then narrows it to int: `f{4294967297}` compiled as `f{1}`, a rule that
// silently means something else, and `\5000000000000000000000` overflowed the
// long (undefined behaviour, found by fuzz_tensor_core_rules under UBSan).
// Those are the only numbers its compiler reads (\x and \u escapes have fixed
// lengths), so the digits after an unescaped backslash or in a brace are
// measured before std::regex sees the pattern. A digit inside brackets counts
// too, which may refuse a pattern that never needed it, never the reverse.
// Nine digits fit an int; any count over kMaxPatternStates is refused anyway.
size_t longest_regex_number(std::string_view pattern) {
  const auto digits_from = [&](size_t i) {
    size_t end = i;
    while (end < pattern.size() && pattern[end] >= '0' && pattern[end] <= '9') ++end;
    return end - i;
  };
  size_t longest = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      ++i;  // the escaped character: digits start a back-reference, `\\` is a literal backslash
      if (i < pattern.size()) longest = std::max(longest, digits_from(i));
    } else if (pattern[i] == '{') {
      const size_t low = digits_from(i + 1), comma = i + 1 + low;
      longest = std::max(longest, low);
      if (comma < pattern.size() && pattern[comma] == ',') longest = std::max(longest, digits_from(comma + 1));
    }
  }
  return longest;
}

}  // namespace

std::shared_ptr<const TensorCoreRules> TensorCoreRules::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string name = std::filesystem::path(path).filename().string();
  if (!in) throw std::runtime_error(name + ": cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), name);
}

std::shared_ptr<const TensorCoreRules> TensorCoreRules::parse(std::string_view text,
                                                              const std::string& source_name) {
  auto table = std::make_shared<TensorCoreRules>();
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = trim(strip_comment(text.substr(pos, eol - pos)));
    pos = eol + 1;
    ++line_no;
    if (line.empty()) continue;

    auto fail = [&](const std::string& what) {
      throw std::runtime_error(source_name + " line " + std::to_string(line_no) + ": " + what);
    };
    // pattern, verdict, family (the rest).
    size_t p_end = line.find_first_of(" \t");
    if (p_end == std::string_view::npos) {
      fail("expected '<pattern> <yes|no> <family>', got '" + std::string(line) + "'");
    }
    Rule rule;
    rule.line = line_no;
    rule.pattern = std::string(line.substr(0, p_end));
    std::string_view rest = trim(line.substr(p_end));
    size_t v_end = rest.find_first_of(" \t");
    std::string_view verdict = rest.substr(0, v_end);
    if (verdict == "yes") {
      rule.tensor_core = true;
    } else if (verdict == "no") {
      rule.tensor_core = false;
    } else {
      fail("second field must be 'yes' or 'no', got '" + std::string(verdict) + "'");
    }
    rule.family = v_end == std::string_view::npos ? "" : std::string(trim(rest.substr(v_end)));
    if (rule.family.empty()) fail("missing family after '" + std::string(verdict) + "'");
    // libstdc++ compiles a regex by recursive descent, a few frames a character:
    // a 23 KB pattern overflowed the stack (found by fuzz_tensor_core_rules with
    // -max_len=300000). Shipped patterns are under 50 characters.
    if (rule.pattern.size() > kMaxPatternChars) {
      fail("the pattern is " + std::to_string(rule.pattern.size()) + " characters long; at most " +
           std::to_string(kMaxPatternChars));
    }
    if (const size_t digits = longest_regex_number(rule.pattern); digits > kMaxPatternNumberDigits) {
      fail("the pattern '" + rule.pattern + "' has a " + std::to_string(digits) +
           "-digit count or back-reference; at most " + std::to_string(kMaxPatternNumberDigits) + " digits");
    }
    // The state probe before the two compiles below: it costs at most about
    // _GLIBCXX_REGEX_STATE_LIMIT states whatever the pattern, while a refused
    // pattern such as `f{60198}` costs its whole automaton in each of them
    // (about 60,000 states twice more, for a rule that is then refused).
    if (has_too_many_states(rule.pattern)) {
      fail("the pattern '" + rule.pattern + "' is too complex (over " + std::to_string(kMaxPatternStates) +
           " regex states, from a counted repetition such as {1,1000}); write a smaller count or .*");
    }
    try {
      // The pattern alone first: wrapped, an unbalanced one (`a)|(b`) would
      // compile, so only this compile can refuse it.
      (void)std::regex(rule.pattern, kPatternFlags);
      rule.regex = std::regex(one_pass_search_pattern(rule.pattern), kPatternFlags);
    } catch (const std::regex_error& e) {
      fail("bad regex '" + rule.pattern + "': " + e.what());
    }
    table->rules_.push_back(std::move(rule));
    if (eol == text.size()) break;
  }
  return table;
}

std::string TensorCoreRules::one_pass_search_pattern(std::string_view pattern) {
  return "^[\\s\\S]*?(?:" + std::string(pattern) + ")";
}

std::string TensorCoreRules::default_path() {
  if (const char* env = std::getenv("AMPSCOPE_TENSOR_CORE_RULES"); env != nullptr && *env) {
    return env;
  }
  return resource_path("tensor_core_kernels.txt");
}

TensorCoreClass TensorCoreRules::classify(const std::string& kernel_name) const {
  {
    std::lock_guard lock(cache_mu_);
    if (auto it = cache_.find(kernel_name); it != cache_.end()) return it->second;
  }
  // Matched outside the lock: two threads may classify the same new name
  // twice, which is harmless (same answer) and keeps the lock short.
  TensorCoreClass result;
  const auto searched_end =
      kernel_name.begin() + static_cast<std::ptrdiff_t>(std::min(kernel_name.size(), kMaxClassifiedNameChars));
  // A cut name has no end of line at the cut: `sm90$` must not match there.
  const auto flags = searched_end == kernel_name.end() ? std::regex_constants::match_default
                                                       : std::regex_constants::match_not_eol;
  for (const Rule& rule : rules_) {
    if (std::regex_search(kernel_name.begin(), searched_end, rule.regex, flags)) {
      result = {rule.tensor_core, rule.family};
      break;
    }
  }
  std::lock_guard lock(cache_mu_);
  if (cache_.size() >= kMaxCachedNames) cache_.clear();
  cache_.emplace(kernel_name, result);
  return result;
}

}  // namespace ampscope::profiler::cupti
