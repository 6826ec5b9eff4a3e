// The trace boundary of the coordinators' typed records (models/protocol/group_records.hpp): a
// record's members as a `record` event writes them after its partition and offset ("record",
// "tombstone", "group", then the record's own fields, as docs/scenario-format.md lists them),
// and the record a `record` line of trace.jsonl holds, read back.
#pragma once
#include <nlohmann/json.hpp>

#include "models/protocol/group_records.hpp"

namespace rsim::trace {

/// The record as the members of a JSON object, in the trace's order.
nlohmann::ordered_json record_json(const records::GroupRecord& record);

/// The record a JSON object holds (a `record` trace line, or record_json()'s output): the
/// fields replay reads; other members (type, at, partition, offset) are ignored. Throws
/// std::runtime_error (or nlohmann::json::exception) on an unknown record type or a missing or
/// mistyped field.
records::GroupRecord record_from_json(const nlohmann::json& j);
records::GroupRecord record_from_json(const nlohmann::ordered_json& j);

}  // namespace rsim::trace
