// The only file that sees CUPTI and CUDA runtime types: decoding CUPTI's
// activity structs into the RecordProcessor's plain values lives here.
#include "profiler/cupti/cupti_activity_source.h"

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <time.h>

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/thread_priority.h"

namespace ampscope::profiler::cupti {
namespace {

// CUPTI's buffer callbacks carry no user pointer, so they find the started
// source here. Set before CUPTI can call back, cleared after cuptiFinalize.
std::atomic<CuptiActivitySource*> g_active{nullptr};

// Op threads' external-id nesting. One entry per push_external_id, whether or
// not it reached CUPTI (1 = CUPTI has it), so pops pair with pushes even when
// tracing starts or stops mid-op or a push failed. `generation` (bumped per
// successful start, process-wide) makes a stack left from an earlier session
// harmless: it is cleared at the next push and never popped into CUPTI.
struct ThreadIds {
  uint64_t generation = 0;
  std::vector<uint8_t> pushed;
};
thread_local ThreadIds t_ids;
std::atomic<uint64_t> g_generation{0};

// Op threads inside a CUPTI push/pop. stop() clears tracing_ and then waits
// for zero before cuptiFinalize, so no push/pop re-initializes CUPTI after it.
// (seq_cst on both sides: a store-then-load handshake, which acq/rel does not order.)
std::atomic<int64_t> g_inflight{0};

constexpr CUpti_ExternalCorrelationKind kExternalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
constexpr size_t kRecordAlignment = 8;  // CUPTI's ACTIVITY_RECORD_ALIGNMENT

// GPU and CPU timestamps on one clock: CLOCK_MONOTONIC ns, as records.h says.
uint64_t CUPTIAPI monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;  // as many as fit
  CuptiActivitySource* self = g_active.load(std::memory_order_acquire);
  if (self == nullptr) {
    *buffer = nullptr;
    *size = 0;
    return;
  }
  *buffer = self->request_buffer(size);
}

void CUPTIAPI on_buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CuptiActivitySource* self = g_active.load(std::memory_order_acquire);
  // With no source of ours active the buffer may be another client's: never free it.
  // (Ours are all returned before g_active is cleared: stop() flushes and drains first.)
  if (self == nullptr) return;
  self->buffer_completed(buffer, valid);
}

// The subscriber exists to claim CUPTI (and to learn who holds it otherwise);
// no callback domain is enabled on it.
void CUPTIAPI on_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// The API calls whose records carry the correlation id of GPU activity: launches,
// copies and sets. Every other runtime/driver call (cudaGetDevice, cuCtxGetCurrent,
// event and stream queries, ...) is switched off: on an H100 GPT run they were
// 9 of every 10 API records.
bool names_gpu_activity(const char* name) {
  if (name == nullptr) return false;
  const std::string_view n(name);
  if (n.find("HostFunc") != std::string_view::npos) return false;  // runs on the CPU
  for (std::string_view prefix : {"cudaLaunch", "__cudaLaunch", "cudaMemcpy", "cudaMemset",
                                  "cudaGraphLaunch", "cuLaunch", "cuMemcpy", "cuMemset",
                                  "cuGraphLaunch"}) {
    if (n.starts_with(prefix)) return true;
  }
  return false;
}

// Enables `kind` (all calls of its domain), then switches off every call that
// launches no GPU work. Order matters: enabling the kind resets per-call settings,
// and per-call enabling alone produces no DRIVER records on CUPTI 13.0 (measured).
CUptiResult enable_launch_apis(CUpti_ActivityKind kind, CUpti_CallbackDomain domain,
                               CUpti_CallbackId size,
                               CUptiResult (*enable_api)(CUpti_CallbackId, uint8_t)) {
  const CUptiResult r = cuptiActivityEnable(kind);
  if (r != CUPTI_SUCCESS) return r;
  for (CUpti_CallbackId cbid = 1; cbid < size; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS) continue;  // a gap in the ids
    if (!names_gpu_activity(name)) (void)enable_api(cbid, 0);
  }
  return CUPTI_SUCCESS;
}

std::string result_string(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || s == nullptr)
    return "CUPTI error " + std::to_string(r);
  return s;
}

