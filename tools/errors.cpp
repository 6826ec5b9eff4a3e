#include "tools/errors.hpp"

#include <iostream>

#include <fmt/format.h>

#include "models/scenario/scenario.hpp"
#include "sim/assert.hpp"
#include "sim/kernel.hpp"
#include "tools/exit_codes.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

int report_error(std::exception_ptr error, const std::string& scenario,
                 std::optional<std::uint64_t> seed) {
  try {
    std::rethrow_exception(error);
  } catch (const ScenarioError& e) {
    std::cerr << e.what() << "\n";
    return kBadInput;
  } catch (const BadInput& e) {
    std::cerr << e.what() << "\n";
    return kBadInput;
  } catch (const OutputError& e) {
    std::cerr << "rebalance-sim: " << one_line(e.what()) << "\n";
    return kBadInput;
  } catch (const sim::WatchdogTripped& e) {
    std::cerr << "rebalance-sim: " << one_line(e.what())
              << fmt::format(" [scenario {}]", one_line(scenario)) << "\n";
    return kBadInput;
  } catch (const sim::InvariantViolation& e) {
    std::cerr << "rebalance-sim: internal error (a model invariant broke; please report): "
              << e.what()
              << fmt::format(" [scenario {}, seed {}]", scenario,
                             seed ? std::to_string(*seed) : "from scenario")
              << "\n";
    return kInternalError;
  } catch (const std::exception& e) {
    std::cerr << "rebalance-sim: internal error: " << e.what() << "\n";
    return kInternalError;
  }
}

}  // namespace rsim::cli
