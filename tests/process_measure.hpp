// Helpers for tests that bound the memory of a run: the binary run as a child process (its exit
// code, peak resident set from wait4 and output), this process's own peak, and whether the tests
// were built with AddressSanitizer (whose shadow memory makes peaks meaningless).
#pragma once
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

struct Measured {
  int code;
  long max_rss_kib;
  std::string out;  // stdout and stderr
};

/// Runs the binary with `args` in the source folder, its stdout and stderr to `out`: its exit
/// code, its peak resident set (ru_maxrss, KiB, from wait4) and what it wrote.
inline Measured run_measured(const std::vector<std::string>& args,
                             const std::filesystem::path& out) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(RSIM_SOURCE_DIR) != 0) ::_exit(127);
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> argv;
    std::string bin = RSIM_BINARY;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  struct rusage ru {};
  ::wait4(pid, &status, 0, &ru);
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ru.ru_maxrss, text};
}

/// This process's peak resident set (VmHWM, KiB).
inline long own_peak_rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}

/// Why a forked child's peak resident set (`child_peak_kib`) does not measure `what` alone, or ""
/// when it does: not while this process is larger (the child's peak counts the pages it shares
/// with its parent, as when test cases run in one process), nor under AddressSanitizer (its
/// quarantine holds freed blocks, so the peak grows with the bytes allocated over the run, not
/// with the bytes alive at once; the plain build's `make test` checks the bound).
inline std::string peak_rss_unmeasured(long child_peak_kib, const std::string& what) {
  if (own_peak_rss_kib() >= child_peak_kib)
    return "this process is larger than " + what + " (test cases run in one process): not measured";
  if (kAddressSanitizer)
    return "built with AddressSanitizer: its quarantine, not the program, sets the peak; not "
           "measured";
  return "";
}

}  // namespace testing
