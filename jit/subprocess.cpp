#include "jit/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace ft {
namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() { close_both(); }
  Status open() {
    if (::pipe2(fd, O_CLOEXEC) != 0) return FT_ERROR(ErrorCode::kIo, "pipe: {}", std::strerror(errno));
    return Status();
  }
  void close_both() {
    for (int& f : fd)
      if (f >= 0) { ::close(f); f = -1; }
  }
  int release(int i) { int f = fd[i]; fd[i] = -1; return f; }
};

}  // namespace

bool ProcessResult::exited_ok() const { return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0; }
std::string ProcessResult::describe() const { return describe_wait_status(wait_status); }

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status), ::strsignal(WTERMSIG(status)));
  return fmt::format("ended with wait status {}", status);
}

Result<ProcessResult> run_process(const std::vector<std::string>& argv, const std::string& cwd) {
  Pipe out;
  FT_RETURN_IF_ERROR(out.open());
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  auto args = c_argv(argv);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return FT_ERROR(ErrorCode::kNotFound, "cannot run {}: {}", argv[0], std::strerror(rc));
  ::close(out.release(1));
  ProcessResult result;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(out.fd[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buf, static_cast<size_t>(n));
  }
  while (::waitpid(pid, &result.wait_status, 0) < 0 && errno == EINTR) {}
  return result;
}

ChildProcess::~ChildProcess() {
  terminate();
  if (stderr_fd_ >= 0) ::close(stderr_fd_);
}

Status ChildProcess::spawn(const std::vector<std::string>& argv) {
  terminate();
  if (stderr_fd_ >= 0) { ::close(stderr_fd_); stderr_fd_ = -1; }
  Pipe in, out;
  FT_RETURN_IF_ERROR(in.open());
  FT_RETURN_IF_ERROR(out.open());
  int err = ::memfd_create("ft-worker-stderr", MFD_CLOEXEC);
  if (err < 0) return FT_ERROR(ErrorCode::kIo, "memfd_create: {}", std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err, 2);
  auto args = c_argv(argv);
  int rc = ::posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ::close(err);
    pid_ = -1;
    return FT_ERROR(ErrorCode::kNotFound, "cannot start {}: {}", argv[0], std::strerror(rc));
  }
  to_child_ = in.release(1);
  from_child_ = out.release(0);
  stderr_fd_ = err;
  return Status();
}

Status write_fd_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return FT_ERROR(ErrorCode::kIo, "write to pipe: {}", std::strerror(errno));
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status();
}

Status read_fd_exact(int fd, void* data, size_t size, int timeout_ms) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    if (timeout_ms > 0) {
      pollfd pfd{fd, POLLIN, 0};
      int rc = ::poll(&pfd, 1, timeout_ms);
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0) return FT_ERROR(ErrorCode::kIo, "no answer within {} ms", timeout_ms);
    }
    ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return FT_ERROR(ErrorCode::kIo, "the other end closed the pipe");
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status();
}

Status ChildProcess::write_all(const void* data, size_t size) {
  return write_fd_all(to_child_, data, size).with_context(fmt::format("worker {}", pid_));
}

Status ChildProcess::read_exact(void* data, size_t size, int timeout_ms) {
  return read_fd_exact(from_child_, data, size, timeout_ms).with_context(fmt::format("worker {}", pid_));
}

int ChildProcess::terminate() {
  int status = 0;
  if (to_child_ >= 0) { ::close(to_child_); to_child_ = -1; }
  if (from_child_ >= 0) { ::close(from_child_); from_child_ = -1; }
  if (pid_ > 0) {
    // A worker that already died is reaped as it is; a live one is killed.
    if (::waitpid(pid_, &status, WNOHANG) == 0) {
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
    }
    pid_ = -1;
  }
  return status;
}

std::string ChildProcess::stderr_tail(size_t max_bytes) const {
  if (stderr_fd_ < 0) return "";
  off_t end = ::lseek(stderr_fd_, 0, SEEK_END);
  if (end <= 0) return "";
  off_t start = end > static_cast<off_t>(max_bytes) ? end - static_cast<off_t>(max_bytes) : 0;
  std::string out(static_cast<size_t>(end - start), '\0');
  ssize_t n = ::pread(stderr_fd_, out.data(), out.size(), start);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

}  // namespace ft
