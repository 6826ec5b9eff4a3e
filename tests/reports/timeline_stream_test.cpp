// The timeline read from a stream, one line at a time: the same model as from the whole text, the
// high-volume lines read without a json parse giving what a full parse gives, and a bounded number
// of per-partition lag series kept however many partitions are sampled.
#include <doctest/doctest.h>

#include <sstream>

#include <fmt/format.h>

#include "reports/html_report.hpp"
#include "reports/ordered_parse.hpp"
#include "reports/perfetto.hpp"
#include "reports/timeline.hpp"
#include "trace_helpers.hpp"

namespace {

std::string text_of(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// Every field a renderer reads, in one string, so that two timelines compare in one CHECK.
std::string fingerprint(const reports::Timeline& t) {
  std::string out =
      fmt::format("{} {} {} lag_series={}\n", t.scenario, t.protocol, t.duration_us, t.lag_series);
  for (const auto& p : t.partitions) out += p + ",";
  out += "\n";
  for (const auto& l : t.lanes) {
    out += fmt::format("lane {} {}\n", l.consumer, l.group);
    for (const auto& o : l.owned)
      out += fmt::format(" own {} {} {}\n", o.start_us, o.end_us, fmt::join(o.partitions, ","));
    for (const auto& s : l.spans)
      out += fmt::format(" span {} {} {} {}\n", s.start_us, s.end_us, s.kind, s.label);
    for (const auto& i : l.instants)
      out += fmt::format(" instant {} {} {}\n", i.t_us, i.kind, i.label);
  }
  for (const auto& g : t.groups) {
    out += "group " + g.group + "\n";
    for (const auto& s : g.segments)
      out += fmt::format(" seg {} {} {} {}\n", s.start_us, s.end_us, s.state, s.label);
    for (const auto& e : g.epochs) out += fmt::format(" epoch {} {}\n", e.t_us, e.label);
  }
  for (const auto& m : t.messages)
    out += fmt::format("msg {} {} {} {} {} {} {}\n", m.send_us, m.recv_us, m.client, m.server,
                       m.api, m.error, m.detail);
  for (std::size_t p = 0; p < t.lag.size(); ++p)
    for (const auto& pt : t.lag[p]) out += fmt::format("lag {} {} {}\n", p, pt.t_us, pt.lag);
  for (const auto& pt : t.total_lag) out += fmt::format("total {} {}\n", pt.t_us, pt.lag);
  return out;
}

// The same trace in a form the fast reader declines (a space after each line's opening brace):
// every line goes through the full json parse.
std::string spaced(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "{ " + l.substr(1) + "\n";
  return out;
}

}  // namespace

TEST_CASE(
    "timeline stream: a run's trace read line by line, read whole and parsed in full give one "
    "model") {
  for (const char* variant : {"classic-cooperative", "consumer"}) {
    CAPTURE(variant);
    const auto spec = testing::load_ideal("scenarios/examples/two-consumers.json");
    const auto run = rsim::run_scenario(spec, variant, spec.seed);
    const nlohmann::ordered_json summary =
        nlohmann::ordered_json::parse(testing::summary_of(run.trace_lines).dump());
    const std::string text = text_of(run.trace_lines);
    const auto whole = reports::build_timeline(std::string_view(text), summary);
    std::istringstream in(text);
    const auto streamed = reports::build_timeline(in, summary);
    const auto parsed = reports::build_timeline(std::string_view(spaced(run.trace_lines)), summary);
    // The run has processed batches, lag samples and rpcs, the lines read without a parse.
    REQUIRE(whole.total_lag.size() > 10);
    REQUIRE(!whole.lanes.empty());
    REQUIRE(!whole.lanes[0].spans.empty());
    CHECK(fingerprint(streamed) == fingerprint(whole));
    CHECK(fingerprint(parsed) == fingerprint(whole));
  }
}

TEST_CASE("timeline stream: a malformed line is still named by its number") {
  std::istringstream in(
      R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"consumer","seed":1,"duration_ms":3})"
      "\n\n"
      R"({"t_us":5,"type":"lag","group":"g","partition":"t-0","lag":)"
      "\n");
  CHECK_THROWS_WITH_AS(reports::build_timeline(in, nlohmann::ordered_json::object()),
                       doctest::Contains("trace.jsonl line 3: not valid json"), std::runtime_error);
}

