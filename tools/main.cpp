#include <cstdlib>
#include <cstring>

#include "models/client/async_consumer.hpp"
#include "tools/cli.hpp"

int main(int argc, char** argv) {
  // A developer's check, not an option of the tool: every quiet poll() pass of the KIP-848
  // client also runs the full pass and compares (see AsyncConsumer::check_quiet_passes).
  if (const char* check = std::getenv("RSIM_CHECK_QUIET_PASSES"); check != nullptr && std::strcmp(check, "1") == 0)
    rsim::AsyncConsumer::check_quiet_passes(true);
  return rsim::cli::main(argc, argv);
}
