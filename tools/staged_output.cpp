#include "tools/staged_output.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace rsim::cli {

namespace fs = std::filesystem;

namespace {

std::string errno_text(int e) {
  return std::strerror(e);
}

void fsync_dir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw OutputError(dir, errno_text(errno));
  const int rc = ::fsync(fd);
  const int e = errno;
  ::close(fd);
  // Some file systems cannot fsync a folder (EINVAL): the data itself is synced already.
  if (rc != 0 && e != EINVAL) throw OutputError(dir, errno_text(e));
}

void make_dirs(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw OutputError(dir, ec.message());
  if (!fs::is_directory(dir, ec)) throw OutputError(dir, "exists and is not a folder");
}

// What an interrupt must remove: the staging folders and temporary files in flight. This is the
// one piece of process-global mutable state of the CLI, and it has to be: the interrupt thread
// (install_interrupt_cleanup) cannot be handed the paths of a run it knows nothing about. It
// never reaches an output. Its mutex is also held across the carrying and the swap of a commit,
// so that an interrupt removes either the new outputs (before the swap) or the old ones (after),
// never the entries carried between them; the interrupt thread keeps it until _exit, so that no
// writer creates anything after the removal.
struct InFlight {
  std::mutex mutex;
  std::vector<fs::path> paths;
};

InFlight& in_flight() {
  static InFlight* const registry =
      new InFlight;  // never destroyed: the interrupt thread may outlive main()
  return *registry;
}

void enlist_locked(const fs::path& p) {
  in_flight().paths.push_back(p);
}

void delist(const fs::path& p) {
  auto& r = in_flight();
  std::lock_guard<std::mutex> guard(r.mutex);
  const auto it = std::find(r.paths.begin(), r.paths.end(), p);
  if (it != r.paths.end()) r.paths.erase(it);
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool process_gone(std::string_view pid_text) {
  if (!all_digits(pid_text) || pid_text.size() > 9) return false;
  const pid_t pid = static_cast<pid_t>(std::stol(std::string(pid_text)));
  return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
}

/// `a` is `b` or inside it (both absolute and normal).
bool inside(const fs::path& a, const fs::path& b) {
  auto ia = a.begin();
  for (auto ib = b.begin(); ib != b.end(); ++ib, ++ia) {
    if (ib->empty()) continue;  // a trailing separator
    if (ia == a.end() || *ia != *ib) return false;
  }
  return true;
}

std::vector<std::string> entries_of(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    names.push_back(it->path().filename().string());
  if (ec) throw OutputError(dir, ec.message());
  std::sort(names.begin(), names.end());
  return names;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i)
    out += fmt::format("{}\"{}\"", i == 0 ? "" : ", ", names[i]);
  if (names.size() > 3) out += fmt::format(" and {} more", names.size() - 3);
  return out;
}

constexpr const char* kStagingInfix = ".rebalance-sim-staging-";
constexpr const char* kOldInfix = ".rebalance-sim-old-";

}  // namespace

OutputError::OutputError(const fs::path& path, const std::string& reason)
    : std::runtime_error(fmt::format("cannot write {}: {}", path.string(), reason)),
      path_(path),
      reason_(reason) {}

