#include "profiler/export/chrome_trace.h"

#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "profiler/export/export_util.h"
#include "profiler/store/session_schema.h"

namespace ampscope::profiler {
namespace {

using Json = nlohmann::ordered_json;

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

// An event and where it sorts: by time, then complete events before the flow
// points that bind to them, then longer (enclosing) spans first.
struct Event {
  int64_t ts_ns;
  int rank;
  int64_t dur_ns;
  Json json;
};

Json complete(std::string_view cat, std::string_view name, int64_t pid, int64_t tid,
              int64_t start_ns, int64_t end_ns) {
  Json e;
  e["ph"] = "X";
  e["cat"] = cat;
  e["name"] = name;
  e["pid"] = pid;
  e["tid"] = tid;
  e["ts"] = us(start_ns);
  e["dur"] = us(std::max<int64_t>(0, end_ns - start_ns));
  return e;
}

Json flow(char ph, std::string_view cat, uint64_t id, int64_t pid, int64_t tid, int64_t ts_ns) {
  Json e;
  e["ph"] = std::string(1, ph);
  e["id"] = id;
  e["pid"] = pid;
  e["tid"] = tid;
  e["ts"] = us(ts_ns);
  e["cat"] = cat;
  e["name"] = cat;
  if (ph == 'f') e["bp"] = "e";  // bind to the enclosing slice, as Kineto does
  return e;
}

Json metadata(std::string_view name, int64_t pid, int64_t tid, int64_t ts_ns, std::string_view key,
              Json value) {
  Json e;
  e["name"] = name;
  e["ph"] = "M";
  e["ts"] = us(ts_ns);
  e["pid"] = pid;
  e["tid"] = tid;
  e["args"][std::string(key)] = std::move(value);
  return e;
}

Json dtype_list(const std::vector<DtypeName>& dtypes) {
  Json out = Json::array();
  for (const auto& d : dtypes) out.push_back(pytorch_dtype_name(d));
  return out;
}

Json op_event(const OpRecord& op, int64_t pid,
              const std::unordered_map<uint64_t, const OpRecord*>& by_id) {
  Json e =
      complete("cpu_op", op.name, pid, static_cast<int64_t>(op.thread_id), op.start_ns, op.end_ns);
  Json& a = e["args"];
  a["External id"] = op.id;
  if (op.sequence_nr >= 0) {
    a["Sequence number"] = op.sequence_nr;
    uint64_t fwd_thread = 0;
    if (auto it = by_id.find(op.forward_op_id); op.forward_op_id && it != by_id.end())
      fwd_thread = it->second->thread_id;
    a["Fwd thread id"] = fwd_thread;
  }
  a["Record function id"] = 0;
  // PyTorch pairs each input with a shape ([] for a non-tensor argument).
  Json dims = Json::array();
  const size_t n = std::max(op.input_dtypes.size(), op.input_shapes.size());
  for (size_t i = 0; i < n; ++i)
    dims.push_back(i < op.input_shapes.size() ? Json(op.input_shapes[i]) : Json::array());
  a["Input Dims"] = std::move(dims);
  a["Input type"] = dtype_list(op.input_dtypes);
  a["Output type"] = dtype_list(op.output_dtypes);
  a["Module"] = op.module;
  a["Autocast"] = to_string(op.category);
  a["Phase"] = to_string(op.phase);
  if (op.cast_bytes > 0) a["Cast bytes"] = op.cast_bytes;
  return e;
}

Json kernel_event(const KernelRecord& k) {
  static constexpr std::array<std::string_view, 3> kCats{"kernel", "gpu_memcpy", "gpu_memset"};
  Json e = complete(kCats[static_cast<size_t>(k.kind)], k.name, k.device, k.stream, k.start_ns,
                    k.end_ns);
  Json& a = e["args"];
  a["External id"] = k.op_id;
  a["device"] = k.device;
  a["stream"] = k.stream;
  a["correlation"] = k.correlation_id;
  if (k.kind == ActivityKind::kKernel) {
    a["registers per thread"] = k.registers_per_thread;
    a["shared memory"] = k.shared_memory_bytes;
    a["grid"] = k.grid;
    a["block"] = k.block;
    a["Tensor Cores"] = k.tensor_core_by_name;
    a["Tensor Cores source"] = "kernel name";
  } else {
    a["bytes"] = k.bytes;
    const int64_t dur = k.end_ns - k.start_ns;
    // bytes per ns is GB/s.
    a["memory bandwidth (GB/s)"] =
        dur > 0 ? static_cast<double>(k.bytes) / static_cast<double>(dur) : 0.0;
  }
  return e;
}

}  // namespace

std::string_view pytorch_dtype_name(std::string_view d) {
  // PyTorch's profiler spells a wrapped number by its dtype, like any tensor.
  if (d.rfind(kWrappedNumberPrefix, 0) == 0) d.remove_prefix(std::string_view(kWrappedNumberPrefix).size());
  static const std::map<std::string_view, std::string_view> kNames{
      {"float32", "float"},
      {"float", "float"},
      {"float64", "double"},
      {"double", "double"},
      {"float16", "c10::Half"},
      {"half", "c10::Half"},
      {"bfloat16", "c10::BFloat16"},
      {"int64", "long int"},
      {"long", "long int"},
      {"int32", "int"},
      {"int", "int"},
      {"int16", "short int"},
      {"short", "short int"},
      {"int8", "signed char"},
      {"uint8", "unsigned char"},
      {"bool", "bool"},
      {"complex64", "c10::complex<float>"},
      {"complex128", "c10::complex<double>"},
      {"complex32", "c10::complex<c10::Half>"},
      {"float8_e4m3fn", "c10::Float8_e4m3fn"},
      {"float8_e5m2", "c10::Float8_e5m2"}};
  auto it = kNames.find(d);
  return it == kNames.end() ? d : it->second;
}

void export_chrome_trace(const SessionReader& session, std::ostream& out,
                         const ChromeTraceOptions& options) {
  const auto meta = session.meta();
  int64_t cpu_pid = kDefaultCpuPid;
  if (auto pid = session.meta_value(meta_key::kPid)) {
    char* end = nullptr;
    const long long v = std::strtoll(pid->c_str(), &end, 10);
    if (end && *end == '\0' && !pid->empty()) cpu_pid = v;
  }

  const auto ops = session.ops(options.first_step, options.last_step);
  const auto kernels = session.kernels_in_steps(options.first_step, options.last_step);
  std::unordered_map<uint64_t, const OpRecord*> by_id;
  for (const auto& op : ops) by_id.emplace(op.id, &op);

  std::vector<Event> events;
  events.reserve(ops.size() + kernels.size() * 3 + 64);
  std::set<uint64_t> threads;
  std::set<std::pair<int32_t, int32_t>> streams;
  int64_t first_ns = std::numeric_limits<int64_t>::max();
  auto add = [&](int64_t ts, int rank, int64_t dur, Json e) {
    first_ns = std::min(first_ns, ts);
    events.push_back({ts, rank, dur, std::move(e)});
  };

  for (const auto& op : ops) {
    threads.insert(op.thread_id);
    add(op.start_ns, 0, op.end_ns - op.start_ns, op_event(op, cpu_pid, by_id));
    if (op.forward_op_id) {
      if (auto it = by_id.find(op.forward_op_id); it != by_id.end()) {
        const OpRecord& fwd = *it->second;
        add(fwd.start_ns, 1, 0,
            flow('s', "fwdbwd", fwd.id, cpu_pid, static_cast<int64_t>(fwd.thread_id),
                 fwd.start_ns));
        add(op.start_ns, 1, 0,
            flow('f', "fwdbwd", fwd.id, cpu_pid, static_cast<int64_t>(op.thread_id), op.start_ns));
      }
    }
  }
  for (const auto& k : kernels) {
    streams.insert({k.device, k.stream});
    add(k.start_ns, 0, k.end_ns - k.start_ns, kernel_event(k));
    auto it = by_id.find(k.op_id);
    if (k.op_id == 0 || it == by_id.end()) continue;
    const OpRecord& op = *it->second;
    add(op.start_ns, 1, 0,
        flow('s', "ac2g", k.correlation_id, cpu_pid, static_cast<int64_t>(op.thread_id),
             op.start_ns));
    add(k.start_ns, 1, 0, flow('f', "ac2g", k.correlation_id, k.device, k.stream, k.start_ns));
  }

  // Steps enclose their ops on the thread that ran most of them, and never overlap
  // each other, so viewers nest them as PyTorch's ProfilerStep spans.
  struct Span {
    int64_t start = std::numeric_limits<int64_t>::max(), end = std::numeric_limits<int64_t>::min();
    std::map<uint64_t, int64_t> thread_ops;
  };
  std::map<int64_t, Span> spans;
  for (const auto& op : ops) {
    auto& s = spans[op.step];
    ++s.thread_ops[op.thread_id];
  }
  for (const auto& op : ops) {
    auto& s = spans[op.step];
    const auto main = std::max_element(s.thread_ops.begin(), s.thread_ops.end(),
                                       [](auto& a, auto& b) { return a.second < b.second; });
    if (op.thread_id != main->first) continue;
    s.start = std::min(s.start, op.start_ns);
    s.end = std::max(s.end, op.end_ns);
  }
  int64_t previous_end = std::numeric_limits<int64_t>::min();
  for (const auto& step : session.steps()) {
    if (step.step < options.first_step || step.step > options.last_step) continue;
    Span& s = spans[step.step];
    if (step.end_ns > 0) {
      s.start = std::min(s.start, step.end_ns - static_cast<int64_t>(step.step_time_ms * 1e6));
      s.end = std::max(s.end, step.end_ns);
    }
    if (s.end == std::numeric_limits<int64_t>::min()) continue;
    s.start = std::max(s.start, previous_end);
    previous_end = s.end;
    uint64_t tid = 1;
    if (!s.thread_ops.empty())
      tid = std::max_element(s.thread_ops.begin(), s.thread_ops.end(), [](auto& a, auto& b) {
              return a.second < b.second;
            })->first;
    threads.insert(tid);
    Json e = complete("user_annotation", "ProfilerStep#" + std::to_string(step.step), cpu_pid,
                      static_cast<int64_t>(tid), s.start, s.end);
    e["args"]["External id"] = 0;
    e["args"]["Record function id"] = 0;
    e["args"]["Loss"] = step.loss;  // NaN is written as null
    e["args"]["Loss scale"] = step.loss_scale;
    e["args"]["Skipped"] = step.skipped;
    add(s.start, 0, s.end - s.start, std::move(e));
  }

  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.dur_ns > b.dur_ns;
  });
  if (first_ns == std::numeric_limits<int64_t>::max()) first_ns = 0;

  std::vector<Json> head;
  head.push_back(metadata("process_name", cpu_pid, 0, first_ns, "name", "ampscope"));
  head.push_back(metadata("process_labels", cpu_pid, 0, first_ns, "labels", "CPU"));
  head.push_back(metadata("process_sort_index", cpu_pid, 0, first_ns, "sort_index", 0));
  for (uint64_t t : threads) {
    const auto tid = static_cast<int64_t>(t);
    head.push_back(
        metadata("thread_name", cpu_pid, tid, first_ns, "name", "thread " + std::to_string(t)));
    head.push_back(metadata("thread_sort_index", cpu_pid, tid, first_ns, "sort_index", tid));
  }
  std::set<int32_t> devices;
  for (const auto& [device, stream] : streams) {
    if (devices.insert(device).second) {
      const std::string label = "GPU " + std::to_string(device);
      head.push_back(metadata("process_name", device, 0, first_ns, "name", label));
      head.push_back(metadata("process_labels", device, 0, first_ns, "labels", label));
      head.push_back(metadata("process_sort_index", device, 0, first_ns, "sort_index", device + 1));
    }
    head.push_back(metadata("thread_name", device, stream, first_ns, "name",
                            "stream " + std::to_string(stream)));
    head.push_back(metadata("thread_sort_index", device, stream, first_ns, "sort_index", stream));
  }

  Json props = Json::array();
  for (int32_t d : devices) {
    Json p;
    p["id"] = d;
    p["name"] = meta.device_name;
    props.push_back(std::move(p));
  }
  // Kineto's distributedInfo, which Holistic Trace Analysis reads a trace's rank
  // from: an ampscope session is one process, rank 0 of 1.
  const Json distributed = {{"backend", "none"}, {"rank", 0}, {"world_size", 1}};
  out << "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": " << props.dump()
      << ",\n  \"distributedInfo\": " << distributed.dump()
      << ",\n  \"record_shapes\": 1,\n  \"with_modules\": 1,\n  \"traceEvents\": [\n";
  bool first = true;
  auto emit = [&](const Json& e) {
    out << (first ? "  " : ",\n  ") << e.dump();
    first = false;
  };
  for (const auto& e : head) emit(e);
  for (const auto& e : events) emit(e.json);
  out << "\n  ],\n  \"traceName\": " << Json(session.path()).dump()
      << ",\n  \"displayTimeUnit\": \"ms\"\n}\n";
}

void export_chrome_trace(const SessionReader& session, const std::string& path,
                         const ChromeTraceOptions& options) {
  export_detail::write_file_atomically(
      path, [&](std::ostream& out) { export_chrome_trace(session, out, options); });
}

}  // namespace ampscope::profiler
