// The exit codes of rebalance-sim, as the contract fixes them (docs/cli.md), and the one kind of
// refusal a command raises instead of printing an error itself. Every command returns one of these
// codes or throws; tools/errors.cpp (report_error) is the one place that turns an exception into a
// message on stderr and an exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace rsim::cli {

constexpr int kOk = 0;                 // success
constexpr int kExpectationFailed = 1;  // an expectation, invariant or comparison failed
constexpr int kBadInput = 2;           // bad input or usage: the message says what and where
constexpr int kInternalError = 3;      // our own bug (a model invariant broke, two runs differed)

/// Bad input found by a command after parsing (a missing recorded run, a conflicting option): its
/// message (one or more lines, no trailing newline) is printed as it is, and the exit code is 2.
class BadInput : public std::runtime_error {
 public:
  explicit BadInput(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace rsim::cli
