// The visual outputs on the command line: report.html (always) and --format perfetto|mermaid|csv
// for `run` and `report DIR`, and `explain SCENARIO_OR_DIR`. Every file is rendered from the
// variants' trace.jsonl and summary.json text, so `run` and `report` write the same bytes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace rsim::cli {

struct FormatArgs {
  std::vector<std::string> formats;     // perfetto, mermaid, csv (html is always written)
  std::optional<int> rebalance;         // mermaid: which rebalance (1-based)
  std::optional<std::int64_t> from_ms;  // mermaid: a window instead
  std::optional<std::int64_t> to_ms;
  bool force = false;  // report only: read and write a folder without a manifest
};

/// One variant's outputs as text. A trace too large to hold is named by `trace_path` instead
/// (trace_jsonl left empty): report.html reads it one line at a time; the csv and share views
/// read it whole.
struct VariantText {
  std::string protocol;
  std::string trace_jsonl;
  std::string summary_json;
  std::string trace_path;
  std::string summary_path;  // for messages: the summary.json read, when one was read from a folder
};

/// Adds --format, --rebalance, --from and --to to `run` or `report`.
void add_format_options(CLI::App* c, FormatArgs& args);

/// The files to write, as (path relative to the output directory, bytes): report.html and, per
/// variant and format, P/perfetto.json, P/sequence.mmd, P/timeline.csv, P/lag.csv.
/// Throws ScenarioError-like std::invalid_argument for a bad --rebalance.
std::vector<std::pair<std::string, std::string>> render_outputs(std::vector<VariantText> variants,
                                                                const FormatArgs& args);

CLI::App* add_report_subcommand(CLI::App& app, std::string& dir, FormatArgs& args);
int cmd_report(const std::string& dir, const FormatArgs& args);

struct ExplainArgs {
  std::string target;
  std::vector<std::string> protocols;
  std::optional<std::uint64_t> seed;
};
CLI::App* add_explain_subcommand(CLI::App& app, ExplainArgs& args);
int cmd_explain(const ExplainArgs& args);

}  // namespace rsim::cli
