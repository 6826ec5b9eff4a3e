// SIM_ASSERT: always-on checks of the simulator's own invariants. A failure is our bug, not bad
// input: it throws InvariantViolation, which the CLI reports with file:line and exits 3.
#pragma once
#include <stdexcept>
#include <string>

namespace sim {

class InvariantViolation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void assertion_failed(const char* expr, const char* file, int line,
                                   const std::string& detail);

}  // namespace sim

#define SIM_ASSERT(cond)                                                 \
  do {                                                                   \
    if (!(cond)) ::sim::assertion_failed(#cond, __FILE__, __LINE__, {}); \
  } while (false)

#define SIM_ASSERT_MSG(cond, detail)                                         \
  do {                                                                       \
    if (!(cond)) ::sim::assertion_failed(#cond, __FILE__, __LINE__, detail); \
  } while (false)
