// Kafka's own inspection views, computed from a run's trace alone:
//  - dump_offsets_partition: the records of one __consumer_offsets partition, one per line, as
//    `kafka-dump-log.sh --offsets-decoder` prints them (offset, CreateTime, key, payload);
//  - describe_groups: the tables of `kafka-consumer-groups.sh --describe` (--offsets, the
//    default; --members [--verbose]; --state [--verbose]) for the groups as they stood at a
//    virtual time.
// Both are pure functions of trace lines (trace.jsonl); the CLI runs the scenario first.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rsim::inspect {

/// "Dumping __consumer_offsets-N", "Log starting offset: 0", then one line per record:
/// `| offset: O CreateTime: T key: {...} payload: {...}` (`payload: <DELETE>` for a tombstone).
/// CreateTime is the append time in virtual ms; keySize/valueSize/sequence/headerKeys, which need
/// the serialized bytes, are not printed.
std::vector<std::string> dump_offsets_partition(const std::vector<std::string>& trace_lines,
                                                std::int32_t partition);

enum class DescribeView { Offsets, Members, State };

struct DescribeOptions {
  DescribeView view = DescribeView::Offsets;
  bool verbose = false;
  std::int64_t at_us = INT64_MAX;  // events after this virtual time are ignored
  /// The groups to describe, in the order given (Kafka prints them sorted by group id when
  /// several are asked for; the CLI passes them sorted).
  std::vector<std::string> groups;
  /// The coordinator broker id of each group (COORDINATOR (ID) column).
  std::map<std::string, std::int32_t> coordinator_of;
};

struct DescribeOutput {
  std::string out;  // what kafka-consumer-groups.sh prints on stdout
  std::string err;  // its notes on stderr ("... has no active members.", "... is rebalancing.")
};

DescribeOutput describe_groups(const std::vector<std::string>& trace_lines,
                               const DescribeOptions& options);

/// Kafka's Uuid.toString() of the simulated topic id of `topic` (stable, derived from the name).
std::string simulated_topic_id(const std::string& topic);

}  // namespace rsim::inspect
