// The rebalance-sim command line: run, check, validate, bench. Exit codes as the contract
// fixes them: 0 success, 1 an expectation failed, 2 bad input or usage, 3 internal error.
#pragma once

namespace rsim::cli {

int main(int argc, char** argv);
/// Parses the arguments as main() does and stops there (no command runs, nothing is printed):
/// 0 for a valid command line, 2 for a usage error. For the CLI's fuzz target.
int parse_arguments(int argc, char** argv);
/// The allocator the binary's malloc resolves to, as `--version` names it (main() sets it
/// before main(argc, argv); default "libc": the C library's, or a sanitizer's in its build).
void set_allocator(const char* name);

}  // namespace rsim::cli
