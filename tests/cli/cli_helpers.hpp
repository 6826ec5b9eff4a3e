// Running the rebalance-sim binary from the CLI tests: one process per call, from the source
// tree, its exit code and its output read back from files.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace testing {

struct CliResult {
  int code;
  std::string out;  // stdout (and stderr too when merged)
  std::string err;  // stderr, when not merged
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Removes `p` (a file or a folder, whatever it holds by then) when the test process ends, so
/// that the tests leave nothing in the temporary directory; RSIM_KEEP_TEST_FILES=1 keeps them for
/// a look. Returns `p`.
inline std::filesystem::path remove_at_exit(const std::filesystem::path& p) {
  struct Paths {
    std::mutex mutex;
    std::vector<std::filesystem::path> paths;
    ~Paths() {
      if (std::getenv("RSIM_KEEP_TEST_FILES") != nullptr) return;
      for (const auto& q : paths) {
        std::error_code ec;
        std::filesystem::remove_all(q, ec);
      }
    }
  };
  static Paths paths;
  const std::lock_guard<std::mutex> lock(paths.mutex);
  paths.paths.push_back(p);
  return p;
}

/// Runs `rebalance-sim ARGS` in the source tree. `tag` names the output files (with the process
/// id: ctest runs test cases as parallel processes); `merge_stderr` sends stderr into `out`.
inline CliResult run_cli(const std::string& args, const std::string& tag,
                         bool merge_stderr = false) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string stem = "rebalance-sim-" + tag + "-" + std::to_string(getpid());
  const auto out = dir / (stem + ".out");
  const auto err = dir / (stem + ".err");
  const std::string cmd = std::string("cd ") + RSIM_SOURCE_DIR + " && " + RSIM_BINARY + " " + args +
                          " > " + out.string() + (merge_stderr ? " 2>&1" : " 2> " + err.string());
  const int status = std::system(cmd.c_str());
  CliResult r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(out),
              merge_stderr ? std::string() : read_file(err)};
  std::error_code ec;
  std::filesystem::remove(out, ec);
  std::filesystem::remove(err, ec);
  return r;
}

/// A fresh, empty scratch folder under the temporary directory, named by the test file's `prefix`,
/// the test's `tag` and the process id (ctest runs test cases as parallel processes); removed when
/// the test process ends.
inline std::filesystem::path scratch_dir(const std::string& prefix, const std::string& tag) {
  const std::filesystem::path p = std::filesystem::temp_directory_path() /
                                  ("rsim-" + prefix + "-" + tag + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return remove_at_exit(p);
}

/// Writes `text` to `p`, replacing it.
inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace testing
