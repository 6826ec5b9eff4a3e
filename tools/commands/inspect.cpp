#include "tools/commands/inspect.hpp"

#include <iostream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "models/coordinator/group_coordinator.hpp"
#include "models/protocol/config.hpp"
#include "models/scenario/scenario.hpp"
#include "models/scenario/world.hpp"
#include "models/trace/trace_jsonl.hpp"
#include "reports/analyses/inspect.hpp"
#include "reports/analyses/share_inspect.hpp"
#include "tools/cli_args.hpp"
#include "tools/exit_codes.hpp"

namespace rsim::cli {

namespace {

/// Keeps, as trace.jsonl lines, only the log records (`record`, or `share_state.record`) of one
/// partition of __consumer_offsets (or __share_group_state): the full log dump-log prints, read
/// from the streamed trace (the coordinator keeps only its compacted state).
class PartitionRecordsSink final : public TraceSink {
 public:
  /// `share_state`: the __share_group_state records (all of them), else the __consumer_offsets
  /// records of `partition`.
  PartitionRecordsSink(std::int32_t partition, bool share_state)
      : partition_(partition), share_state_(share_state) {}
  void on_event(sim::SimTime t, const trace::Event& e) override {
    const auto* r = std::get_if<trace::Record>(&e);
    const bool wanted = share_state_ ? std::holds_alternative<trace::ShareStateRecord>(e)
                                     : r != nullptr && r->partition == partition_;
    if (!wanted) return;
    std::string line;
    trace::append_jsonl(line, t, e);
    lines_.push_back(std::move(line));
  }
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  std::int32_t partition_;
  bool share_state_;
  std::vector<std::string> lines_;
};

std::string chosen_protocol(const ScenarioSpec& spec, const std::string& asked) {
  const std::string protocol = asked.empty() ? spec.protocols.front() : asked;
  if (std::find(protocol_variants().begin(), protocol_variants().end(), protocol) ==
      protocol_variants().end())
    throw ScenarioError(spec.source_path,
                        {fmt::format("--protocol: unknown variant \"{}\"; valid variants: {}",
                                     protocol, fmt::join(protocol_variants(), ", "))});
  const auto problems = unsupported_features(spec, protocol);
  if (!problems.empty()) throw ScenarioError(spec.source_path, problems);
  return protocol;
}

/// The options every inspection command shares: the run to inspect.
void add_run_options(CLI::App* c, InspectArgs& args) {
  c->add_option("--protocol", args.protocol, "protocol variant (default: the scenario's first)");
  c->add_option("--seed", args.seed, "random seed (default: the scenario's `seed`)")
      ->check(non_negative_integer(UINT64_MAX));
}

}  // namespace

CLI::App* add_dump_log_subcommand(CLI::App& app, InspectArgs& args) {
  auto* c = app.add_subcommand("dump-log",
                               "run a scenario and print one __consumer_offsets partition, decoded "
                               "(kafka-dump-log.sh --offsets-decoder)");
  c->add_option("scenario", args.scenario, "scenario file (JSON)")->required();
  c->add_option("--partition", args.partition, "the __consumer_offsets partition")
      ->required()
      ->check(non_negative_integer(INT32_MAX));
  c->add_flag("--share-group-state", args.share_group_state,
              "print the __share_group_state partition instead (kafka-dump-log.sh "
              "--share-group-state-decoder), for share runs");
  add_run_options(c, args);
  c->footer("Example: rebalance-sim dump-log scenarios/examples/two-consumers.json --partition 18");
  return c;
}

CLI::App* add_describe_subcommand(CLI::App& app, InspectArgs& args) {
  auto* c = app.add_subcommand("describe",
                               "run a scenario to a virtual time and print "
                               "kafka-consumer-groups.sh --describe for its groups");
  c->add_option("scenario", args.scenario, "scenario file (JSON)")->required();
  c->add_option("--at", args.at_ms, "virtual time in ms")
      ->required()
      ->check(non_negative_integer(INT64_MAX / 1000));
  c->add_option("--group", args.group, "one group (default: every group of the scenario, sorted)");
  auto* state = c->add_flag(
      "--state", args.state,
      "the group's state (GROUP, COORDINATOR (ID), ASSIGNMENT-STRATEGY, STATE, #MEMBERS)");
  auto* members = c->add_flag("--members", args.members, "the group's members");
  auto* offsets = c->add_flag("--offsets", args.offsets,
                              "committed offsets and lag per partition (the default)");
  state->excludes(members)->excludes(offsets);
  members->excludes(offsets);
  c->add_flag("--verbose", args.verbose, "more columns (epochs and assignments with --members)");
  add_run_options(c, args);
  c->footer(
      "Example: rebalance-sim describe scenarios/examples/two-consumers.json --at 12000 --members "
      "--verbose");
  return c;
}

int cmd_dump_log(const InspectArgs& args) {
  const ScenarioSpec spec = load_scenario_file(args.scenario);
  const std::string protocol = chosen_protocol(spec, args.protocol);
  const BrokerConfig broker = resolve_broker_config(spec.cluster);
  const std::int32_t partitions = args.share_group_state
                                      ? broker.share_coordinator_state_topic_num_partitions
                                      : broker.offsets_topic_num_partitions;
  const char* topic = args.share_group_state ? "__share_group_state" : "__consumer_offsets";
  if (args.share_group_state && protocol != "share")
    throw ScenarioError(spec.source_path,
                        {"--share-group-state: only share runs write __share_group_state; add "
                         "--protocol share"});
  if (args.partition >= partitions)
    throw ScenarioError(spec.source_path,
                        {fmt::format("--partition: {} has {} partitions (0..{}), got {}", topic,
                                     partitions, partitions - 1, args.partition)});
  PartitionRecordsSink records(args.partition, args.share_group_state);
  run_scenario(spec, protocol, args.seed.value_or(spec.seed), {&records});
  if (args.share_group_state) {
    for (const auto& line : inspect::dump_share_state_partition(records.lines(), args.partition))
      std::cout << line << "\n";
    return kOk;
  }
  const auto lines = inspect::dump_offsets_partition(records.lines(), args.partition);
  for (const auto& line : lines) std::cout << line << "\n";
  // Only the header: say where each group of the scenario keeps its records instead.
  if (lines.size() <= 2) {
    std::set<std::string> groups;
    for (const auto& c : spec.consumers) groups.insert(c.group);
    std::cerr << fmt::format("note: __consumer_offsets-{} holds no record in this run.",
                             args.partition);
    for (const auto& g : groups)
      std::cerr << fmt::format(" Group \"{}\" uses __consumer_offsets-{} (--partition {}).", g,
                               coordinator_partition(g, partitions),
                               coordinator_partition(g, partitions));
    std::cerr << "\n";
  }
  return kOk;
}

int cmd_describe(const InspectArgs& args) {
  ScenarioSpec spec = load_scenario_file(args.scenario);
  const std::string protocol = chosen_protocol(spec, args.protocol);
  if (args.at_ms > sim::to_ms(spec.duration))
    throw ScenarioError(spec.source_path, {fmt::format("--at: must be <= duration_ms ({}), got {}",
                                                       sim::to_ms(spec.duration), args.at_ms)});
  std::set<std::string> groups;
  for (const auto& c : spec.consumers) groups.insert(c.group);
  if (!args.group.empty() && groups.count(args.group) == 0)
    throw ScenarioError(
        spec.source_path,
        {fmt::format("--group: no consumer of the scenario is in group \"{}\"", args.group)});
  // The run stops at --at: what happened up to then is the same as in a full run.
  spec.duration = sim::ms(args.at_ms);
  const auto run = run_scenario(spec, protocol, args.seed.value_or(spec.seed));
  inspect::DescribeOptions o;
  o.view = args.state     ? inspect::DescribeView::State
           : args.members ? inspect::DescribeView::Members
                          : inspect::DescribeView::Offsets;
  o.verbose = args.verbose;
  o.at_us = sim::ms(args.at_ms).count();
  const BrokerConfig broker = resolve_broker_config(spec.cluster);
  for (const auto& g : groups) {
    if (!args.group.empty() && g != args.group) continue;
    o.groups.push_back(g);
    o.coordinator_of[g] =
        coordinator_partition(g, broker.offsets_topic_num_partitions) % spec.cluster.brokers;
  }
  // kafka-share-groups.sh for share groups, kafka-consumer-groups.sh otherwise.
  const auto out = protocol == "share" ? inspect::describe_share_groups(run.trace_lines, o)
                                       : inspect::describe_groups(run.trace_lines, o);
  std::cerr << out.err;
  std::cout << out.out;
  return kOk;
}

}  // namespace rsim::cli
