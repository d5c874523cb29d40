#include "profiler/export/tensorboard/event_writer.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "profiler/export/tensorboard/crc32c.h"
#include "profiler/export/tensorboard/tensorboard_event.pb.h"
#include "profiler/store/sqlite_util.h"

namespace ampscope::profiler::tensorboard {
namespace {

using ::ampscope::tensorboard_proto::Event;
using ::ampscope::tensorboard_proto::HistogramProto;
using ::ampscope::tensorboard_proto::Summary;

std::string event_file_name() {
  static std::atomic<int> counter{0};
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return "events.out.tfevents." + std::to_string(seconds) + "." + host + "." + std::to_string(getpid()) + "." +
         std::to_string(counter++) + ".ampscope";
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

}  // namespace

EventFileWriter::EventFileWriter(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw StoreError("cannot create the TensorBoard directory '" + dir + "': " + ec.message());
  path_ = (std::filesystem::path(dir) / event_file_name()).string();
  out_.open(path_, std::ios::binary | std::ios::trunc);
  if (!out_) throw StoreError("cannot write '" + path_ + "': " + std::strerror(errno));
  Event first;
  first.set_wall_time(
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
  first.set_file_version("brain.Event:2");
  write_record(first.SerializeAsString());
  flush();
}

EventFileWriter::~EventFileWriter() {
  if (out_.is_open()) out_.flush();
}

void EventFileWriter::write(int64_t step, double wall_time, const std::vector<Scalar>& scalars,
                            const std::vector<NamedHistogram>& histograms) {
  Event event;
  event.set_wall_time(wall_time);
  event.set_step(step);
  Summary* summary = event.mutable_summary();
  for (const Scalar& s : scalars) {
    Summary::Value* v = summary->add_value();
    v->set_tag(s.tag);
    v->set_simple_value(static_cast<float>(s.value));
  }
  for (const NamedHistogram& h : histograms) {
    Summary::Value* v = summary->add_value();
    v->set_tag(h.tag);
    HistogramProto* p = v->mutable_histo();
    p->set_min(h.histogram.min);
    p->set_max(h.histogram.max);
    p->set_num(h.histogram.num);
    p->set_sum(h.histogram.sum);
    p->set_sum_squares(h.histogram.sum_squares);
    for (double limit : h.histogram.bucket_limit) p->add_bucket_limit(limit);
    for (double count : h.histogram.bucket) p->add_bucket(count);
  }
  write_record(event.SerializeAsString());
}

void EventFileWriter::write_record(const std::string& bytes) {
  std::string header;
  put_u64(header, bytes.size());
  std::string record = header;
  put_u32(record, masked_crc32c(header));
  record += bytes;
  put_u32(record, masked_crc32c(bytes));
  out_.write(record.data(), static_cast<std::streamsize>(record.size()));
}

void EventFileWriter::flush() {
  out_.flush();
  if (!out_) throw StoreError("cannot write '" + path_ + "': " + std::strerror(errno));
}

}  // namespace ampscope::profiler::tensorboard
