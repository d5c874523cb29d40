// A deliberate bug for scripts/sanitize.sh: before the real tests run, the script
// checks that this program's report reaches its log directory, so a build
// without the sanitizer, or options that hide reports, cannot pass as clean.
#include <cstdio>
#include <thread>

int main(int argc, char**) {
#if defined(__SANITIZE_THREAD__)
  int shared = 0;
  std::thread writer([&] { shared = 1; });
  shared = argc;  // no lock, no join before it: a data race with `writer`
  writer.join();
  return shared > 1 ? 0 : 3;
#elif defined(__SANITIZE_ADDRESS__)
  char* bytes = new char[4];
  bytes[argc + 3] = 1;  // one past the end
  const int read = bytes[0];
  delete[] bytes;
  return read == 42 ? 0 : 3;
#else
  std::fputs("built without ThreadSanitizer or AddressSanitizer\n", stderr);
  return 0;  // exits 0 with no report: the script calls that a failed check
#endif
}
