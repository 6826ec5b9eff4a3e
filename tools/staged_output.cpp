#include "tools/staged_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace rsim::cli {

namespace fs = std::filesystem;

namespace {

std::string errno_text(int e) { return std::strerror(e); }

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

}  // namespace

OutputError::OutputError(const fs::path& path, const std::string& reason)
    : std::runtime_error(fmt::format("cannot write {}: {}", path.string(), reason)) {}

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

StagedOutput::StagedOutput(fs::path target) : target_(std::move(target)) {
  if (target_.empty()) target_ = ".";
  std::error_code ec;
  if (fs::exists(target_, ec) && !fs::is_directory(target_, ec))
    throw OutputError(target_, "exists and is not a folder");
  created_target_ = !fs::exists(target_, ec);
  make_dirs(target_);
  // Inside the target (hidden), on the same file system, so that rename() moves without copying.
  staging_ = target_ / fmt::format(".rebalance-sim-staging-{}", ::getpid());
  fs::remove_all(staging_, ec);
  try {
    make_dirs(staging_);
  } catch (...) {
    if (created_target_) fs::remove(target_, ec);
    throw;
  }
}

StagedOutput::~StagedOutput() {
  std::error_code ec;
  fs::remove_all(staging_, ec);
  // A folder this run created and filled with nothing goes too (remove() keeps a non-empty one).
  if (!committed_ && created_target_) fs::remove(target_, ec);
}

fs::path StagedOutput::staged(const fs::path& relative) {
  const fs::path top = *relative.begin();
  if (std::find(entries_.begin(), entries_.end(), top) == entries_.end()) entries_.push_back(top);
  const fs::path p = staging_ / relative;
  make_dirs(p.parent_path());
  return p;
}

void StagedOutput::write_file(const fs::path& relative, std::string_view bytes) {
  OutputFile f(staged(relative));
  f.append(bytes);
  f.close();
}

void StagedOutput::commit() {
  // Every staged folder is synced before anything moves.
  for (const auto& top : entries_) {
    const fs::path p = staging_ / top;
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_directory()) fsync_dir(e.path());
      fsync_dir(p);
    }
  }
  fsync_dir(staging_);
  for (const auto& top : entries_) {
    const fs::path final_path = target_ / top;
    std::error_code ec;
    fs::remove_all(final_path, ec);
    if (ec) throw OutputError(final_path, ec.message());
    fs::rename(staging_ / top, final_path, ec);
    if (ec) throw OutputError(final_path, ec.message());
  }
  fsync_dir(target_);
  committed_ = true;
}

void write_file_atomically(const fs::path& path, std::string_view bytes) {
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw OutputError(path, "is a folder");
  const fs::path temp = dir / fmt::format(".{}.rebalance-sim-{}", path.filename().string(), ::getpid());
  try {
    OutputFile f(temp);
    f.append(bytes);
    f.close();
    fs::rename(temp, path, ec);
    if (ec) throw OutputError(path, ec.message());
    fsync_dir(dir);
  } catch (const OutputError& e) {
    fs::remove(temp, ec);
    // The message names the file asked for, not the temporary one beside it.
    const std::string what = e.what();
    const auto colon = what.rfind(": ");
    throw OutputError(path, colon == std::string::npos ? what : what.substr(colon + 2));
  }
}

void write_file_atomically_in(const fs::path& dir, const std::string& name, std::string_view bytes) {
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

}  // namespace rsim::cli
