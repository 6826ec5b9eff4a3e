// The error choke point of the command line: every exception a command lets out is reported here,
// on stderr, with the exit code it stands for (tools/exit_codes.hpp).
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>

namespace rsim::cli {

/// Prints what `error` says (one line per problem) and returns its exit code: bad input, an
/// unwritable output or a tripped watchdog is 2; a broken model invariant or any other exception is
/// 3 (our bug). `scenario` and `seed` name the run in the messages that need them.
int report_error(std::exception_ptr error, const std::string& scenario,
                 std::optional<std::uint64_t> seed);

}  // namespace rsim::cli
