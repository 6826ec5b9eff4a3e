// The exported formats on the hand-written eager trace: Perfetto's required fields and balanced
// spans per track, Mermaid parsed line by line, CSV rows of one width, the HTML report's
// markers, and the same bytes on every render.
#include <doctest/doctest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "report_fixture.hpp"
#include "reports/csv.hpp"
#include "reports/escape.hpp"
#include "reports/html_report.hpp"
#include "reports/mermaid.hpp"
#include "reports/perfetto.hpp"
#include "reports/timeline.hpp"

namespace testing {

/// Checks a Trace Event Format document: every event has name, ph, pid and tid (and ts but
/// metadata); B/E pair up per (pid, tid) in order with ts never going back; async b/e pair
/// up per (cat, id). Returns the problems found.
inline std::vector<std::string> perfetto_problems(const nlohmann::json& doc) {
  std::vector<std::string> problems;
  if (!doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    return {"no traceEvents array"};
  std::map<std::pair<long, long>, std::vector<std::string>> stacks;
  std::map<std::pair<long, long>, long long> last_ts;
  std::map<std::string, long long> async_open;
  for (const auto& e : doc["traceEvents"]) {
    for (const char* k : {"name", "ph", "pid", "tid"})
      if (!e.contains(k)) problems.push_back(std::string("event without ") + k + ": " + e.dump());
    const std::string ph = e.value("ph", "");
    if (ph != "M" && !(e.contains("ts") && e["ts"].is_number_integer()))
      problems.push_back("event without integer ts: " + e.dump());
    const auto track = std::make_pair(e.value("pid", -1L), e.value("tid", -1L));
    if (ph == "B" || ph == "E") {
      const long long ts = e["ts"].get<long long>();
      if (last_ts.count(track) && ts < last_ts[track])
        problems.push_back("B/E going back in time: " + e.dump());
      last_ts[track] = ts;
      auto& stack = stacks[track];
      if (ph == "B")
        stack.push_back(e["name"].get<std::string>());
      else if (stack.empty())
        problems.push_back("E without B: " + e.dump());
      else if (stack.back() != e["name"].get<std::string>())
        problems.push_back("E closes another slice: " + e.dump());
      else
        stack.pop_back();
    } else if (ph == "b" || ph == "e") {
      if (!e.contains("id") || !e.contains("cat")) {
        problems.push_back("async event without id or cat: " + e.dump());
        continue;
      }
      const std::string key = e["cat"].get<std::string>() + "/" + e["id"].get<std::string>();
      if (ph == "b")
        async_open[key] = e["ts"].get<long long>();
      else if (!async_open.count(key))
        problems.push_back("e without b: " + e.dump());
      else if (async_open[key] > e["ts"].get<long long>())
        problems.push_back("e before its b: " + e.dump());
      else
        async_open.erase(key);
    } else if (ph == "C") {
      if (!e.contains("args") || !e["args"].is_object())
        problems.push_back("counter without args: " + e.dump());
    } else if (ph != "i" && ph != "M") {
      problems.push_back("unexpected ph " + ph);
    }
  }
  for (const auto& [track, stack] : stacks)
    if (!stack.empty()) problems.push_back("unclosed B on a track: " + stack.back());
  if (!async_open.empty()) problems.push_back("unclosed async slice " + async_open.begin()->first);
  return problems;
}

/// Parses a Mermaid sequenceDiagram line by line; returns the problems found.
inline std::vector<std::string> mermaid_problems(const std::string& text,
                                                 std::size_t* messages = nullptr) {
  std::vector<std::string> problems;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  if (line != "sequenceDiagram") problems.push_back("first line is not sequenceDiagram: " + line);
  const std::regex participant(R"(^    participant (P\d+) as [^;#]+$)");
  const std::regex message(R"(^    (P\d+)(->>|-->>)(P\d+): [^;#]+$)");
  const std::regex note(R"(^    Note over (P\d+): [^;#]+$)");
  const std::regex comment(R"(^    %%.*$)");
  std::set<std::string> declared;
  std::size_t count = 0;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, participant)) {
      if (count > 0) problems.push_back("participant after the first message: " + line);
      declared.insert(m[1]);
    } else if (std::regex_match(line, m, message)) {
      ++count;
      if (!declared.count(m[1]) || !declared.count(m[3]))
        problems.push_back("undeclared participant: " + line);
    } else if (std::regex_match(line, m, note)) {
      if (!declared.count(m[1])) problems.push_back("note over an undeclared participant: " + line);
    } else if (!std::regex_match(line, comment)) {
      problems.push_back("not a sequenceDiagram statement: " + line);
    }
  }
  if (messages) *messages = count;
  return problems;
}