std::string message_for(const char* call, CUptiResult r, const std::string& other_client = "") {
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    return "GPU tracing off: CUPTI is in use by " +
           (other_client.empty() ? std::string("another profiler (Nsight Systems/Compute or torch.profiler)")
                                 : "another client (" + other_client + ")") +
           "; timing ops on the CPU only";
  }
  return std::string("GPU tracing off: ") + call + " failed (" + result_string(r) +
         "); timing ops on the CPU only";
}

int32_t to_i32(uint64_t v) { return static_cast<int32_t>(v); }

}  // namespace

CuptiActivitySource::CuptiActivitySource(std::shared_ptr<const TensorCoreRules> rules)
    : CuptiActivitySource(std::move(rules), Options{}) {}

CuptiActivitySource::CuptiActivitySource(std::shared_ptr<const TensorCoreRules> rules,
                                         Options options)
    : rules_(std::move(rules)), options_(options) {
  // aligned_alloc wants a size that is a multiple of the alignment.
  options_.buffer_bytes = (options_.buffer_bytes + kRecordAlignment - 1) & ~(kRecordAlignment - 1);
  if (options_.buffer_bytes == 0) options_.buffer_bytes = 1 << 20;
}

CuptiActivitySource::~CuptiActivitySource() {
  stop();
  std::lock_guard lock(pool_mu_);
  for (uint8_t* b : free_buffers_) std::free(b);
  free_buffers_.clear();
}

SourceStatus CuptiActivitySource::fail(std::string message) {
  status_ = {false, std::move(message)};
  return status_;
}

SourceStatus CuptiActivitySource::start(ActivitySink& sink) {
  std::lock_guard control(control_mu_);
  if (started_) return status_;
  try {
    CuptiActivitySource* expected = nullptr;
    if (!g_active.compare_exchange_strong(expected, this)) {
      return fail(
          "GPU tracing off: another ampscope GPU tracer is already running in this process");
    }
    int devices = 0;
    const cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices == 0) {
      (void)cudaGetLastError();  // leave no sticky error for LibTorch to trip on
      g_active.store(nullptr);
      return fail(std::string("GPU tracing off: no usable CUDA GPU or driver (") +
                  (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") +
                  "); timing ops on the CPU only");
    }

    // Claim CUPTI first: a second client (Nsight, torch.profiler/kineto) is named
    // and left alone; we register no callbacks and touch none of its buffers.
    {
      CUpti_SubscriberHandle handle = nullptr;
      char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
      CUpti_SubscriberParams params{};
      params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
      params.subscriberName = "ampscope";
      params.oldSubscriberName = other;
      params.oldSubscriberSize = sizeof other - 1;
      const CUptiResult r = cuptiSubscribe_v2(&handle, on_callback, nullptr, &params);
      if (r != CUPTI_SUCCESS) {
        g_active.store(nullptr);
        return fail(message_for("cuptiSubscribe", r, other));
      }
      subscriber_ = handle;
    }
    // Our clock for GPU timestamps. Without it CUPTI's own clock is aligned to ours
    // once, here: tracing degrades (drift over a long run), it does not stop.
    timestamp_offset_ns_ = 0;
    if (cuptiActivityRegisterTimestampCallback(monotonic_ns) != CUPTI_SUCCESS) {
      uint64_t cupti_now = 0;
      if (cuptiGetTimestamp(&cupti_now) == CUPTI_SUCCESS)
        timestamp_offset_ns_ = static_cast<int64_t>(monotonic_ns()) - static_cast<int64_t>(cupti_now);
    }

    {
      std::lock_guard processor(processor_mu_);
      processor_ = std::make_unique<RecordProcessor>(sink, rules_, options_.processor);
    }
    {
      std::lock_guard queue(queue_mu_);
      quit_ = false;
      busy_ = false;
    }
    worker_ = std::thread([this] { process_loop(); });
    name_thread(worker_, "amp-cupti");

    CUptiResult r = cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed);
    const char* call = "cuptiActivityRegisterCallbacks";
    if (r == CUPTI_SUCCESS) r = static_cast<CUptiResult>(enable_kinds(&call));

    if (r != CUPTI_SUCCESS) {
      const std::string message = message_for(call, r);
      disable_all();
      {
        std::lock_guard queue(queue_mu_);
        quit_ = true;
      }
      queue_cv_.notify_all();
      worker_.join();
      g_active.store(nullptr);
      return fail(message);
    }
    paused_ = false;
    g_generation.fetch_add(1);
    tracing_.store(true);
    started_ = true;
    status_ = {true, ""};
    return status_;
  } catch (const std::exception& ex) {
    // Allocation or thread creation failure: tracing is optional, never fatal.
    if (worker_.joinable()) {
      {
        std::lock_guard queue(queue_mu_);
        quit_ = true;
      }
      queue_cv_.notify_all();
      worker_.join();
    }
    if (subscriber_ != nullptr) {
      (void)cuptiUnsubscribe(static_cast<CUpti_SubscriberHandle>(subscriber_));
      subscriber_ = nullptr;
    }
    if (g_active.load() == this) g_active.store(nullptr);
    return fail(std::string("GPU tracing off: ") + ex.what() + "; timing ops on the CPU only");
  }
}

