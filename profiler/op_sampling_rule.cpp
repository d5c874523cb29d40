#include "profiler/op_sampling_rule.h"

#include <algorithm>
#include <sstream>

namespace ampscope::profiler {
namespace {

std::string ordinal(int64_t n) {
  const int64_t tens = n % 100;
  const char* suffix = tens >= 11 && tens <= 13 ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
  return std::to_string(n) + suffix;
}

}  // namespace

OpSamplingRule::OpSamplingRule(int64_t window_start, int64_t window_steps, int64_t every_n_steps)
    : window_start_(window_start), window_steps_(window_steps), every_(std::max<int64_t>(every_n_steps, 1)) {}

bool OpSamplingRule::selects(int64_t step) const {
  if (step < window_start_) return false;
  if (window_steps_ > 0 && step >= window_start_ + window_steps_) return false;
  // The newest fall-back at or before this step decides; before any, the user's stride.
  for (auto it = fallbacks_.rbegin(); it != fallbacks_.rend(); ++it)
    if (step >= it->from_step) return step > it->from_step && (step - it->from_step) % it->every == 0;
  return (step - window_start_) % every_ == 0;
}

bool OpSamplingRule::fall_back(int64_t step, uint64_t backlog) {
  if (!selects(step)) return false;
  const int64_t every = (fallbacks_.empty() ? every_ : fallbacks_.back().every) * 2;
  fallbacks_.push_back({step, every, backlog});
  return true;
}

std::string OpSamplingRule::encode() const {
  std::string text;
  for (const Fallback& f : fallbacks_)
    text += (text.empty() ? "" : ";") + std::to_string(f.from_step) + ":" + std::to_string(f.every) + ":" +
            std::to_string(f.backlog);
  return text;
}

std::optional<std::vector<OpSamplingRule::Fallback>> OpSamplingRule::decode(const std::string& text) {
  std::vector<Fallback> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ';')) {
    Fallback f;
    char colon1 = 0, colon2 = 0;
    std::istringstream fields(item);
    if (!(fields >> f.from_step >> colon1 >> f.every >> colon2 >> f.backlog) || colon1 != ':' || colon2 != ':' ||
        !fields.eof() || f.every < 1 || f.from_step < 1)
      return std::nullopt;
    out.push_back(f);
  }
  return out;
}

std::string OpSamplingRule::describe(const std::vector<Fallback>& fallbacks) {
  if (fallbacks.empty()) return {};
  std::string line = "ops recorded";
  for (size_t i = 0; i < fallbacks.size(); ++i) {
    const Fallback& f = fallbacks[i];
    line += (i == 0 ? " every " : i + 1 == fallbacks.size() ? " and every " : ", every ") + ordinal(f.every) +
            (i == 0 ? " step" : "") + " from step " + std::to_string(f.from_step + f.every);
  }
  const Fallback& first = fallbacks.front();
  line += ": the capture fell behind the training (" + std::to_string(first.backlog) +
          " record batches waiting at step " + std::to_string(first.from_step) +
          "); steps, losses and loss scales are complete";
  return line;
}

}  // namespace ampscope::profiler
