#pragma once
// A TensorBoard event file: TFRecord framing (uint64 length, masked CRC-32C of
// the length, the bytes, masked CRC-32C of the bytes; little-endian) around
// Event protobufs (tensorboard_event.proto, with TensorBoard's field numbers),
// written with Debian's protobuf. TensorBoard, tensorboardX readers and
// tf.data.TFRecordDataset read it. No protobuf or LibTorch type in this header:
// it is included next to LibTorch, whose include directory carries an older
// protobuf.
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace ampscope::profiler::tensorboard {

// TensorBoard's HistogramProto: bucket[i] counts values in
// (bucket_limit[i-1], bucket_limit[i]], the first from min.
struct Histogram {
  double min = 0, max = 0, num = 0, sum = 0, sum_squares = 0;
  std::vector<double> bucket_limit, bucket;
};

struct Scalar {
  std::string tag;
  double value = 0;  // stored as float, as TensorBoard's simple_value is
};

struct NamedHistogram {
  std::string tag;
  Histogram histogram;
};

class EventFileWriter {
 public:
  // Creates `dir` (and its parents) and a new file in it named the way
  // TensorBoard finds them: events.out.tfevents.<unix seconds>.<host>.<pid>.<n>.ampscope,
  // starting with the file_version event. Throws StoreError naming the path.
  explicit EventFileWriter(const std::string& dir);
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  // One Event holding every value of one step. wall_time: seconds since the epoch.
  void write(int64_t step, double wall_time, const std::vector<Scalar>& scalars,
             const std::vector<NamedHistogram>& histograms = {});
  // Makes everything written so far visible to readers; throws StoreError on a write error.
  void flush();
  const std::string& path() const { return path_; }

 private:
  void write_record(const std::string& bytes);

  std::string path_;
  std::ofstream out_;
};

}  // namespace ampscope::profiler::tensorboard
