// `describe` for share groups: the tables of `kafka-share-groups.sh --describe` (Kafka's
// ShareGroupCommand: offsets GROUP TOPIC PARTITION START-OFFSET LAG, --members, --state, each
// with --verbose), computed from a `share` run's trace up to a virtual time. START-OFFSET and LAG
// come from the share coordinator's persisted state, as ReadShareGroupStateSummary returns it
// (lag = log end offset - start offset - delivery complete count).
#pragma once
#include <string>
#include <vector>

#include "reports/analyses/inspect.hpp"

namespace rsim::inspect {

DescribeOutput describe_share_groups(const std::vector<std::string>& trace_lines,
                                     const DescribeOptions& options);

/// The records of one __share_group_state partition, one per line, in the style of
/// `kafka-dump-log.sh --share-group-state-decoder` (offset, key, payload).
std::vector<std::string> dump_share_state_partition(const std::vector<std::string>& trace_lines,
                                                    std::int32_t partition);

}  // namespace rsim::inspect
