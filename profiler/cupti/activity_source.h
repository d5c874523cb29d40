#pragma once
// The seam between the op observer and GPU activity tracing. The observer
// brackets every recorded op with push_external_id(op.id) / pop_external_id()
// on the thread that runs it; an ActivitySource turns the GPU work launched in
// between into KernelRecords carrying that op id and hands them, in batches, to
// an ActivitySink. CuptiActivitySource is the real one (built only with CUPTI);
// SyntheticActivitySource feeds hand-made launches for tests; NullActivitySource
// stands in when there is no GPU tracing at all.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler::cupti {

// The op id the profiler brackets its own device work with (range statistics,
// profiler/capture/own_work.h): kernels that come back with it are the
// profiler's, never the user's, and never "launched outside any op".
inline constexpr uint64_t kProfilerOwnWork = ~uint64_t{0};

// Receives finished records. Called from the source's processing thread (or
// from the thread that calls flush()/stop()), never concurrently with itself.
// It must not call back into the source that feeds it (see the lock order in
// cupti_activity_source.h).
class ActivitySink {
 public:
  virtual ~ActivitySink() = default;
  virtual void on_kernels(std::vector<KernelRecord>&& batch) = 0;
};

struct SourceStatus {
  bool available = false;
  std::string message;  // one line, for the user when !available; "" when tracing works
};

// Counters for the session so far. Everything here is also in the docs
// (docs/cupti.md): what "unmapped" and "dropped" mean.
struct ActivityStats {
  int64_t kernels = 0;           // kernel records emitted
  int64_t memory_ops = 0;        // memcpy + memset records emitted
  int64_t api_records = 0;       // runtime/driver API records seen
  int64_t correlations = 0;      // external-correlation records seen
  int64_t unmapped = 0;          // emitted with op_id 0 (launched outside any op, or mapping lost)
  int64_t evicted_pending = 0;   // of those, pushed out early because too many were waiting
  int64_t dropped_by_cupti = 0;  // records CUPTI itself dropped (no buffer space)
  int64_t overhead_ns = 0;       // CUPTI's own overhead records (buffer flushes, ...)
};

class ActivitySource {
 public:
  virtual ~ActivitySource() = default;

  // Starts tracing into `sink` (which must outlive stop()). Never throws:
  // failure comes back as {available = false, message}, and the source then
  // stays inert (push/pop/flush/stop are no-ops).
  virtual SourceStatus start(ActivitySink& sink) = 0;
  // Delivers what the GPU has finished so far (synchronize the device first to
  // include everything launched); blocks until the sink has it. Records still
  // waiting for their op mapping keep waiting (their mapping may be in a
  // buffer CUPTI has not released yet).
  virtual void flush() = 0;
  // The same without waiting for the sink: what the tracer holds goes to its own
  // processing, which delivers it in its own time. For the profiler's periodic flush
  // (the live view), so the training thread never waits while records are processed.
  virtual void request_flush() { flush(); }
  // Delivers everything (records still without a mapping get op_id 0), then
  // stops tracing and releases the tracer so the rest of the run is not
  // slowed. Call it when no op is in flight. Idempotent.
  virtual void stop() = 0;

  // Tracing only where it is asked for: the profiler resumes at the first sampled
  // step of a run of sampled steps and pauses after the last one (the device idle:
  // the step ended with a sync), so unsampled steps produce no records and pay
  // nothing. A started source is tracing until the first pause(). Records of work
  // done before a pause are still delivered by the next flush()/stop().
  virtual void pause() {}
  virtual void resume() {}

  // Per-thread op bracketing, called at op enter/exit on whichever thread runs
  // the op (training thread, autograd workers). Must be cheap and must nest.
  virtual void push_external_id(uint64_t op_id) = 0;
  virtual void pop_external_id() = 0;

  virtual SourceStatus status() const = 0;
  virtual ActivityStats stats() const = 0;
};

// A source that traces nothing, with a fixed reason.
class NullActivitySource final : public ActivitySource {
 public:
  explicit NullActivitySource(std::string reason) : reason_(std::move(reason)) {}
  SourceStatus start(ActivitySink&) override { return status(); }
  void flush() override {}
  void stop() override {}
  void push_external_id(uint64_t) override {}
  void pop_external_id() override {}
  SourceStatus status() const override { return {false, reason_}; }
  ActivityStats stats() const override { return {}; }

 private:
  std::string reason_;
};

// The best source this build has: CuptiActivitySource when built with CUPTI,
// else a NullActivitySource saying so. `rules_path` is the Tensor Core rule
// table ("" = the default, TensorCoreRules::default_path()).
std::unique_ptr<ActivitySource> make_activity_source(const std::string& rules_path = "");

// True when this build has the CUPTI-backed source.
bool built_with_cupti();

}  // namespace ampscope::profiler::cupti