int CuptiActivitySource::enable_kinds(const char** call) {
  // Required kinds first: without them there is nothing to join. The API kinds
  // carry the launches' correlation ids: RUNTIME for cudaLaunchKernel, DRIVER for
  // kernels launched through cuLaunchKernel(Ex) (cuBLASLt's nvjet GEMMs, cuDNN's
  // fused attention, Triton), each narrowed to launch/copy/set calls.
  CUptiResult r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  *call = "cuptiActivityEnable(EXTERNAL_CORRELATION)";
  if (r == CUPTI_SUCCESS) {
    enabled_kinds_.push_back(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    *call = "cuptiActivityEnable(CONCURRENT_KERNEL)";
  }
  if (r == CUPTI_SUCCESS) {
    enabled_kinds_.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    r = enable_launch_apis(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_CB_DOMAIN_RUNTIME_API,
                           CUPTI_RUNTIME_TRACE_CBID_SIZE, cuptiActivityEnableRuntimeApi);
    *call = "cuptiActivityEnable(RUNTIME)";
  }
  if (r == CUPTI_SUCCESS) {
    enabled_kinds_.push_back(CUPTI_ACTIVITY_KIND_RUNTIME);
    r = enable_launch_apis(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_CB_DOMAIN_DRIVER_API,
                           CUPTI_DRIVER_TRACE_CBID_SIZE, cuptiActivityEnableDriverApi);
    *call = "cuptiActivityEnable(DRIVER)";
  }
  if (r != CUPTI_SUCCESS) return r;
  enabled_kinds_.push_back(CUPTI_ACTIVITY_KIND_DRIVER);
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_OVERHEAD}) {
    const CUptiResult o = cuptiActivityEnable(kind);
    if (o == CUPTI_SUCCESS) enabled_kinds_.push_back(kind);
  }
  return CUPTI_SUCCESS;
}

void CuptiActivitySource::disable_kinds() {
  for (int kind : enabled_kinds_) (void)cuptiActivityDisable(static_cast<CUpti_ActivityKind>(kind));
  enabled_kinds_.clear();
}

void CuptiActivitySource::pause() {
  std::lock_guard control(control_mu_);
  if (!started_ || paused_) return;
  disable_kinds();
  paused_ = true;
}

void CuptiActivitySource::resume() {
  std::lock_guard control(control_mu_);
  if (!started_ || !paused_) return;
  const char* call = nullptr;
  if (enable_kinds(&call) != CUPTI_SUCCESS) {
    // Tracing stays off for the rest of the run; what was traced is kept.
    disable_kinds();
    status_.message = std::string("GPU tracing stopped: ") + call + " failed when resuming";
    return;
  }
  paused_ = false;
}

void CuptiActivitySource::disable_all() {
  const bool was_enabled = !enabled_kinds_.empty() || paused_;
  disable_kinds();
  if (was_enabled) {
    // cuptiFinalize wants every record complete and flushed (cupti_activity.h):
    // wait for the device, then force out partly filled buffers.
    (void)cudaDeviceSynchronize();
    (void)cudaGetLastError();
    (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    wait_until_drained();
    size_t dropped = 0;  // the processing thread counted per buffer; this is the rest
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0) {
      std::lock_guard processor(processor_mu_);
      processor_->add_dropped_by_cupti(static_cast<int64_t>(dropped));
    }
  }
  if (subscriber_ != nullptr) {
    (void)cuptiUnsubscribe(static_cast<CUpti_SubscriberHandle>(subscriber_));
    subscriber_ = nullptr;
    // Release CUPTI so the rest of the run is not slowed by its instrumentation.
    (void)cuptiFinalize();
  }
  paused_ = false;
}