OutputFile::OutputFile(fs::path path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw OutputError(path_, errno_text(errno));
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void OutputFile::append(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw OutputError(path_, errno_text(errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void OutputFile::close() {
  if (fd_ < 0) return;
  const int fd = fd_;
  fd_ = -1;
  if (::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    throw OutputError(path_, errno_text(e));
  }
  if (::close(fd) != 0) throw OutputError(path_, errno_text(errno));
}

// ---------------------------------------------------------------------------------------------
// The manifest

std::vector<std::string> OutputManifest::entries() const {
  std::vector<std::string> out{kManifestName};
  for (const auto& f : files) {
    const std::string top = f.substr(0, f.find('/'));
    if (!contains(out, top)) out.push_back(top);
  }
  return out;
}

bool read_manifest(const fs::path& dir, OutputManifest& out) {
  const fs::path p = dir / kManifestName;
  std::error_code ec;
  const auto st = fs::symlink_status(p, ec);
  if (ec || st.type() == fs::file_type::not_found) return false;
  if (st.type() != fs::file_type::regular)
    throw OutputError(p, "is not a regular file: not a manifest of rebalance-sim");
  std::ifstream in(p, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto bad = [&](const std::string& why) {
    return OutputError(
        p, fmt::format("not a manifest of rebalance-sim ({}); remove it, or pass --force", why));
  };
  if (text.size() > (16u << 20)) throw bad("larger than 16 MiB");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw bad("not valid json");
  }
  if (!j.is_object() || j.value("written_by", nlohmann::json()) != "rebalance-sim")
    throw bad("no \"written_by\": \"rebalance-sim\"");
  auto strings = [&](const char* key) {
    std::vector<std::string> v;
    const auto it = j.find(key);
    if (it == j.end() || !it->is_array()) throw bad(fmt::format("\"{}\" is not a list", key));
    for (const auto& e : *it) {
      if (!e.is_string()) throw bad(fmt::format("\"{}\" holds a value that is not a string", key));
      v.push_back(e.get<std::string>());
    }
    return v;
  };
  out.scenario =
      j.contains("scenario") && j["scenario"].is_string() ? j["scenario"].get<std::string>() : "";
  out.scenario_file = j.contains("scenario_file") && j["scenario_file"].is_string()
                          ? j["scenario_file"].get<std::string>()
                          : "";
  out.variants = strings("variants");
  out.files = strings("files");
  for (const auto& f : out.files) {
    const fs::path rel(f);
    bool ok = !f.empty() && rel.is_relative();
    for (const auto& c : rel) ok = ok && !c.empty() && c != "." && c != "..";
    if (!ok) throw bad(fmt::format("\"{}\" is not a path inside the folder", f));
  }
  for (const auto& v : out.variants)
    if (v.empty() || v == "." || v == ".." || v.find('/') != std::string::npos)
      throw bad(fmt::format("variant \"{}\" is not a folder name", v));
  return true;
}

// ---------------------------------------------------------------------------------------------
// The lock

FolderLock::FolderLock(const fs::path& dir, const fs::path& shown) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) throw OutputError(shown, errno_text(errno));
    int rc;
    do rc = ::flock(fd_, LOCK_EX | LOCK_NB);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      const int e = errno;
      ::close(fd_);
      fd_ = -1;
      if (e == EWOULDBLOCK)
        throw OutputError(
            shown,
            "another rebalance-sim is writing to this folder (it holds the folder's lock); "
            "wait until it ends, or choose another output folder");
      throw OutputError(shown, "cannot lock the folder: " + errno_text(e));
    }
    // The folder may have been swapped for a new one between open() and flock(): the lock must
    // be on the folder the path names now.
    struct stat held {
    }, named{};
    if (::fstat(fd_, &held) == 0 && ::stat(dir.c_str(), &named) == 0 &&
        held.st_dev == named.st_dev && held.st_ino == named.st_ino)
      return;
    ::close(fd_);
    fd_ = -1;
  }
  throw OutputError(shown, "the folder keeps being replaced by another writer");
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

// ---------------------------------------------------------------------------------------------
// The staged output

StagedOutput::StagedOutput(fs::path target, OutputOwner owner)
    : shown_(std::move(target)), owner_(std::move(owner)) {
  if (shown_.empty()) shown_ = ".";
  std::error_code ec;
  target_ = fs::absolute(shown_, ec).lexically_normal();
  if (ec) throw OutputError(shown_, ec.message());
  if (!target_.has_filename() && target_.has_parent_path() && target_ != target_.root_path())
    target_ = target_.parent_path();
  const auto st = fs::symlink_status(target_, ec);
  if (st.type() == fs::file_type::symlink) {
    // `--out LINK` names the folder the link points to (the link itself stays).
    if (!fs::is_directory(target_, ec))
      throw OutputError(shown_, "is a symbolic link, not to a folder");
    target_ = fs::canonical(target_, ec);
    if (ec) throw OutputError(shown_, ec.message());
  } else if (st.type() != fs::file_type::not_found && st.type() != fs::file_type::directory) {
    throw OutputError(shown_, "exists and is not a folder");
  }
  // The folder is replaced whole by a rename: it cannot be the current folder or hold it.
  const fs::path cwd = fs::weakly_canonical(fs::current_path(ec), ec);
  if (!target_.has_filename() || inside(cwd, fs::weakly_canonical(target_, ec)))
    throw OutputError(
        shown_,
        "is the current folder or one of its parents; an output folder is replaced whole, "
        "so give it a folder of its own (e.g. out/NAME)");
  created_target_ = !fs::exists(target_, ec);
  make_dirs(target_);
  try {
    lock_ = std::make_unique<FolderLock>(target_, shown_);
    // Holding the lock, no other writer of this folder is alive: every staging folder of it is a
    // leftover (an interrupt the process could not clean up, e.g. SIGKILL) and goes.
    const std::string name = target_.filename().string();
    const fs::path parent = target_.parent_path();
    for (const auto& n : entries_of(parent)) {
      for (const char* infix : {kStagingInfix, kOldInfix}) {
        const std::string prefix = "." + name + infix;
        if (n.size() > prefix.size() && n.compare(0, prefix.size(), prefix) == 0 &&
            all_digits(n.substr(prefix.size())))
          fs::remove_all(parent / n, ec);
      }
    }
    // Staging folders of older versions were inside the folder; those of dead processes go too.
    for (const auto& n : entries_of(target_)) {
      const std::string prefix = std::string(kStagingInfix);
      if (n.size() > prefix.size() && n.compare(0, prefix.size(), prefix) == 0 &&
          process_gone(n.substr(prefix.size())))
        fs::remove_all(target_ / n, ec);
    }
    // Ownership.
    OutputManifest old;
    try {
      had_manifest_ = read_manifest(target_, old);
    } catch (const OutputError&) {
      if (!owner_.force) throw;
      had_manifest_ = false;
    }
    if (had_manifest_) owned_ = old.entries();
    if (!had_manifest_ && !owner_.force) {
      const auto held = entries_of(target_);
      if (!held.empty())
        throw OutputError(
            shown_,
            fmt::format("the folder is not empty and is not an output folder of rebalance-sim "
                        "(it has no {}; it holds {}); choose a new or empty folder, or pass "
                        "--force to write into it (what it holds is kept, except entries named "
                        "as the outputs)",
                        kManifestName, quoted_list(held)));
    }
    staging_ = parent / fmt::format(".{}{}{}", name, kStagingInfix, ::getpid());
    fs::remove_all(staging_, ec);
    auto& r = in_flight();
    std::lock_guard<std::mutex> guard(r.mutex);
    make_dirs(staging_);
    enlist_locked(staging_);
  } catch (...) {
    // A folder this run created goes again if it is still empty, but only while this run holds
    // it: a writer that won the lock may be about to fill it.
    if (created_target_ && lock_) fs::remove(target_, ec);
    created_target_ = false;
    lock_.reset();
    throw;
  }
}

StagedOutput::~StagedOutput() {
  std::error_code ec;
  if (!staging_.empty()) {
    fs::remove_all(staging_, ec);
    delist(staging_);
  }
  // A folder this run created and filled with nothing goes too (remove() keeps a non-empty one).
  if (!committed_ && created_target_) fs::remove(target_, ec);
}

fs::path StagedOutput::staged(const fs::path& relative) {
  const fs::path top = *relative.begin();
  {
    std::lock_guard<std::mutex> entries_guard(mutex_);
    if (std::find(entries_.begin(), entries_.end(), top) == entries_.end()) entries_.push_back(top);
  }
  const fs::path p = staging_ / relative;
  // Under the in-flight lock: an interrupt that removed the staging folder holds it until the
  // process ends, so that nothing is created again.
  std::lock_guard<std::mutex> guard(in_flight().mutex);
  make_dirs(p.parent_path());
  return p;
}

void StagedOutput::write_file(const fs::path& relative, std::string_view bytes) {
  try {
    OutputFile f(staged(relative));
    f.append(bytes);
    f.close();
  } catch (const OutputError& e) {
    throw retold(e);  // named by the path it was going to have
  }
}

void StagedOutput::claim(const std::vector<std::string>& names) const {
  if (owner_.force) return;
  std::error_code ec;
  for (const auto& n : names) {
    if (n == kManifestName || contains(owned_, n)) continue;
    if (fs::symlink_status(target_ / n, ec).type() != fs::file_type::not_found)
      throw OutputError(
          shown_ / n,
          fmt::format("exists and is not an output of rebalance-sim (not listed in {}); "
                      "move it away, or pass --force to replace it",
                      kManifestName));
  }
}

OutputError StagedOutput::retold(const OutputError& e) const {
  if (staging_.empty() || !inside(e.path(), staging_)) return e;
  return OutputError(shown_ / e.path().lexically_relative(staging_), e.reason());
}

void StagedOutput::commit() {
  std::vector<std::string> names;
  for (const auto& e : entries_) names.push_back(e.string());
  claim(names);
  // The manifest: every file staged.
  OutputManifest m;
  m.scenario = owner_.scenario;
  m.scenario_file = owner_.scenario_file;
  m.variants = variants_;
  for (const auto& top : entries_) {
    const fs::path p = staging_ / top;
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto& e : fs::recursive_directory_iterator(p)) {
        if (e.is_directory())
          fsync_dir(e.path());
        else
          m.files.push_back(e.path().lexically_relative(staging_).generic_string());
      }
      fsync_dir(p);
    } else {
      m.files.push_back(top.generic_string());
    }
  }
  std::sort(m.files.begin(), m.files.end());
  nlohmann::ordered_json doc{{"written_by", "rebalance-sim"}, {"manifest_version", 1},
                             {"scenario", m.scenario},        {"scenario_file", m.scenario_file},
                             {"variants", m.variants},        {"files", m.files}};
  write_file(kManifestName, doc.dump(2) + "\n");
  fsync_dir(staging_);

  // Carry over what the old manifest does not list and this run does not write, swap, and on a
  // failure put everything back. Under the in-flight lock: an interrupt waits for the swap.
  auto& r = in_flight();
  std::unique_lock<std::mutex> guard(r.mutex);
  std::vector<std::string> carried;
  const fs::path parent = target_.parent_path();
  try {
    for (const auto& n : entries_of(target_)) {
      if (n == kManifestName || contains(owned_, n) || contains(names, n)) continue;
      std::error_code ec;
      fs::rename(target_ / n, staging_ / n, ec);
      if (ec) throw OutputError(shown_ / n, "cannot keep it in the new outputs: " + ec.message());
      carried.push_back(n);
    }
    if (const char* hook = std::getenv("RSIM_TEST_FAIL_COMMIT");
        hook != nullptr && std::string(hook) == "1")
      throw OutputError(shown_,
                        "the commit failed half-way (RSIM_TEST_FAIL_COMMIT=1, a test hook)");
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) != 0) {
      const int e = errno;
      if (e != EINVAL && e != ENOSYS && e != ENOTSUP) throw OutputError(shown_, errno_text(e));
      // A file system without an atomic exchange: two renames, the old folder moved aside first.
      const fs::path old =
          parent / fmt::format(".{}{}{}", target_.filename().string(), kOldInfix, ::getpid());
      enlist_locked(old);
      std::error_code ec;
      fs::rename(target_, old, ec);
      if (ec) throw OutputError(shown_, ec.message());
      fs::rename(staging_, target_, ec);
      if (ec) {
        std::error_code back;
        fs::rename(old, target_, back);
        throw OutputError(shown_, ec.message());
      }
      fs::rename(old, staging_, ec);  // the old folder is now where the staging folder was
      if (ec) fs::remove_all(old, ec);
    }
  } catch (...) {
    std::error_code ec;
    for (const auto& n : carried) fs::rename(staging_ / n, target_ / n, ec);
    throw;
  }
  committed_ = true;
  guard.unlock();
  fsync_dir(parent);
  // The staging path now holds the old outputs: the destructor removes them.
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

