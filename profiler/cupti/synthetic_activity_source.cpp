#include "profiler/cupti/synthetic_activity_source.h"

#include <algorithm>
#include <random>

namespace ampscope::profiler::cupti {

SyntheticActivitySource::SyntheticActivitySource(std::shared_ptr<const TensorCoreRules> rules,
                                                 RecordProcessor::Options options)
    : rules_(std::move(rules)), options_(options) {}

void SyntheticActivitySource::shuffle_with_seed(uint64_t seed) {
  std::lock_guard lock(mu_);
  seed_ = seed;
}

SourceStatus SyntheticActivitySource::start(ActivitySink& sink) {
  std::lock_guard lock(mu_);
  processor_ = std::make_unique<RecordProcessor>(sink, rules_, options_);
  queued_.clear();
  return {true, ""};
}

void SyntheticActivitySource::launch_on_every_push(bool on) {
  std::lock_guard lock(mu_);
  launch_on_push_ = on;
}

void SyntheticActivitySource::deliver_every(size_t records) {
  std::lock_guard lock(mu_);
  deliver_every_ = records;
}

int64_t SyntheticActivitySource::kernels_launched() const {
  std::lock_guard lock(mu_);
  return kernels_launched_;
}

int64_t SyntheticActivitySource::launches_while_paused() const {
  std::lock_guard lock(mu_);
  return launches_while_paused_;
}

void SyntheticActivitySource::pause() {
  std::lock_guard lock(mu_);
  tracing_ = false;
}

void SyntheticActivitySource::resume() {
  std::lock_guard lock(mu_);
  tracing_ = true;
}

void SyntheticActivitySource::push_external_id(uint64_t op_id) {
  std::lock_guard lock(mu_);
  stacks_[std::this_thread::get_id()].push_back(op_id);
  if (!launch_on_push_) return;
  DeviceActivity a;
  a.kind = ActivityKind::kKernel;
  a.name = "synthetic_kernel";
  a.start_ns = clock_ns_;
  a.end_ns = clock_ns_ + 1000;
  clock_ns_ += 2000;
  a.stream = 7;
  launch_locked(std::move(a));
}

void SyntheticActivitySource::pop_external_id() {
  std::lock_guard lock(mu_);
  auto& stack = stacks_[std::this_thread::get_id()];
  if (!stack.empty()) stack.pop_back();
}

uint32_t SyntheticActivitySource::launch_locked(DeviceActivity activity) {
  const uint32_t correlation = next_correlation_++;
  if (!tracing_) {  // CUPTI's kinds are disabled: the work runs, nothing is recorded
    ++launches_while_paused_;
    return correlation;
  }
  if (activity.kind == ActivityKind::kKernel) ++kernels_launched_;
  const auto tid = std::this_thread::get_id();
  const auto& stack = stacks_[tid];
  // Like CUPTI: the innermost pushed id names the launch; none pushed, no record.
  if (!stack.empty()) queued_.emplace_back(ExternalCorrelation{stack.back(), correlation});
  const uint32_t thread_no =
      thread_numbers_.emplace(tid, static_cast<uint32_t>(thread_numbers_.size() + 1)).first->second;
  queued_.emplace_back(ApiActivity{correlation, 211 /* cudaLaunchKernel_v7000 */, thread_no, false,
                                   activity.start_ns - 1000, activity.start_ns - 500});
  activity.correlation_id = correlation;
  queued_.emplace_back(std::move(activity));
  if (deliver_every_ > 0 && queued_.size() >= deliver_every_ && processor_) {
    deliver_locked();
    processor_->drain();
  }
  return correlation;
}

uint32_t SyntheticActivitySource::launch_kernel(std::string name, int64_t start_ns, int64_t end_ns,
                                                int32_t stream) {
  DeviceActivity a;
  a.kind = ActivityKind::kKernel;
  a.name = std::move(name);
  a.start_ns = start_ns;
  a.end_ns = end_ns;
  a.stream = stream;
  a.grid = {128, 1, 1};
  a.block = {256, 1, 1};
  a.registers_per_thread = 64;
  std::lock_guard lock(mu_);
  return launch_locked(std::move(a));
}

uint32_t SyntheticActivitySource::launch_memcpy(uint32_t cupti_copy_kind, int64_t bytes,
                                                int64_t start_ns, int64_t end_ns) {
  DeviceActivity a;
  a.kind = ActivityKind::kMemcpy;
  a.name = memcpy_name(cupti_copy_kind);
  a.bytes = bytes;
  a.start_ns = start_ns;
  a.end_ns = end_ns;
  std::lock_guard lock(mu_);
  return launch_locked(std::move(a));
}

void SyntheticActivitySource::deliver_locked() {
  if (!processor_) return;
  if (seed_) {
    std::mt19937_64 rng(*seed_);
    std::shuffle(queued_.begin(), queued_.end(), rng);
  }
  std::vector<Record> records;
  records.swap(queued_);
  for (Record& r : records) {
    std::visit([this](auto& rec) { processor_->add(std::move(rec)); }, r);
  }
}

void SyntheticActivitySource::flush() {
  std::lock_guard lock(mu_);
  deliver_locked();
  if (processor_) processor_->drain();
}

void SyntheticActivitySource::stop() {
  std::lock_guard lock(mu_);
  deliver_locked();
  if (processor_) processor_->flush();
}

SourceStatus SyntheticActivitySource::status() const {
  std::lock_guard lock(mu_);
  return {processor_ != nullptr, processor_ ? "" : "synthetic source not started"};
}

ActivityStats SyntheticActivitySource::stats() const {
  std::lock_guard lock(mu_);
  return processor_ ? processor_->stats() : ActivityStats{};
}

}  // namespace ampscope::profiler::cupti
