// The share view of report.html (KIP-932 share groups): for every share-partition, its in-flight
// window (SPSO and SPEO) and how many of its records are AVAILABLE, ACQUIRED, ACKNOWLEDGED and
// ARCHIVED over time. A pure function of the trace (`share.window` and `share.records` events);
// series are thinned to one point per pixel column so that long runs stay small.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace reports {

struct ShareWindowPoint {
  std::int64_t t_us = 0;
  std::int64_t spso = 0;
  std::int64_t speo = 0;
  std::int64_t in_flight = 0;
};

/// Records of one share-partition by state at one time: AVAILABLE and ACQUIRED are the records
/// in the window now; ACKNOWLEDGED and ARCHIVED count every record that ever reached them.
struct ShareStatePoint {
  std::int64_t t_us = 0;
  std::int64_t available = 0;
  std::int64_t acquired = 0;
  std::int64_t acknowledged = 0;
  std::int64_t archived = 0;
};

struct SharePartitionSeries {
  std::string group;
  std::string partition;
  std::vector<ShareWindowPoint> window;  // at every SPSO/SPEO move (thinned)
  std::vector<ShareStatePoint> states;   // after every state change (thinned)
};

struct ShareView {
  std::string protocol;
  std::int64_t duration_us = 0;
  std::vector<SharePartitionSeries> partitions;  // by group, then partition as Kafka sorts them
};

/// Reads one variant's trace; no share-partition events gives an empty `partitions`.
ShareView build_share_view(std::string_view trace_jsonl, const std::string& protocol);

/// The report's "Share groups" section (one SVG per share-partition, class "share-window"), or
/// "" when no variant has a share-partition.
std::string render_share_section(const std::vector<ShareView>& views);

}  // namespace reports