void CuptiActivitySource::flush() {
  std::lock_guard control(control_mu_);
  if (!started_) return;
  // Default flush: buffers whose records are all complete. The caller
  // synchronizes the device first when it wants everything launched so far.
  (void)cuptiActivityFlushAll(0);
  wait_until_drained();
  std::lock_guard processor(processor_mu_);
  processor_->drain();
}

void CuptiActivitySource::request_flush() {
  std::lock_guard control(control_mu_);
  if (!started_) return;
  // buffer_completed only queues: the processing thread joins and delivers them. (A
  // waiting flush held the training thread for up to ten steps' records, and at a
  // sampled step for the sample's own thousands of kernels and launches.)
  (void)cuptiActivityFlushAll(0);
}

void CuptiActivitySource::stop() {
  std::lock_guard control(control_mu_);
  if (!started_) return;
  tracing_.store(false);
  while (g_inflight.load() != 0) std::this_thread::yield();

  disable_all();  // forced flush, drain, cuptiFinalize
  {
    std::lock_guard processor(processor_mu_);
    processor_->flush();  // final: what still waits for a mapping never gets one
  }
  {
    std::lock_guard queue(queue_mu_);
    quit_ = true;
  }
  queue_cv_.notify_all();
  worker_.join();
  g_active.store(nullptr, std::memory_order_release);
  started_ = false;

  const ActivityStats s = processor_stats();
  if (s.dropped_by_cupti > 0) {
    status_.message = "GPU tracing: CUPTI dropped " + std::to_string(s.dropped_by_cupti) +
                      " activity records (buffers full); kernel times are incomplete";
  }
}

ActivityStats CuptiActivitySource::processor_stats() const {
  std::lock_guard processor(processor_mu_);
  return processor_ ? processor_->stats() : ActivityStats{};
}

SourceStatus CuptiActivitySource::status() const {
  std::lock_guard control(control_mu_);
  return status_;
}

ActivityStats CuptiActivitySource::stats() const { return processor_stats(); }

void CuptiActivitySource::push_external_id(uint64_t op_id) {
  g_inflight.fetch_add(1);
  const bool tracing = tracing_.load();
  // Read after tracing_: start() bumps the generation before it sets tracing_.
  const uint64_t gen = g_generation.load();
  if (t_ids.generation != gen) {
    t_ids.generation = gen;
    t_ids.pushed.clear();
  }
  const uint8_t reached =
      tracing && cuptiActivityPushExternalCorrelationId(kExternalKind, op_id) == CUPTI_SUCCESS;
  g_inflight.fetch_sub(1);
  t_ids.pushed.push_back(reached);
}

void CuptiActivitySource::pop_external_id() {
  if (t_ids.pushed.empty()) return;
  const bool reached = t_ids.pushed.back() != 0;
  t_ids.pushed.pop_back();
  if (!reached || t_ids.generation != g_generation.load()) return;
  g_inflight.fetch_add(1);
  if (tracing_.load()) {
    uint64_t last = 0;
    (void)cuptiActivityPopExternalCorrelationId(kExternalKind, &last);
  }
  g_inflight.fetch_sub(1);
}

uint8_t* CuptiActivitySource::request_buffer(size_t* size) {
  std::lock_guard pool(pool_mu_);
  uint8_t* b = nullptr;
  if (!free_buffers_.empty()) {
    b = free_buffers_.back();
    free_buffers_.pop_back();
  } else if (allocated_buffers_ < options_.max_buffers) {
    b = static_cast<uint8_t*>(std::aligned_alloc(kRecordAlignment, options_.buffer_bytes));
    if (b != nullptr) ++allocated_buffers_;
  }
  if (b == nullptr) {
    // CUPTI drops records until a buffer frees up; cuptiActivityGetNumDroppedRecords counts them.
    refused_buffers_.fetch_add(1, std::memory_order_relaxed);
    *size = 0;
    return nullptr;
  }
  *size = options_.buffer_bytes;
  return b;
}

