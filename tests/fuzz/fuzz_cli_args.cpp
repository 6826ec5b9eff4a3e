// libFuzzer target: the command-line parser (every subcommand's options and validators). The
// input is the argument list, NUL-separated; only parsing runs (no command executes). Usage errors
// must come back as exit 2; a crash, an uncaught exception or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/cli/cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"rebalance-sim"};
  std::string current;
  for (std::size_t i = 0; i < size && args.size() < 64; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  if (!current.empty()) args.push_back(current);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = rsim::cli::parse_arguments(static_cast<int>(args.size()), argv.data());
  if (rc != 0 && rc != 2) __builtin_trap();  // only "fine" or "usage error"
  return 0;
}
