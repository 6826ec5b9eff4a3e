// The trace boundary of the coordinators' typed records (models/protocol/group_records.hpp): a
// record's members as a `record` event writes them after its partition and offset ("record",
// "tombstone", "group", then the record's own fields, as docs/scenario-format.md lists them),
// and the record a `record` line of trace.jsonl holds, read back. Also the typed group snapshots
// and leader moves (models/protocol/group_snapshots.hpp) as their trace events write them.
#pragma once
#include <nlohmann/json.hpp>

#include "models/protocol/group_records.hpp"
#include "models/protocol/group_snapshots.hpp"
#include "models/trace/trace_events.hpp"

namespace rsim::trace {

/// The record as the members of a JSON object, in the trace's order.
nlohmann::ordered_json record_json(const records::GroupRecord& record);

/// The record a JSON object holds (a `record` trace line, or record_json()'s output): the
/// fields replay reads; other members (type, at, partition, offset) are ignored. Throws
/// std::runtime_error (or nlohmann::json::exception) on an unknown record type or a missing or
/// mistyped field.
records::GroupRecord record_from_json(const nlohmann::json& j);
records::GroupRecord record_from_json(const nlohmann::ordered_json& j);

/// Publishes the `record` event of `record`, stored at `offset` of __consumer_offsets partition
/// `partition`: the record's one conversion to JSON (its members as record_json() writes them).
inline void publish_record(Tracer& tracer, std::int32_t partition, std::int64_t offset,
                           const records::GroupRecord& record) {
  const nlohmann::ordered_json traced = record_json(record);
  tracer.publish(Record{.partition = partition, .offset = offset, .value = {&traced}});
}

/// The `groups` of coordinator.loaded / coordinator.unloaded: an array of the groups' snapshots.
nlohmann::ordered_json snapshots_json(const GroupSnapshots& groups);
/// The `leaders` of partition.leaders / consumer.leaders: {"orders-0": broker or null}.
nlohmann::ordered_json leaders_json(const LeaderMoves& moves);

}  // namespace rsim::trace