TEST_CASE(
    "timeline stream: of 100 sampled partitions the first 64 in partition order keep their "
    "series") {
  // Samples arrive in reverse partition order, so the kept set has to give way 36 times.
  std::vector<std::string> lines{
      R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"consumer","seed":1,"duration_ms":3000})"};
  for (int second = 1; second <= 2; ++second)
    for (int p = 99; p >= 0; --p)
      lines.push_back(fmt::format(
          R"({{"t_us":{},"type":"lag","group":"g","partition":"t-{}","lag":{},"owner":null,"reason":"sample"}})",
          second * 1'000'000, p, p + second));
  const auto tl =
      reports::build_timeline(std::string_view(text_of(lines)), nlohmann::ordered_json::object());
  REQUIRE(tl.partitions.size() == 100);
  CHECK(tl.partitions[10] == "t-10");  // partition order: by number, not as text
  CHECK(tl.lag_series == 100);
  for (std::size_t p = 0; p < 100; ++p) {
    CAPTURE(p);
    if (p < reports::kLagSeriesKept) {
      REQUIRE(tl.lag[p].size() == 2);
      CHECK(tl.lag[p][0].t_us == 1'000'000);
      CHECK(tl.lag[p][0].lag == static_cast<std::int64_t>(p) + 1);
      CHECK(tl.lag[p][1].lag == static_cast<std::int64_t>(p) + 2);
    } else {
      CHECK(tl.lag[p].empty());
    }
  }
  // The totals still count every partition: sum(p+1) and sum(p+2) over p < 100.
  REQUIRE(tl.total_lag.size() == 2);
  CHECK(tl.total_lag[0].lag == 5050);
  CHECK(tl.total_lag[1].lag == 5150);
  // report.html draws per-partition lines only up to 24 series: here the total alone.
  const std::string html = reports::render_html_report({tl}, {});
  CHECK(html.find("lag of t-0 ") == std::string::npos);
  CHECK(html.find("total lag (max 5150)") != std::string::npos);
  // perfetto.json draws the first 64 partitions' counters: t-63 is there, t-64 is not.
  const std::string perfetto = reports::render_perfetto(tl);
  CHECK(perfetto.find("\"lag t-63\"") != std::string::npos);
  CHECK(perfetto.find("\"lag t-64\"") == std::string::npos);
}

TEST_CASE(
    "parse_ordered: the value ordered_json::parse gives, keys in their order, a repeated key as "
    "parse keeps it") {
  std::string big = R"({"assigned":{)";
  for (int i = 40; i >= 0; --i) big += fmt::format(R"({}"c{}":["t-{}"])", i == 40 ? "" : ",", i, i);
  big += R"(,"c7":["again"]},"n":1.5,"u":18446744073709551615,"i":-3,"b":true,"z":null,"s":"x\"y",)"
         R"("small":{"a":1,"b":2,"a":3},"arr":[{"k":[]},[],{}]})";
  const auto fast = reports::parse_ordered(big);
  const auto slow = nlohmann::ordered_json::parse(big);
  CHECK(fast == slow);
  CHECK(fast.dump() == slow.dump());
  CHECK(fast["assigned"].begin().key() == "c40");
  CHECK(fast["assigned"]["c7"] == nlohmann::ordered_json::array({"again"}));
  CHECK(fast["small"].dump() == R"({"a":3,"b":2})");
  CHECK_THROWS_AS(reports::parse_ordered(R"({"a":)"), nlohmann::json::parse_error);
}

TEST_CASE(
    "timeline stream: a line the fast reader would pass is still rejected when a parse rejects "
    "it") {
  const std::string start =
      R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"consumer","seed":1,"duration_ms":3})";
  for (const std::string bad : {
           R"({"t_us":1,"type":"lag","group":"g","partition":"t-0","lag":01})",  // a leading zero
           R"({"t_us":1,"type":"position","consumer":"c","offsets":[1,,2]})",    // an empty element
           R"({"t_us":1,"type":"record","tombstone":tru})",                      // not a literal
           R"({"t_us":1,"type":"lag","group":"g","partition":"t-0","lag":1e999})",  // out of a
                                                                                    // double's
                                                                                    // range
           "{\"t_us\":1,\"type\":\"records.processed\",\"consumer\":\"c\tx\",\"batch\":1}",  // a
                                                                                             // raw
                                                                                             // tab
           R"({"t_us":1,"type":"rpc","api":"Fetch","id":"\q"})",  // an unknown escape
       }) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(reports::build_timeline(std::string_view(start + "\n" + bad + "\n"),
                                                 nlohmann::ordered_json::object()),
                         doctest::Contains("trace.jsonl line 2: not valid json"),
                         std::runtime_error);
  }
  // Valid lines in forms the fast reader leaves to the parse: a fraction, an escape, a space.
  const auto tl = reports::build_timeline(
      std::string_view(
          start + "\n" +
          R"({"t_us":1000,"type":"lag","group":"g","partition":"t-\u0030","lag":2.5})" + "\n" +
          R"({"t_us":1000, "type":"lag","group":"g","partition":"t-1","lag":4})" + "\n"),
      nlohmann::ordered_json::object());
  REQUIRE(tl.total_lag.size() == 1);
  CHECK(tl.total_lag[0].lag == 6);  // 2.5 read as 2 (as num() truncates), plus 4
  CHECK(tl.partitions == std::vector<std::string>{"t-0", "t-1"});
}
