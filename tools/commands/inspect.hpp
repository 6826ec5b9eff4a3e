// The `dump-log` and `describe` subcommands: run a scenario (to its end, or to --at), then print
// Kafka's views of it from the trace (tools/inspect.hpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace rsim::cli {

struct InspectArgs {
  std::string scenario;
  std::string protocol;  // default: the scenario's first protocol
  std::optional<std::uint64_t> seed;
  std::int32_t partition = -1;  // dump-log
  std::int64_t at_ms = -1;      // describe
  std::string group;            // describe: one group (default: every group of the scenario)
  bool state = false, members = false, offsets = false, verbose = false;
  bool share_group_state = false;  // dump-log: __share_group_state instead of __consumer_offsets
};

CLI::App* add_dump_log_subcommand(CLI::App& app, InspectArgs& args);
CLI::App* add_describe_subcommand(CLI::App& app, InspectArgs& args);
int cmd_dump_log(const InspectArgs& args);
int cmd_describe(const InspectArgs& args);

}  // namespace rsim::cli
