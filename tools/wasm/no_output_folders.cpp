// The WebAssembly build has no output folders: the page runs with RunOptions::staged null and
// keeps each trace in memory (tools/wasm/playground.cpp), so tools/runner.cpp never opens an
// OutputFile or writes into a StagedOutput there. tools/staged_output.cpp (Linux's renameat2,
// fsync, locks, a signal thread) is not compiled; these definitions satisfy the linker and refuse
// loudly if that ever changes.
#include <stdexcept>

#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace {
[[noreturn]] void no_files() {
  throw std::logic_error("the playground writes no files (RunOptions::staged must be null)");
}
}  // namespace

OutputFile::OutputFile(std::filesystem::path) {
  no_files();
}
OutputFile::~OutputFile() = default;
void OutputFile::append(std::string_view) {
  no_files();
}
void OutputFile::close() {
  no_files();
}
std::filesystem::path StagedOutput::staged(const std::filesystem::path&) {
  no_files();
}
void StagedOutput::write_file(const std::filesystem::path&, std::string_view) {
  no_files();
}
OutputError StagedOutput::retold(const OutputError&) const {
  no_files();
}

}  // namespace rsim::cli
