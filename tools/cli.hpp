// The rebalance-sim command line: run, check, validate, bench. Exit codes as the contract
// fixes them: 0 success, 1 an expectation failed, 2 bad input or usage, 3 internal error.
#pragma once

namespace rsim::cli {

int main(int argc, char** argv);

}  // namespace rsim::cli
