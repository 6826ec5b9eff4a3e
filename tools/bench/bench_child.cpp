#include "tools/bench/bench_child.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

namespace rsim::assignors::bench {

ChildOutcome run_in_child(const std::function<std::string()>& work) {
  ChildOutcome outcome;
  int fds[2];
  if (pipe(fds) != 0) {
    outcome.failed = true;
    outcome.output = std::string("error: pipe: ") + std::strerror(errno);
    return outcome;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    outcome.failed = true;
    outcome.output = std::string("error: fork: ") + std::strerror(errno);
    return outcome;
  }
  if (pid == 0) {
    close(fds[0]);
    std::string text;
    int code = 0;
    try {
      text = work();
    } catch (const std::exception& e) {
      text = std::string("error: ") + e.what();
      code = 1;
    }
    const char* p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
      const ssize_t n = write(fds[1], p, left);
      if (n <= 0) break;
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    close(fds[1]);
    _exit(code);  // no atexit handlers or stream flushes of the parent's copies
  }
  close(fds[1]);
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    outcome.output.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  outcome.peak_rss_kib = usage.ru_maxrss;
  outcome.failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  if (outcome.failed && outcome.output.empty()) outcome.output = "error: the child process died";
  return outcome;
}

long self_peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

long baseline_rss_kib() {
  return run_in_child([] { return std::string(); }).peak_rss_kib;
}

}  // namespace rsim::assignors::bench