void CuptiActivitySource::buffer_completed(uint8_t* buffer, size_t valid_bytes) {
  if (buffer == nullptr) return;
  {
    std::lock_guard queue(queue_mu_);
    queue_.push_back({buffer, valid_bytes});
  }
  queue_cv_.notify_one();
}

void CuptiActivitySource::release_buffer(uint8_t* buffer) {
  std::lock_guard pool(pool_mu_);
  free_buffers_.push_back(buffer);
}

void CuptiActivitySource::wait_until_drained() {
  std::unique_lock queue(queue_mu_);
  drained_cv_.wait(queue, [this] { return queue_.empty() && !busy_; });
}

void CuptiActivitySource::process_loop() {
  std::unique_lock queue(queue_mu_);
  for (;;) {
    queue_cv_.wait(queue, [this] { return quit_ || !queue_.empty(); });
    if (queue_.empty()) break;  // quit_ and nothing left
    const Filled filled = queue_.front();
    queue_.pop_front();
    busy_ = true;
    queue.unlock();
    {
      std::lock_guard processor(processor_mu_);
      process_buffer(filled);
      processor_->drain();
    }
    release_buffer(filled.buffer);
    queue.lock();
    busy_ = false;
    if (queue_.empty()) drained_cv_.notify_all();
  }
}

void CuptiActivitySource::process_buffer(const Filled& filled) {
  RecordProcessor& p = *processor_;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(filled.buffer, filled.valid_bytes, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        // CUpti_ActivityKernel10 is CUDA 13's layout; the fields read here sit
        // in the prefix that every version since Kernel4 shares.
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        DeviceActivity a;
        a.kind = ActivityKind::kKernel;
        a.correlation_id = k->correlationId;
        a.name = k->name != nullptr ? k->name : "<unnamed kernel>";
        a.device = to_i32(k->deviceId);
        a.stream = to_i32(k->streamId);
        a.start_ns = static_cast<int64_t>(k->start) + timestamp_offset_ns_;
        a.end_ns = static_cast<int64_t>(k->end) + timestamp_offset_ns_;
        a.grid = {k->gridX, k->gridY, k->gridZ};
        a.block = {k->blockX, k->blockY, k->blockZ};
        a.registers_per_thread = k->registersPerThread;
        a.shared_memory_bytes = k->staticSharedMemory + k->dynamicSharedMemory;
        p.add(std::move(a));
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        DeviceActivity a;
        a.kind = ActivityKind::kMemcpy;
        a.correlation_id = m->correlationId;
        a.name = memcpy_name(m->copyKind);
        a.device = to_i32(m->deviceId);
        a.stream = to_i32(m->streamId);
        a.start_ns = static_cast<int64_t>(m->start) + timestamp_offset_ns_;
        a.end_ns = static_cast<int64_t>(m->end) + timestamp_offset_ns_;
        a.bytes = static_cast<int64_t>(m->bytes);
        p.add(std::move(a));
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        DeviceActivity a;
        a.kind = ActivityKind::kMemset;
        a.correlation_id = m->correlationId;
        a.name = "Memset";
        a.device = to_i32(m->deviceId);
        a.stream = to_i32(m->streamId);
        a.start_ns = static_cast<int64_t>(m->start) + timestamp_offset_ns_;
        a.end_ns = static_cast<int64_t>(m->end) + timestamp_offset_ns_;
        a.bytes = static_cast<int64_t>(m->bytes);
        p.add(std::move(a));
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: {
        const auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(record);
        p.add(ApiActivity{api->correlationId, api->cbid, api->threadId,
                          record->kind == CUPTI_ACTIVITY_KIND_DRIVER,
                          static_cast<int64_t>(api->start) + timestamp_offset_ns_,
                          static_cast<int64_t>(api->end) + timestamp_offset_ns_});
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto* c = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        if (c->externalKind == kExternalKind)
          p.add(ExternalCorrelation{c->externalId, c->correlationId});
        break;
      }
      case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        const auto* o = reinterpret_cast<const CUpti_ActivityOverhead3*>(record);
        if (o->end > o->start) p.add_overhead_ns(static_cast<int64_t>(o->end - o->start));
        break;
      }
      default:
        break;
    }
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    p.add_dropped_by_cupti(static_cast<int64_t>(dropped));
  }
}

}  // namespace ampscope::profiler::cupti
