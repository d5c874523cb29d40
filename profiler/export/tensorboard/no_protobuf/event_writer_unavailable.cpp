// EventFileWriter for builds without protobuf (a GPU server whose set-up did not
// install libprotobuf-dev): TensorBoard output is refused with one line saying how
// to get it, everything else in ampscope works. Never a hand-written encoder.
#include "profiler/export/tensorboard/event_writer.h"
#include "profiler/store/sqlite_util.h"

namespace ampscope::profiler::tensorboard {

EventFileWriter::EventFileWriter(const std::string& dir) {
  throw StoreError("cannot write TensorBoard events to '" + dir +
                   "': this build has no protobuf (apt-get install libprotobuf-dev "
                   "protobuf-compiler, then build again)");
}
EventFileWriter::~EventFileWriter() = default;
void EventFileWriter::write(int64_t, double, const std::vector<Scalar>&, const std::vector<NamedHistogram>&) {}
void EventFileWriter::flush() {}
void EventFileWriter::write_record(const std::string&) {}

}  // namespace ampscope::profiler::tensorboard
