#include "tools/commands/bench.hpp"

#include <algorithm>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>

#include "models/scenario/variants.hpp"
#include "models/scenario/world.hpp"
#include "tools/bench/bench.hpp"
#include "tools/bench/client_bench.hpp"
#include "tools/bench/scale_bench.hpp"
#include "tools/bench/server_bench.hpp"
#include "tools/exit_codes.hpp"

namespace rsim::cli {

int cmd_bench(const std::string& what, std::uint64_t events, const ScaleArgs& scale) {
  if (what == "scale") {
    std::vector<ScaleSize> sizes;
    try {
      sizes = parse_scale_sizes(scale.sizes);
    } catch (const std::invalid_argument& e) {
      throw BadInput(std::string("rebalance-sim bench scale: ") + e.what());
    }
    for (const auto& protocol : scale.protocols) {
      if (std::find(protocol_variants().begin(), protocol_variants().end(), protocol) ==
              protocol_variants().end() ||
          !variant_supported(protocol)) {
        throw BadInput("rebalance-sim bench scale: --protocol: unknown variant \"" + protocol +
                       "\"");
      }
    }
    if (scale.virtual_ms < 10000) {
      throw BadInput("rebalance-sim bench scale: --virtual-ms: must be >= 10000, got " +
                     std::to_string(scale.virtual_ms));
    }
    if (scale.print_scenario) {
      if (sizes.size() != 1) {
        throw BadInput(fmt::format(
            "rebalance-sim bench scale: --print-scenario prints one size, --sizes gives {}: "
            "give one, e.g. --sizes 1000x10000",
            sizes.size()));
      }
      std::cout << scale_scenario(sizes.front(), scale.protocols, scale.virtual_ms).dump(2) << "\n"
                << std::flush;
      return kOk;
    }
    if (scale.protocols.size() != 1) {
      throw BadInput(fmt::format(
          "rebalance-sim bench scale: --protocol given {} times: the bench runs one protocol "
          "(more than one only with --print-scenario)",
          scale.protocols.size()));
    }
    std::cout << run_scale_bench(sizes, scale.protocols.front(), scale.virtual_ms, scale.trace,
                                 !scale.no_critical_paths)
              << std::flush;
    return kOk;
  }
  if (what == "assignors") {
    std::cout << assignors::run_client_assignor_bench() << "\n"
              << assignors::run_server_assignor_bench() << "\n";
    return kOk;
  }
  if (what == "kernel") {
    const auto r = run_kernel_bench(events, 3);
    std::cout << fmt::format(
        "kernel: {} events; kernel {:.1f} M events/s; bare binary heap {:.1f} M events/s; ratio "
        "{:.2f}\n",
        r.events, r.kernel_events_per_sec / 1e6, r.bare_events_per_sec / 1e6, r.ratio());
    return kOk;
  }
  throw BadInput("rebalance-sim bench: unknown benchmark \"" + what +
                 "\" (try: kernel, assignors, scale)");
}

}  // namespace rsim::cli
