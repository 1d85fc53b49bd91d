// Proves that the single-thread guard works: starting a thread must abort this program (the
// ctest that runs it expects the failure).
#include <thread>

int main() {
  std::thread t([] {});
  t.join();
  return 0;
}