/// Splits CSV text into rows of cells (RFC 4180 quoting).
inline std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string cell;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        cell += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        cell += c;
    } else if (c == '"')
      quoted = true;
    else if (c == ',')
      rows.back().push_back(cell), cell.clear();
    else if (c == '\n') {
      rows.back().push_back(cell);
      cell.clear();
      rows.emplace_back();
    } else
      cell += c;
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

}  // namespace testing

TEST_CASE("perfetto: required fields, nested B/E per track, paired async slices, lag counters") {
  const auto t = reports::build_timeline(testing::kEagerTrace, testing::eager_summary());
  const std::string out = reports::render_perfetto(t);
  CHECK(out == reports::render_perfetto(t));
  const auto doc = nlohmann::json::parse(out);
  const auto problems = testing::perfetto_problems(doc);
  for (const auto& p : problems) MESSAGE(p);
  CHECK(problems.empty());
  std::set<std::string> names;
  int counters = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M") names.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "C" && e["name"] == "total lag") ++counters;
  }
  CHECK(names.count("consumer A"));
  CHECK(names.count("application thread"));
  CHECK(names.count("heartbeat thread"));
  CHECK(names.count("broker-0 (group coordinator)"));
  CHECK(names.count("group g"));
  CHECK(counters == 2);
  CHECK(out.find("\"name\":\"rebalance R2: member B "
                 "joined\",\"cat\":\"rebalance\",\"ph\":\"b\",\"ts\":3126000") !=
        std::string::npos);
}

TEST_CASE("perfetto: overlapping spans on one thread become async slices, never crossed B/E") {
  // A processing batch that outlives a callback started inside it would cross B/E.
  const std::string trace =
      std::string(testing::kEagerTrace) +
      R"({"t_us":10000000,"type":"records.fetched","consumer":"A","group":"g","batch":1,"count":3,"ranges":[]}
)";
  auto t = reports::build_timeline(trace, testing::eager_summary());
  t.lanes[0].spans.push_back({6'000'000, 6'100'000, "processing", "overlapping batch"});
  const auto problems =
      testing::perfetto_problems(nlohmann::json::parse(reports::render_perfetto(t)));
  for (const auto& p : problems) MESSAGE(p);
  CHECK(problems.empty());
}

TEST_CASE("mermaid: a structurally valid sequenceDiagram of the chosen rebalance or window") {
  const auto t = reports::build_timeline(testing::kEagerTrace, testing::eager_summary());
  const std::string longest = reports::render_mermaid(t, {});
  std::size_t messages = 0;
  auto problems = testing::mermaid_problems(longest, &messages);
  for (const auto& p : problems) MESSAGE(p);
  CHECK(problems.empty());
  // R2's window, B's JoinGroup (3.123 s) to the SyncGroup answers (6.054 s): five round
  // trips (A's Heartbeat, A's and B's JoinGroup and SyncGroup).
  CHECK(messages == 10);
  CHECK(longest.find(
            "    %% rebalance-sim tiny [classic-eager]: rebalance R2 of group g (generation 2)") !=
        std::string::npos);
  CHECK(longest.find("    participant P0 as A\n    participant P1 as B\n    participant P2 as "
                     "broker-0 (coordinator)\n") != std::string::npos);
  CHECK(longest.find("    P1->>P2: 3.123 s JoinGroup\n") != std::string::npos);
  CHECK(longest.find("    P2-->>P0: 6.048 s Heartbeat REBALANCE_IN_PROGRESS\n") !=
        std::string::npos);
  CHECK(longest.find("    Note over P0: 6.050 s onPartitionsRevoked(orders-0..2)\n") !=
        std::string::npos);
  const std::string first = reports::render_mermaid(t, {1, std::nullopt, std::nullopt});
  CHECK(testing::mermaid_problems(first).empty());
  CHECK(first.find("rebalance R1") != std::string::npos);
  const std::string window = reports::render_mermaid(t, {std::nullopt, 6'040'000, 6'050'000});
  CHECK(testing::mermaid_problems(window, &messages).empty());
  CHECK(messages == 3);  // A's heartbeat, its answer, A's JoinGroup
}

