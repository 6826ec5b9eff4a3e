// Output written so that a reader never sees half of it, and a user's files are never lost.
//
// An output folder is owned: the first run marks it with a manifest (.rebalance-sim-manifest.json:
// the scenario, its variants and the files written). A run writes every file into a hidden staging
// folder beside the target (same file system), each with checked writes and fsynced, and only when
// all of them succeeded swaps the staging folder in with one rename (renameat2 RENAME_EXCHANGE):
// readers see the old outputs or the new ones, never a mix. What the old manifest lists is
// replaced; anything else in the folder (a user's notes) is carried into the new one untouched. A
// non-empty folder without a manifest is refused before anything runs, unless `force`. Writers of
// one folder exclude each other with flock() on the folder. Any failure is an OutputError naming
// the path, the staging folder is removed and the old folder is left as it was.
//
// Interrupts (SIGINT, SIGTERM, SIGHUP) are taken by a thread that waits for them with sigwait()
// (install_interrupt_cleanup): it removes the staging folders and temporary files in flight and
// ends the process with 128 + the signal. SIGPIPE is ignored: a closed stdout does not stop a run
// or a check before its files are written.
#pragma once
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rsim::cli {

/// A write that failed: what() is "cannot write PATH: reason". The CLI exits 2 with it.
class OutputError : public std::runtime_error {
 public:
  OutputError(const std::filesystem::path& path, const std::string& reason);
  const std::filesystem::path& path() const { return path_; }
  const std::string& reason() const { return reason_; }

 private:
  std::filesystem::path path_;
  std::string reason_;
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

/// The manifest's file name, inside an output folder.
inline constexpr const char* kManifestName = ".rebalance-sim-manifest.json";

/// What an output folder's manifest says (tools/staged_output.cpp reads and writes it).
struct OutputManifest {
  std::string scenario;               // the scenario's `name`
  std::string scenario_file;          // as given on the command line
  std::vector<std::string> variants;  // the variant folders, in the order run
  std::vector<std::string> files;     // every file written, relative, sorted
  /// The top-level entries the manifest owns (first components of `files`, and the manifest).
  std::vector<std::string> entries() const;
};

/// Reads DIR/.rebalance-sim-manifest.json: false when there is none; an OutputError (naming it)
/// when it is not a manifest.
bool read_manifest(const std::filesystem::path& dir, OutputManifest& out);

/// flock() on a folder, held while the object lives: another rebalance-sim writing to it is an
/// OutputError with a clear message. The folder must exist.
class FolderLock {
 public:
  explicit FolderLock(const std::filesystem::path& dir, const std::filesystem::path& shown);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

/// Who writes an output folder: named in its manifest.
struct OutputOwner {
  std::string scenario;
  std::string scenario_file;
  bool force =
      false;  // write into a non-empty folder without a manifest, or over entries it does not list
};

class StagedOutput {
 public:
  /// Prepares `target` (a folder, created if missing; refused if it is something else, if it is
  /// the current folder or one of its parents, if another writer holds it, or if it is not empty
  /// and not owned, unless owner.force) and an empty staging folder beside it. Nothing in
  /// `target` changes before commit().
  explicit StagedOutput(std::filesystem::path target, OutputOwner owner = {});
  ~StagedOutput();  // without commit(): the staging folder is removed, the target untouched
  StagedOutput(const StagedOutput&) = delete;
  StagedOutput& operator=(const StagedOutput&) = delete;

  /// Where `relative` is staged (its parent folders are created).
  std::filesystem::path staged(const std::filesystem::path& relative);
  /// Writes a whole file, fsynced; a failure is an OutputError about the path it was going to have.
  void write_file(const std::filesystem::path& relative, std::string_view bytes);
  /// The variant folders, for the manifest (in the order run).
  void set_variants(std::vector<std::string> variants) {
    std::lock_guard<std::mutex> guard(mutex_);
    variants_ = std::move(variants);
  }
  /// Refuses (OutputError) top-level names that the folder holds but its manifest does not list
  /// (unless force): called before a run, so that a refusal costs nothing.
  void claim(const std::vector<std::string>& top_level_names) const;
  /// Writes the manifest, carries the folder's entries that the old manifest does not list into
  /// the staging folder, and swaps it in with one rename. On failure the old folder is intact.
  /// Test hook: RSIM_TEST_FAIL_COMMIT=1 fails after the carrying, before the swap.
  void commit();
  /// An OutputError about a staged path, retold about the path it was going to have.
  OutputError retold(const OutputError& e) const;

 private:
  std::filesystem::path shown_;    // the target as given (messages)
  std::filesystem::path target_;   // absolute, symlinks of an existing folder resolved
  std::filesystem::path staging_;  // beside target_
  OutputOwner owner_;
  std::vector<std::string> variants_;
  std::vector<std::string> owned_;  // entries of the old manifest
  bool had_manifest_ = false;
  std::vector<std::filesystem::path> entries_;  // top-level names staged, in order of first write
  bool committed_ = false;
  bool created_target_ = false;
  std::unique_ptr<FolderLock> lock_;
  std::mutex
      mutex_;  // staged(), write_file() and set_variants() may be called from several threads
};

/// Writes one file atomically: a temporary file beside it, fsynced, renamed over it.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);
/// The same, creating `dir` first if needed.
void write_file_atomically_in(const std::filesystem::path& dir, const std::string& name,
                              std::string_view bytes);

/// The default output folder of a scenario: out/<name> with the name made one safe path
/// component ([A-Za-z0-9._-], others become '_'; "", "." and ".." become "scenario").
std::filesystem::path default_output_dir(const std::string& scenario_name);

/// One path component made safe for an output folder: [A-Za-z0-9._-] kept, anything else '_',
/// a leading '.' becomes '_' (never hidden, never "." or ".."), "" becomes "_", at most 200 bytes.
std::string safe_component(std::string_view name);

/// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (call it before any other thread
/// starts: they inherit the mask) and starts the thread that takes them; ignores SIGPIPE. Called
/// once by the commands that write files; later calls do nothing.
void install_interrupt_cleanup();

}  // namespace rsim::cli