void write_file_atomically(const fs::path& path, std::string_view bytes) {
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw OutputError(path, "is a folder");
  const fs::path temp =
      dir / fmt::format(".{}.rebalance-sim-{}", path.filename().string(), ::getpid());
  {
    std::lock_guard<std::mutex> guard(in_flight().mutex);
    enlist_locked(temp);
  }
  try {
    OutputFile f(temp);
    f.append(bytes);
    f.close();
    fs::rename(temp, path, ec);
    if (ec) throw OutputError(path, ec.message());
    delist(temp);
    fsync_dir(dir);
  } catch (const OutputError& e) {
    fs::remove(temp, ec);
    delist(temp);
    // The message names the file asked for, not the temporary one beside it.
    throw OutputError(path, e.reason());
  }
}

void write_file_atomically_in(const fs::path& dir, const std::string& name,
                              std::string_view bytes) {
  make_dirs(dir);
  write_file_atomically(dir / name, bytes);
}

fs::path default_output_dir(const std::string& scenario_name) {
  std::string safe;
  for (const char c : scenario_name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    safe += ok ? c : '_';
  }
  if (safe.size() > 200) safe.resize(200);
  if (safe.empty() || safe == "." || safe == "..") safe = "scenario";
  return fs::path("out") / safe;
}

