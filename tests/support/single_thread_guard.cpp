// Linked into every test executable not marked THREADS (release builds only; the sanitizers
// intercept pthread_create themselves). scripts/test.sh runs only THREADS executables under
// TSan, which is sound only if the others never start a thread: this definition takes the place
// of libc's for the whole process (std::thread, Asio, spdlog's async sinks all come here), so a
// test that starts one exits at once, naming the fix, instead of escaping the race detector.
#include <pthread.h>

#include <cstdio>
#include <cstdlib>

extern "C" int pthread_create(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*) {
  std::fputs(
      "single_thread_guard: this test started a thread, but its executable is not marked THREADS "
      "(hamisim_test(... THREADS ...) in its CMakeLists.txt), so TSan would never check it\n",
      stderr);
  std::_Exit(70);  // not abort(): ctest counts a signal as a crash even where one is expected
}
