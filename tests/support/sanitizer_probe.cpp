// A deliberate defect for the sanitizer build it runs in: `race` makes two threads write one
// int, `use-after-free` reads freed memory. scripts/test.sh runs it once per sanitizer build and
// checks that the report names this file with a line number, so a machine without a symbolizer
// (reports of bare addresses nobody can act on) fails CI instead of hiding the next real report.
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

namespace {

int shared_counter = 0;  // written by two threads with no synchronization, on purpose

void bump_without_lock() {
  for (int i = 0; i < 1000; ++i) ++shared_counter;
}

int race() {
  std::thread a(bump_without_lock);
  std::thread b(bump_without_lock);
  a.join();
  b.join();
  return shared_counter > 0 ? 0 : 1;
}

int read_after_free() {
  auto* p = new int[4]{1, 2, 3, 4};
  delete[] p;
  volatile int v = p[2];  // the defect the report must point at
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "race") == 0) return race();
  if (argc == 2 && std::strcmp(argv[1], "use-after-free") == 0) return read_after_free();
  std::fprintf(stderr, "usage: sanitizer_probe race|use-after-free\n");
  return 2;
}