TEST_CASE("csv: every row as wide as the header; lag totals per sampling instant") {
  const std::string timeline = reports::render_timeline_csv(testing::kEagerTrace);
  const auto rows = testing::csv_rows(timeline);
  REQUIRE(rows.size() == 1 + 39 - 4);  // the header and every line but the 4 lag samples
  for (const auto& r : rows) CHECK(r.size() == 7);
  CHECK(rows[0] == std::vector<std::string>{"time_ms", "type", "consumer", "group", "partitions",
                                            "epoch", "detail"});
  CHECK(rows[12] == std::vector<std::string>{"1005.000", "assignment", "A", "",
                                             "orders-0 orders-1 orders-2", "", ""});
  CHECK(
      rows[17] ==
      std::vector<std::string>{
          "6048.000", "rpc", "A", "", "", "",
          R"({"dir":"recv","from":"broker-0","to":"A","api":"Heartbeat","id":3,"error":"REBALANCE_IN_PROGRESS"})"});
  const auto lag = testing::csv_rows(reports::render_lag_csv(testing::kEagerTrace));
  REQUIRE(lag.size() == 1 + 4 + 2);
  for (const auto& r : lag) CHECK(r.size() == 8);
  CHECK(lag[3] == std::vector<std::string>{"2000.000", "g", "(total)", "10", "", "", "", ""});
  CHECK(lag[6] == std::vector<std::string>{"7000.000", "g", "(total)", "9", "", "", "", ""});
}

TEST_CASE("html: one lane per consumer, one marker per rebalance, self-contained, same bytes") {
  const auto t = reports::build_timeline(testing::kEagerTrace, testing::eager_summary());
  const std::string html = reports::render_html_report({t});
  CHECK(html == reports::render_html_report({t}));
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto p = html.find(needle); p != std::string::npos; p = html.find(needle, p + 1)) ++n;
    return n;
  };
  CHECK(count("data-consumer=\"A\"") == 1);
  CHECK(count("data-consumer=\"B\"") == 1);
  CHECK(count("class=\"rb\" data-rebalance=") == 2);
  CHECK(
      count(
          "data-rebalance=\"2\" data-variant=\"classic-eager\" data-trigger=\"member B joined\"") ==
      1);
  CHECK(count("http://") ==
        count("http://www.w3.org/2000/svg"));  // no fetch: only the SVG namespace
  CHECK(count("https://") == 0);
  CHECK(count("<script src") == 0);
  CHECK(count("<link") == 0);
  CHECK(count("B started at 3.121 s") == 1);  // the narrative
  CHECK(count("class=\"seq\"") == 2);         // a sequence view per rebalance
}

TEST_CASE("markup_escape: one escaping for the HTML report and the JUnit XML of check") {
  CHECK(reports::markup_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
  CHECK(reports::markup_escape("line 1\nline 2") ==
        "line 1&#10;line 2");  // kept inside an attribute
  CHECK(reports::markup_escape("plain: t-0..3 → B") == "plain: t-0..3 → B");
  CHECK(reports::markup_escape("") == "");
}
