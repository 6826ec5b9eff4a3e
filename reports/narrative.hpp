// The plain-words story of each rebalance ("B joined at 3.121 s; A learned of it from its
// heartbeat at 6.048 s and revoked orders-0..5; ..."), told from the timeline model alone.
// Used by `rebalance-sim explain` and by report.html.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reports/timeline.hpp"

namespace reports {

/// The effective config values the why-sentences quote ("heartbeat.interval.ms=3000"): per
/// consumer name, and the cluster's under "" (key -> value as written, e.g. "3000"). Read from
/// summary.json's `config` (config_values_of); without them a sentence names the key alone.
using ConfigValues = std::map<std::string, std::map<std::string, std::string>>;

/// "key=value" when `config` has the value for `actor` (its own, else the cluster's, else the one
/// every consumer has), else the key: how the why-sentences and the watch notes name a config.
std::string config_quote(const ConfigValues* config, const std::string& actor,
                         const std::string& key);

/// summary.json's `config` (the effective values the causes name: `cluster`, `consumer`,
/// `consumers`) as ConfigValues: the cluster's and the values every consumer shares under "",
/// each consumer's own under its name ("" where its incarnations disagree). Empty without it.
ConfigValues config_values_of(const nlohmann::ordered_json& summary);

/// One paragraph per rebalance, in the order of summary.json's `rebalances`; `config` null: the
/// values of the summary's `config` (config_values_of). `steps`, when given,
/// receives a count of the work done (lanes, instants, spans and rebalances looked at): the
/// bounds tests check that it grows with the timeline, not with rebalances x members.
std::vector<std::string> narrate(const Timeline& timeline, const ConfigValues* config = nullptr,
                                 std::uint64_t* steps = nullptr);

/// Why rebalance `index` (1-based) took as long as it did, from its summary.json entry's
/// `critical_path`: "R2 took 2,009 ms: 2,001 ms A waiting for its next heartbeat
/// (heartbeat.interval.ms=3000), 8 ms network." The dominant cause first, with the config that
/// governs it, and its value when `config` has it ("(heartbeat.interval.ms=3000)": the member's
/// own value, or the cluster's; a consumer key for the coordinator when every consumer has the
/// same value); "" without a critical path.
std::string critical_path_sentence(const nlohmann::ordered_json& rebalance, int index,
                                   const ConfigValues* config = nullptr);

/// The text `explain` prints for one variant: a heading line and the paragraphs.
std::string explain_text(const Timeline& timeline, const ConfigValues* config = nullptr);

}  // namespace reports
