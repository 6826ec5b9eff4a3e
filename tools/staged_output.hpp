// Output written so that a reader never sees half of it: every file of a run goes to a staging
// folder (hidden, inside the target), each is written with checked writes and fsynced, and only when all
// of them succeeded are they moved into place (rename) and the folders fsynced. Any failure
// (a full disk, an unwritable folder, a file where a folder should be) is an OutputError naming
// the path, and the staging folder is removed.
#pragma once
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rsim::cli {

/// A write that failed: what() is "cannot write PATH: reason". The CLI exits 2 with it.
class OutputError : public std::runtime_error {
 public:
  OutputError(const std::filesystem::path& path, const std::string& reason);
};

/// One file being written, appended to in pieces (for traces that stream). close() fsyncs.
class OutputFile {
 public:
  explicit OutputFile(std::filesystem::path path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  void append(std::string_view bytes);
  void close();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

class StagedOutput {
 public:
  /// Prepares `target` (a folder, created if missing; refused if it is something else) and an
  /// empty staging folder beside it. Nothing in `target` changes before commit().
  explicit StagedOutput(std::filesystem::path target);
  ~StagedOutput();  // without commit(): the staging folder is removed, the target untouched
  StagedOutput(const StagedOutput&) = delete;
  StagedOutput& operator=(const StagedOutput&) = delete;

  /// Where `relative` is staged (its parent folders are created).
  std::filesystem::path staged(const std::filesystem::path& relative);
  /// Writes a whole file, fsynced.
  void write_file(const std::filesystem::path& relative, std::string_view bytes);
  /// Moves every top-level entry written into `target`, replacing what was there under the same
  /// name (and nothing else), then fsyncs the folders.
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path staging_;
  std::vector<std::filesystem::path> entries_;  // top-level names, in order of first write
  bool committed_ = false;
  bool created_target_ = false;
};

/// Writes one file atomically: a temporary file beside it, fsynced, renamed over it.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);
/// The same, creating `dir` first if needed.
void write_file_atomically_in(const std::filesystem::path& dir, const std::string& name, std::string_view bytes);

/// The default output folder of a scenario: out/<name> with the name made one safe path
/// component ([A-Za-z0-9._-], others become '_'; "", "." and ".." become "scenario").
std::filesystem::path default_output_dir(const std::string& scenario_name);

}  // namespace rsim::cli
