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

OpSamplingRule::OpSamplingRule(int64_t window_start, int64_t window_steps, int64_t every_n_steps,
                               std::vector<Fallback> changes)
    : window_start_(window_start),
      window_steps_(window_steps),
      every_(std::max<int64_t>(every_n_steps, 1)),
      fallbacks_(std::move(changes)) {}

bool OpSamplingRule::selects(int64_t step) const {
  if (step < window_start_) return false;
  if (window_steps_ > 0 && step >= window_start_ + window_steps_) return false;
  // The newest change at or before this step decides; before any, the user's stride.
  for (size_t i = fallbacks_.size(); i-- > 0;) {
    const Fallback& f = fallbacks_[i];
    if (step < f.from_step) continue;
    const int64_t before = i == 0 ? every_ : fallbacks_[i - 1].every;
    const bool widened = f.every > before;  // a fall-back sheds its own step
    return (step > f.from_step || !widened) && (step - f.from_step) % f.every == 0;
  }
  return (step - window_start_) % every_ == 0;
}

namespace {

// How full the waiting records are, as a share of the nearer limit (1 = behind).
double fullness(uint64_t batches, uint64_t ops, const OpSamplingRule::Limits& limits) {
  double share = static_cast<double>(batches) / static_cast<double>(std::max<uint64_t>(limits.high_batches, 1));
  if (limits.high_ops > 0) share = std::max(share, static_cast<double>(ops) / static_cast<double>(limits.high_ops));
  return share;
}

}  // namespace

OpSamplingRule::Change OpSamplingRule::adjust(int64_t step, Backlog waiting, const Limits& limits) {
  if (!selects(step)) return Change::kNone;
  ++selected_since_change_;
  if (fallbacks_.size() >= kMaxChanges) return Change::kNone;
  const double now = fullness(waiting.batches, waiting.ops, limits);
  if (now >= 1.0) {
    // After a fall-back, widen again only when the wider stride has had time to show
    // and what waits has not shrunk.
    const Fallback* last = fallbacks_.empty() ? nullptr : &fallbacks_.back();
    const bool settled = !last || (selected_since_change_ > kSelectedStepsBeforeWideningAgain &&
                                   now >= fullness(last->backlog, last->ops_waiting, limits));
    if (!settled) return Change::kNone;
    fall_back(step, waiting);
    return Change::kWidened;
  }
  const bool drained = waiting.batches <= limits.low_batches && (limits.high_ops == 0 || waiting.ops <= limits.low_ops);
  if (drained && current_every() > every_ && selected_since_change_ > kSelectedStepsBeforeNarrowing) {
    fallbacks_.push_back({step, std::max(every_, current_every() / 2), waiting.batches, waiting.ops});
    selected_since_change_ = 0;
    return Change::kNarrowed;
  }
  return Change::kNone;
}

bool OpSamplingRule::fall_back(int64_t step, Backlog waiting) {
  if (!selects(step)) return false;
  fallbacks_.push_back({step, current_every() * 2, waiting.batches, waiting.ops});
  selected_since_change_ = 0;
  return true;
}

std::string OpSamplingRule::encode() const {
  std::string text;
  for (const Fallback& f : fallbacks_)
    text += (text.empty() ? "" : ";") + std::to_string(f.from_step) + ":" + std::to_string(f.every) + ":" +
            std::to_string(f.backlog) + ":" + std::to_string(f.ops_waiting);
  return text;
}

std::optional<std::vector<OpSamplingRule::Fallback>> OpSamplingRule::decode(const std::string& text) {
  std::vector<Fallback> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ';')) {
    Fallback f;
    char colon1 = 0, colon2 = 0, colon3 = 0;
    std::istringstream fields(item);
    if (!(fields >> f.from_step >> colon1 >> f.every >> colon2 >> f.backlog) || colon1 != ':' || colon2 != ':' ||
        f.every < 1 || f.from_step < 1)
      return std::nullopt;
    // The op count came later: "step:every:batches" is an older session's.
    if (!fields.eof() && (!(fields >> colon3 >> f.ops_waiting) || colon3 != ':')) return std::nullopt;
    if (!fields.eof()) return std::nullopt;
    out.push_back(f);
  }
  return out;
}

std::string OpSamplingRule::describe(const std::vector<Fallback>& fallbacks) {
  if (fallbacks.empty()) return {};
  std::string line = "ops recorded";
  bool caught_up = false;
  for (size_t i = 0; i < fallbacks.size(); ++i) {
    const Fallback& f = fallbacks[i];
    const bool widened = i == 0 || f.every > fallbacks[i - 1].every;
    caught_up = caught_up || !widened;
    const std::string every = f.every == 1 ? "every step" : "every " + ordinal(f.every) + (i == 0 ? " step" : "");
    line += (i == 0 ? " " : i + 1 == fallbacks.size() ? " and " : ", ") + every + " from step " +
            std::to_string(widened ? f.from_step + f.every : f.from_step);
  }
  const Fallback& first = fallbacks.front();
  const std::string waiting = first.ops_waiting > 0 ? std::to_string(first.ops_waiting) + " op records in " +
                                                           std::to_string(first.backlog) + " batches"
                                                     : std::to_string(first.backlog) + " record batches";
  line += ": the capture fell behind the training (" + waiting + " waiting at step " +
          std::to_string(first.from_step) + ")" +
          (caught_up ? " and caught up as its queue drained" : "") +
          "; steps, losses and loss scales are complete";
  return line;
}

}  // namespace ampscope::profiler
