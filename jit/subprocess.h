// Child processes for the JIT: one-shot commands (clang, llvm-objdump) and the
// long-lived compile workers. posix_spawn only: ft-serve has threads, and a
// fork without exec in a threaded process is unsafe.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "runtime/base/status.h"

namespace ft {

struct ProcessResult {
  int wait_status = 0;  // as from waitpid
  std::string output;   // stdout and stderr, interleaved

  bool exited_ok() const;
  // "exited with status 1", "was killed by signal 6 (Aborted)"
  std::string describe() const;
};

// Runs argv[0] (a path, or a name looked up in PATH) to completion.
Result<ProcessResult> run_process(const std::vector<std::string>& argv, const std::string& cwd);

std::string describe_wait_status(int wait_status);

// Whole-buffer I/O on a pipe, retrying short reads and writes and EINTR.
// read_fd_exact fails with kIo on EOF, or when `timeout_ms` (> 0) passes with
// nothing to read.
Status write_fd_all(int fd, const void* data, size_t size);
Status read_fd_exact(int fd, void* data, size_t size, int timeout_ms);

// A child with a pipe to its stdin and from its stdout; its stderr goes to an
// anonymous memory file so that the last words of a crashed child can be read.
class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  Status spawn(const std::vector<std::string>& argv);
  Status write_all(const void* data, size_t size);
  // Reads exactly `size` bytes. kIo on EOF (the child died) or when
  // `timeout_ms` (> 0) passes with nothing to read.
  Status read_exact(void* data, size_t size, int timeout_ms);
  // Kills (SIGKILL) if still running, reaps, and returns the wait status.
  int terminate();
  // The end of what the child wrote to stderr (at most `max_bytes`).
  std::string stderr_tail(size_t max_bytes = 4000) const;
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  int stderr_fd_ = -1;
};

}  // namespace ft
