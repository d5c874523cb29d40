#include "profiler/export/export_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <streambuf>
#include <system_error>

#include "profiler/store/sqlite_util.h"

namespace ampscope::profiler::export_detail {
namespace {

[[noreturn]] void fail(const std::string& path, int error) {
  throw StoreError("cannot write '" + path + "': " + std::generic_category().message(error));
}

// 0 when every byte went out, else the errno of the failed write.
int write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

// A stream buffer over a file descriptor that keeps the first failed write's errno:
// std::ofstream reports only "failed", and errno is gone by the time anyone asks.
class FdBuffer : public std::streambuf {
 public:
  explicit FdBuffer(int fd) : fd_(fd) { setp(buffer_, buffer_ + sizeof buffer_); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    if (error_ == 0) error_ = write_all(fd_, pbase(), static_cast<size_t>(pptr() - pbase()));
    setp(buffer_, buffer_ + sizeof buffer_);
    return error_ == 0;
  }
  int fd_;
  int error_ = 0;
  char buffer_[1 << 16];
};

// Runs `fn` on a stream over `fd`, then flushes and closes it; 0 or the first errno.
int write_through(int fd, const std::function<void(std::ostream&)>& fn) {
  int error = 0;
  try {
    FdBuffer buffer(fd);
    std::ostream out(&buffer);
    fn(out);
    out.flush();
    error = buffer.error();
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  return error;
}

std::string folder_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string name_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& fn) {
  struct stat existing {};
  const bool exists = ::stat(path.c_str(), &existing) == 0;
  if (exists && !S_ISREG(existing.st_mode)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail(path, errno);
    if (const int error = write_through(fd, fn); error != 0) fail(path, error);
    return;
  }
  std::string tmp = folder_of(path) + "/." + name_of(path) + ".XXXXXX.tmp";
  const int fd = ::mkostemps(tmp.data(), 4, O_CLOEXEC);
  if (fd < 0) fail(path, errno);
  // mkstemp makes the file 0600; the output gets the mode a plain create would give it.
  ::fchmod(fd, exists ? existing.st_mode & 07777 : new_file_mode());
  int error = 0;
  try {
    error = write_through(fd, fn);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (error == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(tmp.c_str());
    fail(path, error);
  }
}

AppendedFile::AppendedFile(const std::string& path)
    : path_(path), fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) {
  if (fd_ < 0) fail(path_, errno);
}

AppendedFile::~AppendedFile() {
  if (fd_ >= 0) ::close(fd_);
}

void AppendedFile::append(std::string_view bytes) {
  if (const int error = write_all(fd_, bytes.data(), bytes.size()); error != 0) fail(path_, error);
}

void csv_header(std::ostream& out, std::initializer_list<std::string_view> names) {
  CsvRow r(out);
  for (auto n : names) r.text(n);
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string number_text(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

}  // namespace ampscope::profiler::export_detail
