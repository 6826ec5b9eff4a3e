// The parts of report.html that make it a lesson (issue 35): the partition view (one row per
// partition, coloured by its owner over time, with the gaps where it is not processed), the
// aggregated views of a large group, the "watch for" notes of a rebalance's critical path, the
// glossary behind the page's tooltips, and readable short sentences. Pure functions of the
// timeline and summary.json, used by reports/html_report.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/html_parts.hpp"
#include "reports/narrative.hpp"
#include "reports/timeline.hpp"

namespace reports::lesson {

/// Above this many consumers a variant also gets the aggregated views (members per state over
/// time, partitions not processed over time) and its final assignment is collapsed.
inline constexpr std::size_t kAggregateAbove = 30;
/// At most this many partitions get a row of their own in the partition view.
inline constexpr std::size_t kMaxPartitionRows = 256;

/// One stretch of a partition's row: owned by lane `owner` (an index into Timeline::lanes; -1:
/// no owner), processed or not (`why` says why not: "no owner", "A revoking", ...).
struct PartitionSegment {
  std::int64_t start_us = 0;
  std::int64_t end_us = 0;
  int owner = -1;
  bool processed = true;
  std::string why;
};

struct PartitionRow {
  std::string partition;                   // "orders-3"
  std::vector<PartitionSegment> segments;  // in time order, not overlapping
  std::string final_owner;  // the consumer that owns it at the end of the run, "" for none
};

/// Every partition of the timeline (Timeline::partitions order), from the lanes' ownership and
/// their spans: an owner's revoking, waiting, callback, stalled, paused and crashed spans are
/// not processed; so is the time between two owners (from the group's first consumer start on).
/// With Timeline::not_processed_exact, the not-processed stretches are exactly the summary's
/// intervals (Timeline::not_processed); the lanes then give only owners and reasons.
std::vector<PartitionRow> partition_rows(const Timeline& tl);

/// The times at which the number of partitions not processed changes, and that number from
/// then on (a step function over the run; starts with {0, 0}).
std::vector<std::pair<std::int64_t, int>> not_processed_steps(
    const std::vector<PartitionRow>& rows);

/// A short "watch for" note of a rebalance, at the time of a step of its critical path.
struct WatchNote {
  std::int64_t t_us = 0;
  std::string cause;  // "heartbeat_wait_ms", ...
  std::string text;
};

/// From summary.json's rebalance entry (`critical_path.steps`): one note per step whose edge
/// took at least 1 ms, or a fifth of the rebalance, in time order; the config that governs it
/// named, with its value where `config` (summary.json's `config`, config_values_of) has it.
std::vector<WatchNote> watch_notes(const nlohmann::ordered_json& rebalance, bool kip848,
                                   const ConfigValues* config = nullptr);

/// The rebalance the step control opens (an index into Timeline::rebalances, below `limit`): the
/// lesson's (summary.json's produced_by.lesson_rebalance_from_ms: the first that starts at or
/// after it), else the longest that is not a start-up (its group's first rebalance), else the
/// longest; ties: the earlier. 0 when there is none.
std::size_t opened_rebalance(const Timeline& tl, std::size_t limit);

/// The glossary's definition of a metric, state, config, API, error or cause; "" when unknown.
std::string_view glossary(std::string_view term);
/// Every glossary term, in the order the page's glossary lists them.
std::vector<std::string_view> glossary_terms();

/// `text` escaped for HTML, with each glossary term in it wrapped in
/// `<abbr class="g" title="...">` (a tooltip).
std::string glossed(std::string_view text);

/// One term with its glossary tooltip (`shown` in place of the term when given); the escaped
/// text alone when the glossary does not know the term.
std::string abbr(std::string_view term, std::string_view shown = {});

/// Times made readable: "2.706736 s" becomes "2.707 s", "10261.454 ms" becomes "10.26 s".
std::string readable_times(std::string_view text);

/// A narrative paragraph as short sentences: split at "; " and ". ", each readable_times'd.
std::vector<std::string> short_sentences(const std::string& paragraph);

/// A stable colour per consumer (its lane index).
std::string owner_colour(int lane);

/// The partition view of one variant (`<svg class="pview" data-variant=...>`): one row per
/// partition (`<g class="prow" data-partition="orders-3" data-final-owner="B">`, each owned
/// stretch a rect with `data-owner`, each gap a hatched rect of class `np`); above
/// kMaxPartitionRows partitions only the count of partitions not processed over time.
void render_partition_view(html::Out o, const Timeline& tl, const std::vector<PartitionRow>& rows,
                           const html::Scale& sc, const std::string& clip_id);

/// The aggregated views of a large group (`<svg class="pview agg">`): members per state over
/// time (one step line per state) and partitions not processed over time.
void render_aggregate_view(html::Out o, const Timeline& tl, const std::vector<PartitionRow>& rows,
                           const html::Scale& sc, const std::string& clip_id);

}  // namespace reports::lesson
