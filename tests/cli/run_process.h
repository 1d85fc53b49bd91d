#pragma once
// Runs a program as a child process and captures what it prints, for tests of the `hamisim`
// command line: the real binary, its real exit code, nothing mocked.

#include <chrono>
#include <string>
#include <vector>

namespace hamisim::testing {

struct ProcessResult {
  int exit_code = -1;       // the child's exit status; -1 when it did not exit normally
  int term_signal = 0;      // the signal that ended the child, 0 when it exited
  bool timed_out = false;   // killed because it outlived the time limit (a hang)
  std::string spawn_error;  // set when the child could not be started at all
  std::string out;
  std::string err;
};

// Runs `argv` (argv[0] is the program path, no PATH lookup) with stdin from /dev/null and
// stdout and stderr captured through pipes. Both pipes are drained together with poll(), so a
// child filling one of them never blocks. A child still running after `limit` is killed with
// SIGKILL: a hang fails the calling test instead of blocking the suite.
ProcessResult run_process(const std::vector<std::string>& argv,
                          std::chrono::milliseconds limit = std::chrono::seconds(120));

// A child that runs while the test talks to it (a server): started with `argv` and extra
// environment entries ("NAME=value", added to the test's own environment), stdout and stderr
// appended to one log file. The destructor kills it if the test did not stop it.
class BackgroundProcess {
 public:
  BackgroundProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  bool started() const { return pid_ > 0; }
  // Waits until the log contains `text` (true), the child exited, or `limit` passed.
  bool wait_for_log(const std::string& text,
                    std::chrono::milliseconds limit = std::chrono::seconds(60)) const;
  std::string log() const;
  bool running() const;
  // SIGTERM, then waits up to `limit` (SIGKILL after it); the exit code, -1 after a signal.
  int stop(std::chrono::milliseconds limit = std::chrono::seconds(60));

 private:
  int pid_ = -1;
  std::string log_path_;
  mutable int exit_code_ = -1;
  mutable bool exited_ = false;
};

// One line for test failure messages: exit code or signal, and both streams.
std::string describe(const ProcessResult& r);

}  // namespace hamisim::testing