std::string safe_component(std::string_view name) {
  std::string safe;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    safe += ok ? c : '_';
  }
  if (safe.size() > 200) safe.resize(200);
  if (safe.empty()) safe = "_";
  if (safe[0] == '.') safe[0] = '_';
  return safe;
}

// ---------------------------------------------------------------------------------------------
// Interrupts
//
// No signal handler runs any of this: the signals are blocked in every thread and one thread
// takes them with sigwait(), where any code may run. It removes what is in flight and ends the
// process without running destructors or atexit handlers (_exit), holding the in-flight lock so
// that no other thread creates a file after the removal.

namespace {

[[noreturn]] void take_interrupts(sigset_t set) {
  int sig = 0;
  while (::sigwait(&set, &sig) != 0) {
  }
  auto& r = in_flight();
  r.mutex.lock();  // waits for a swap in progress; never released
  bool removed = false;
  for (const auto& p : r.paths) {
    std::error_code ec;
    removed = fs::remove_all(p, ec) > 0 || removed;
  }
  const char* name = sig == SIGINT    ? "SIGINT"
                     : sig == SIGTERM ? "SIGTERM"
                     : sig == SIGHUP  ? "SIGHUP"
                                      : "a signal";
  const std::string msg = fmt::format(
      "rebalance-sim: interrupted by {}{}\n", name,
      removed ? "; the outputs in progress were removed, the previous ones are intact" : "");
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, msg.data(), msg.size());
  ::_exit(128 + sig);
}

}  // namespace

void install_interrupt_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    ::signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread(take_interrupts, set).detach();
  });
}

}  // namespace rsim::cli
