// The trace bus and its sinks: the JSON writer writes nlohmann's bytes, trace.jsonl lines read
// back into typed events write the same lines again, the file sink streams through a bounded
// buffer, and the summary accumulated online equals the summary of the trace read back.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "models/trace/trace_jsonl.hpp"
#include "reports/share_summary.hpp"
#include "reports/summary.hpp"
#include "reports/trace_reader.hpp"
#include "trace_helpers.hpp"

namespace {

std::string write(const nlohmann::ordered_json& j) {
  std::string out;
  sim::JsonWriter w(out);
  w.value(j);
  return out;
}

std::string written_string(std::string_view s) {
  std::string out;
  sim::JsonWriter w(out);
  w.value(s);
  return out;
}

const std::vector<std::pair<std::string, std::string>> kRuns{
    {"scenarios/examples/two-consumers.json", "classic-eager"},
    {"scenarios/examples/two-consumers.json", "classic-cooperative"},
    {"scenarios/examples/two-consumers-kip848.json", "consumer"},
    {"scenarios/classic/coordinator-failover.json", "classic-eager"},
    {"scenarios/consumer/coordinator-failover.json", "consumer"},
    {"scenarios/workload/zombie-commit.json", "classic-eager"},
    {"scenarios/classic/network-partition.json", "classic-cooperative"},
    {"scenarios/consumer/slow-revocation-fenced.json", "consumer"},
    {"scenarios/brokers/broker-rolling-bounce.json", "consumer"},
    {"scenarios/brokers/broker-rolling-bounce.json", "classic-cooperative"},
    {"scenarios/library/crash-loop-rebalance-storm.json", "classic-eager"},
    {"scenarios/library/flaky-network.json", "consumer"},
    {"scenarios/share/eight-consumers-one-crash.json", "share"},
    {"scenarios/share/reject-and-release.json", "share"},
    {"scenarios/share/crash-disconnect.json", "share"},
    {"scenarios/share/lock-expiry-network-cut.json", "share"},
    {"scenarios/share/lock-expiry-pause.json", "share"},
    {"scenarios/migration/online-upgrade-and-downgrade.json", "classic-eager"},
    {"scenarios/migration/online-migration-coordinator-failover.json", "classic-cooperative"},
};

}  // namespace

TEST_CASE("the JSON writer escapes strings and writes numbers as nlohmann::json::dump() does") {
  for (const std::string& s :
       {std::string("plain"), std::string("quote \" and \\ backslash"),
        std::string("tab\tnewline\nreturn\rbell\x07 nul", 28), std::string("\x1f\b\f"),
        std::string("caf\xc3\xa9 \xe2\x82\xac"), std::string("\x7f")}) {
    CHECK(written_string(s) == nlohmann::ordered_json(s).dump());
  }
  std::string out;
  sim::JsonWriter w(out);
  w.begin_object();
  w.key("a");
  w.value(std::int64_t{-5});
  w.key("b");
  w.value(std::uint64_t{18446744073709551615ULL});
  w.key("c");
  w.value(1000.0);
  w.key("d");
  w.value(1.0 / 3.0);
  w.key("e");
  w.begin_array();
  w.element();
  w.value(true);
  w.element();
  w.null();
  w.end_array();
  w.end_object();
  nlohmann::ordered_json j;
  j["a"] = -5;
  j["b"] = 18446744073709551615ULL;
  j["c"] = 1000.0;
  j["d"] = 1.0 / 3.0;
  j["e"] = {true, nullptr};
  CHECK(out == j.dump());
  CHECK(write(j) == j.dump());
}

TEST_CASE("typed events are written with their fields in order, optional ones only when set") {
  const rsim::TopicPartitions owned{{"orders", 0}, {"orders", 11}};
  std::string line;
  rsim::trace::append_jsonl(line, sim::ms(5),
                            rsim::trace::Assignment{.consumer = "A", .owned = owned});
  CHECK(line ==
        R"({"t_us":5000,"type":"assignment","consumer":"A","owned":["orders-0","orders-11"]})");
  line.clear();
  rsim::trace::append_jsonl(
      line, sim::SimTime{7},
      rsim::trace::GroupStateChange{.group = "g", .state = "Stable", .generation = 3});
  CHECK(line == R"({"t_us":7,"type":"group.state","group":"g","state":"Stable","generation":3})");
  line.clear();
  rsim::trace::Lag lag{.group = "g",
                       .partition = &owned[1],
                       .lag = 4,
                       .log_end_offset = 10,
                       .offset = 6,
                       .reason = "sample"};
  rsim::trace::append_jsonl(line, sim::SimTime{0}, lag);
  CHECK(
      line ==
      R"({"t_us":0,"type":"lag","group":"g","partition":"orders-11","lag":4,"log_end_offset":10,"offset":6,"owner":null,"reason":"sample"})");
  // The transitional untyped form writes what the old tracer wrote.
  line.clear();
  const nlohmann::ordered_json fields{{"x", 1}, {"y", "z"}};
  rsim::trace::append_jsonl(line, sim::SimTime{3}, sim::RawTraceEvent{"something.new", &fields});
  CHECK(line == R"({"t_us":3,"type":"something.new","x":1,"y":"z"})");
}

TEST_CASE("the hot kinds' direct writers write what dump() writes, names to escape included") {
  // Each line must be the compact dump of itself parsed back (so: valid, escaped as nlohmann
  // escapes, members in order), and lines are appended after what the buffer already holds.
  namespace tr = rsim::trace;
  const rsim::TopicPartitions tps{{"t", 0}, {"q\"t", 12}};
  const std::vector<rsim::FetchedRange> ranges{{tps[0], 0, 4}, {tps[1], 5, 5}};
  const std::vector<rsim::CommittedOffset> offsets{{tps[0], 5, -1}, {tps[1], 6, -1}};
  nlohmann::ordered_json flat{{"record", "OffsetCommit"},
                              {"tombstone", false},
                              {"group", "g"},
                              {"committed_offset", 5},
                              {"hash", 18446744073709551615ULL},
                              {"x", nullptr}};
  nlohmann::ordered_json nested{{"record", "Meta"}, {"topics", {"t"}}, {"rate", 0.5}};
  nlohmann::ordered_json escaped{{"group", "g\n"}};
  const std::vector<tr::Event> events{
      tr::Lag{.group = "g",
              .partition = &tps[0],
              .lag = 1,
              .log_end_offset = 5,
              .offset = 4,
              .owner = {"c3"},
              .reason = "sample"},
      tr::Lag{
          .group = "g\\", .partition = &tps[1], .lag = -1, .owner = {"c\x01"}, .reason = "sample"},
      tr::RecordsFetched{.consumer = "c0", .group = "g", .batch = 1, .count = 6, .ranges = ranges},
      tr::RecordsFetched{.consumer = "c0", .group = "g", .batch = 2, .count = 0},
      tr::RecordsProcessed{.consumer = "c\"0", .group = "g", .batch = 1, .count = 6},
      tr::Commit{.consumer = "c0",
                 .group = "g",
                 .phase = "sent",
                 .purpose = "auto-commit",
                 .generation = 3,
                 .offsets = offsets},
      tr::Commit{.consumer = "c0",
                 .group = "g",
                 .phase = "completed",
                 .purpose = "auto-commit",
                 .error = "NONE"},
      tr::Record{.partition = 3, .offset = 4004, .value = {&flat}},
      tr::Record{.partition = 3, .offset = 1, .value = {&nested}},
      tr::Record{.partition = 3, .offset = 2, .value = {&escaped}},
      tr::Record{.partition = 3, .offset = 3},
      tr::Position{.consumer = "c0",
                   .group = "g",
                   .partition = &tps[0],
                   .offset = 17,
                   .source = "committed",
                   .state = "FETCHING"},
      tr::Position{.consumer = "c\"0", .group = "g", .partition = &tps[1], .source = "reset"},
      tr::Position{.consumer = "c0", .group = "g", .source = "reset"},  // read back: no partition
      tr::Callback{.consumer = "c0",
                   .callback = "onPartitionsAssigned",
                   .partitions = tps,
                   .phase = "start"},
      tr::Callback{.consumer = "c0", .callback = "onPartitionsRevoked", .phase = "end"},
      tr::Assignment{.consumer = "c0", .owned = tr::Partitions(tps.data(), 1)},
      tr::Assignment{.consumer = "c\n", .owned = tps},
  };
  for (const auto& e : events) {
    std::string line = "prefix";
    tr::append_jsonl(line, sim::SimTime{-7}, e);
    CAPTURE(line);
    REQUIRE(line.rfind("prefix", 0) == 0);
    line.erase(0, 6);
    CHECK(nlohmann::ordered_json::parse(line).dump() == line);
  }
  std::string line;
  tr::append_jsonl(line, sim::SimTime{1000000}, events[0]);
  CHECK(
      line ==
      R"({"t_us":1000000,"type":"lag","group":"g","partition":"t-0","lag":1,"log_end_offset":5,"offset":4,"owner":"c3","reason":"sample"})");
  line.clear();
  tr::append_jsonl(line, sim::SimTime{5}, events[5]);
  CHECK(
      line ==
      R"({"t_us":5,"type":"commit","consumer":"c0","group":"g","phase":"sent","purpose":"auto-commit","generation":3,"offsets":{"t-0":5,"q\"t-12":6}})");
  line.clear();
  tr::append_jsonl(line, sim::SimTime{5}, events[3]);
  CHECK(
      line ==
      R"({"t_us":5,"type":"records.fetched","consumer":"c0","group":"g","batch":2,"count":0,"ranges":[]})");
  line.clear();
  tr::append_jsonl(line, sim::SimTime{5}, events[11]);
  CHECK(
      line ==
      R"({"t_us":5,"type":"position","consumer":"c0","group":"g","partition":"t-0","offset":17,"source":"committed","state":"FETCHING"})");
  line.clear();
  tr::append_jsonl(line, sim::SimTime{5}, events[13]);
  CHECK(
      line ==
      R"({"t_us":5,"type":"position","consumer":"c0","group":"g","partition":null,"offset":0,"source":"reset","state":""})");
  line.clear();
  tr::append_jsonl(line, sim::SimTime{5}, events[14]);
  CHECK(
      line ==
      R"({"t_us":5,"type":"callback","consumer":"c0","callback":"onPartitionsAssigned","partitions":["t-0","q\"t-12"],"phase":"start"})");
  line.clear();
  tr::append_jsonl(line, sim::SimTime{5}, events[15]);
  CHECK(
      line ==
      R"({"t_us":5,"type":"callback","consumer":"c0","callback":"onPartitionsRevoked","partitions":[],"phase":"end"})");
  line.clear();
  tr::append_jsonl(line, sim::SimTime{5}, events[16]);
  CHECK(line == R"({"t_us":5,"type":"assignment","consumer":"c0","owned":["t-0"]})");
}

TEST_CASE("every line of example traces reads back into a typed event that writes the same line") {
  for (const auto& entry : kRuns) {
    const auto& path = entry.first;
    const auto& variant = entry.second;
    CAPTURE(path);
    CAPTURE(variant);
    const auto spec = rsim::load_scenario_file(std::string(RSIM_SOURCE_DIR) + "/" + path);
    const auto run = rsim::run_scenario(spec, variant, spec.seed);
    rsim::trace::ReadStorage st;
    std::size_t raw = 0;
    for (const auto& line : run.trace_lines) {
      sim::SimTime t{0};
      const auto e = rsim::trace::parse_jsonl(line, st, t);
      raw += std::holds_alternative<sim::RawTraceEvent>(e) ? 1 : 0;
      std::string again;
      rsim::trace::append_jsonl(again, t, e);
      CHECK(again == line);
    }
    CHECK(raw == 0);  // every kind the models publish is in the vocabulary
  }
}

TEST_CASE("the summary accumulated online equals the summary of its trace.jsonl read back") {
  for (const auto& entry : kRuns) {
    const auto& path = entry.first;
    const auto& variant = entry.second;
    CAPTURE(path);
    CAPTURE(variant);
    const auto spec = rsim::load_scenario_file(std::string(RSIM_SOURCE_DIR) + "/" + path);
    reports::SummaryInputs in;
    in.scenario = spec.name;
    in.protocol = variant;
    in.seed = spec.seed;
    // A window in the middle of the run too (what `expect` entries with from_ms/to_ms read).
    reports::SummaryInputs window = in;
    window.from_us = spec.duration.count() / 4;
    window.to_us = spec.duration.count() / 2;
    reports::SummarySink online(in), online_window(window);
    reports::ShareSummarySink share;
    rsim::trace::JsonlLinesSink lines;
    rsim::run_scenario(spec, variant, spec.seed, {&online, &online_window, &share, &lines});
    auto a = online.finish();
    share.finish(a);
    CHECK(a["metrics"]["rebalance_count"].get<int>() > 0);
    std::stringstream jsonl;
    for (const auto& l : lines.lines()) jsonl << l << '\n';
    auto b = reports::summarize_jsonl(jsonl, in);
    reports::add_share_metrics(lines.lines(), b);
    CHECK(b.dump(2) == a.dump(2));
    auto c = reports::summarize(lines.lines(), in);
    reports::add_share_metrics(lines.lines(), c);
    CHECK(c.dump(2) == a.dump(2));
    CHECK(reports::summarize(lines.lines(), window).dump(2) == online_window.finish().dump(2));
    if (variant == "share") CHECK(a["metrics"].contains("acknowledged"));
  }
}

TEST_CASE("the file sink streams lines to disk through a buffer that never holds the trace") {
  const auto dir = std::filesystem::temp_directory_path() / "rsim-trace-bus-test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "trace.jsonl").string();
  const auto spec = rsim::load_scenario_file(std::string(RSIM_SOURCE_DIR) +
                                             "/scenarios/examples/two-consumers.json");
  rsim::trace::JsonlFileSink file(path, 4096);
  rsim::trace::JsonlLinesSink lines;
  rsim::run_scenario(spec, "classic-eager", spec.seed, {&file, &lines});
  file.close();
  std::string expected;
  for (const auto& l : lines.lines()) expected += l + '\n';
  std::ifstream in(path, std::ios::binary);
  const std::string on_disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(on_disk == expected);
  CHECK(file.file().bytes_written() == expected.size());
  CHECK(expected.size() > 4 * 4096);
  CHECK(file.file().peak_buffered() < 4096 + 4096);  // capacity plus at most one line
  std::filesystem::remove_all(dir);
}

TEST_CASE("watchdog: a trace sink stops a run past its byte bound") {
  sim::Kernel k;
  rsim::Tracer bus(k);
  rsim::trace::JsonlLinesSink lines;
  lines.set_max_bytes(100);
  bus.attach(lines);
  bus.publish(rsim::trace::RunEnd{
      .events = 1});  // {"t_us":0,"type":"run.end","events":1} and its newline: 39 bytes
  CHECK(lines.bytes() == 39);
  CHECK_THROWS_AS(
      for (std::uint64_t i = 0; i < 10; ++i) bus.publish(rsim::trace::RunEnd{.events = i}),
      sim::WatchdogTripped);
  CHECK(lines.bytes() == 117);  // the third line passed 100: counted, then the run stops
}

TEST_CASE(
    "a typed OffsetCommit record writes the bytes of its JSON value, names to escape included") {
  namespace tr = rsim::trace;
  for (const auto& names : std::vector<std::pair<std::string, std::string>>{
           {"g", "orders"}, {"group \"q\"", "t\n1"}, {"", "t"}}) {
    // Named copies, not a structured binding: Clang 14 cannot capture a binding in CAPTURE's
    // lambda.
    const std::string& group = names.first;
    const std::string& topic = names.second;
    CAPTURE(group);
    const tr::OffsetCommitValue typed{.group = group,
                                      .topic = topic,
                                      .partition_index = 2147483647,
                                      .committed_offset = -9223372036854775807LL - 1,
                                      .leader_epoch = -1,
                                      .commit_timestamp = 9223372036854775807LL};
    const nlohmann::ordered_json object{{"record", "OffsetCommit"},
                                        {"tombstone", false},
                                        {"group", group},
                                        {"topic", topic},
                                        {"partition_index", typed.partition_index},
                                        {"committed_offset", typed.committed_offset},
                                        {"leader_epoch", typed.leader_epoch},
                                        {"commit_timestamp", typed.commit_timestamp}};
    std::string a = "prefix", b = "prefix";
    tr::append_jsonl(a, sim::SimTime{-9223372036854775807LL},
                     tr::Record{.partition = 49, .offset = 7, .value = {.commit = &typed}});
    tr::append_jsonl(b, sim::SimTime{-9223372036854775807LL},
                     tr::Record{.partition = 49, .offset = 7, .value = {&object}});
    CHECK(a == b);
    CHECK(nlohmann::ordered_json::parse(a.substr(6)).dump() == a.substr(6));
  }
}

TEST_CASE("the summary finds a consumer's batch by the events' consumer_slot, checked by name") {
  namespace tr = rsim::trace;
  const rsim::TopicPartitions tps{{"t", 0}, {"t", 1}};
  const std::vector<rsim::FetchedRange> r0{{tps[0], 0, 9}}, r1{{tps[1], 0, 4}},
      again{{tps[0], 5, 9}};
  // Slot 3 names "a", then (another run's sink, or a trace read back) "b": a slot never stands
  // for a name it was not seen with.
  const auto events = [&](std::uint32_t a, std::uint32_t b) {
    return std::vector<tr::Event>{
        tr::RecordsFetched{.consumer = "a",
                           .group = "g",
                           .batch = 1,
                           .count = 10,
                           .ranges = r0,
                           .consumer_slot = a},
        tr::RecordsFetched{.consumer = "b",
                           .group = "g",
                           .batch = 1,
                           .count = 5,
                           .ranges = r1,
                           .consumer_slot = b},
        tr::RecordsProcessed{
            .consumer = "a", .group = "g", .batch = 1, .count = 10, .consumer_slot = a},
        tr::RecordsProcessed{
            .consumer = "b", .group = "g", .batch = 1, .count = 5, .consumer_slot = b},
        tr::RecordsFetched{.consumer = "b",
                           .group = "g",
                           .batch = 2,
                           .count = 5,
                           .ranges = again,
                           .consumer_slot = b},
        tr::RecordsProcessed{
            .consumer = "a", .group = "g", .batch = 2, .count = 5, .consumer_slot = a},  // not a's
        tr::RecordsProcessed{
            .consumer = "b", .group = "g", .batch = 2, .count = 5, .consumer_slot = b},
    };
  };
  const auto summary = [](const std::vector<tr::Event>& es) {
    reports::SummaryInputs in;
    in.scenario = "slots";
    in.protocol = "consumer";
    reports::SummarySink s(in);
    std::int64_t t = 0;
    for (const auto& e : es) s.on_event(sim::SimTime{t += 1000}, e);
    return s.finish();
  };
  const auto by_name = summary(events(0, 0));
  CHECK(by_name["metrics"]["records_processed"] == 20);
  CHECK(by_name["metrics"]["duplicates"] == 5);
  CHECK(summary(events(3, 4)).dump(2) == by_name.dump(2));
  CHECK(summary(events(3, 3)).dump(2) == by_name.dump(2));  // one slot, two names
  CHECK(summary(events(3, 0)).dump(2) == by_name.dump(2));
}

TEST_CASE(
    "the standard level's filter: lag only on a change of lag or owner, per (group, partition) "
    "slot") {
  using namespace rsim::trace;
  LevelFilter standard(Detail::Standard), full(Detail::Full);
  const rsim::TopicPartition p0{"orders", 0}, p1{"orders", 1};
  auto lag = [&](const rsim::TopicPartition& p, std::uint32_t slot, std::int64_t v,
                 const char* owner) {
    Lag l{.group = "g",
          .partition = &p,
          .lag = v,
          .log_end_offset = 100 + v,
          .offset = 100,
          .reason = "sample",
          .slot = slot};
    if (owner != nullptr) l.owner.value = std::string_view(owner);
    return Event{l};
  };
  CHECK(standard.keep(lag(p0, 1, 5, "A")));        // first line of its partition
  CHECK(standard.keep(lag(p1, 2, 5, "A")));        // another slot: its own first line
  CHECK_FALSE(standard.keep(lag(p0, 1, 5, "A")));  // holds
  CHECK_FALSE(standard.keep(lag(p0, 1, 5, "A")));
  CHECK(standard.keep(lag(p0, 1, 6, "A")));      // changes
  CHECK(standard.keep(lag(p0, 1, 6, "B")));      // new owner, same lag
  CHECK(standard.keep(lag(p0, 1, 6, nullptr)));  // no owner
  CHECK_FALSE(standard.keep(lag(p0, 1, 6, nullptr)));
  CHECK(standard.keep(lag(p0, 1, 6, "B")));
  CHECK_FALSE(standard.keep(lag(p1, 2, 5, "A")));  // p1 untouched by p0's lines
  CHECK(standard.keep(lag(p0, 0, 6, "B")));        // no slot (read back): always written
  CHECK(standard.keep(lag(p0, 0, 6, "B")));
  for (int i = 0; i < 3; ++i) CHECK(full.keep(lag(p0, 1, 6, "B")));  // full writes every sample

  const RecordsFetched fetched{.consumer = "A", .group = "g", .batch = 1, .count = 2};
  const RecordsProcessed processed{.consumer = "A", .group = "g", .batch = 1, .count = 2};
  CHECK_FALSE(standard.keep(Event{fetched}));
  CHECK_FALSE(standard.keep(Event{processed}));
  CHECK(full.keep(Event{fetched}));
  const OffsetCommitValue v{
      .group = "g", .topic = "orders", .partition_index = 0, .committed_offset = 7};
  Record typed{.partition = 3, .offset = 9};
  typed.value.commit = &v;
  CHECK_FALSE(standard.keep(Event{typed}));
  CHECK(full.keep(Event{typed}));
  const nlohmann::ordered_json commit_json{{"record", "OffsetCommit"}, {"group", "g"}};
  const nlohmann::ordered_json metadata_json{
      {"record", "ConsumerGroupMetadata"}, {"group", "g"}, {"epoch", 2}};
  Record as_json{.partition = 3, .offset = 10}, group_record{.partition = 3, .offset = 11};
  as_json.value.object = &commit_json;
  group_record.value.object = &metadata_json;
  CHECK_FALSE(standard.keep(Event{as_json}));
  CHECK(standard.keep(Event{group_record}));  // the group-protocol records stay
  const Rpc quiet{
      .dir = "send", .from = "A", .to = "broker-0", .api = "Heartbeat", .id = 4, .quiet = true};
  const Rpc news{
      .dir = "recv", .from = "broker-0", .to = "A", .api = "Heartbeat", .id = 4, .quiet = false};
  CHECK_FALSE(standard.keep(Event{quiet}));
  CHECK(standard.keep(Event{news}));
  CHECK(full.keep(Event{quiet}));
  CHECK(standard.keep(
      Event{Commit{.consumer = "A", .group = "g", .phase = "sent", .purpose = "auto-commit"}}));

  // run.start says the level; a line left out appends nothing.
  std::string out;
  CHECK(append_jsonl_at(
      out, sim::SimTime{0},
      Event{RunStart{.scenario = "s", .protocol = "consumer", .seed = 1, .duration_ms = 5}},
      standard));
  CHECK(
      out ==
      R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"consumer","seed":1,"duration_ms":5,"trace_level":"standard"})");
  out.clear();
  CHECK(append_jsonl_at(
      out, sim::SimTime{0},
      Event{RunStart{.scenario = "s", .protocol = "consumer", .seed = 1, .duration_ms = 5}}, full));
  CHECK(
      out ==
      R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"consumer","seed":1,"duration_ms":5,"trace_level":"full"})");
  out.clear();
  CHECK_FALSE(append_jsonl_at(out, sim::SimTime{1}, Event{fetched}, standard));
  CHECK(out.empty());
}

TEST_CASE(
    "the standard level's filter: group.epoch lines as joined / left after a group's first, an "
    "auto-commit's NONE completion left out; readers carry the members forward, sorted") {
  using namespace rsim::trace;
  LevelFilter standard(Detail::Standard), full(Detail::Full);
  // g: [X, A]; then B joins; then X and B leave and a second A (another incarnation) joins;
  // h's first line; then g empties. The lists in the coordinator's order (by member id).
  const std::vector<std::vector<std::string>> lists{
      {"X", "A"}, {"X", "B", "A"}, {"A", "A"}, {"C"}, {}};
  const std::vector<std::string> groups{"g", "g", "g", "h", "g"};
  const std::vector<std::int64_t> epochs{2, 3, 4, 2, 5};
  std::vector<std::string> written, full_lines;
  for (std::size_t i = 0; i < lists.size(); ++i) {
    const Event e{GroupEpoch{.group = groups[i], .epoch = epochs[i], .members = lists[i]}};
    const sim::SimTime t{static_cast<std::int64_t>(i + 1)};
    std::string line;
    REQUIRE(append_jsonl_at(line, t, e, standard));
    written.push_back(line);
    line.clear();
    REQUIRE(append_jsonl_at(line, t, e, full));
    full_lines.push_back(line);
  }
  CHECK(
      written ==
      std::vector<std::string>{
          R"({"t_us":1,"type":"group.epoch","group":"g","epoch":2,"members":["X","A"]})",
          R"({"t_us":2,"type":"group.epoch","group":"g","epoch":3,"joined":["B"],"left":[]})",
          R"({"t_us":3,"type":"group.epoch","group":"g","epoch":4,"joined":["A"],"left":["B","X"]})",
          R"({"t_us":4,"type":"group.epoch","group":"h","epoch":2,"members":["C"]})",
          R"({"t_us":5,"type":"group.epoch","group":"g","epoch":5,"joined":[],"left":["A","A"]})"});
  CHECK(full_lines[2] ==
        R"({"t_us":3,"type":"group.epoch","group":"g","epoch":4,"members":["A","A"]})");
  // Read back, both levels give every line's members, sorted by name.
  struct Members final : rsim::TraceSink {
    std::vector<std::vector<std::string>> seen;
    void on_event(sim::SimTime, const Event& e) override {
      if (const auto* ge = std::get_if<GroupEpoch>(&e))
        seen.emplace_back(ge->members.begin(), ge->members.end());
    }
  };
  const std::vector<std::vector<std::string>> sorted{
      {"A", "X"}, {"A", "B", "X"}, {"A", "A"}, {"C"}, {}};
  for (const auto* lines : {&written, &full_lines}) {
    Members m;
    read_jsonl(*lines, m);
    CHECK(m.seen == sorted);
  }
  // The reports' reader shows a standard line as the full line reads, sorted.
  reports::TraceReader reader(written);
  std::vector<std::string> shown;
  while (reader.next()) shown.push_back(reader.line().dump());
  CHECK(shown[1] ==
        R"({"t_us":2,"type":"group.epoch","group":"g","epoch":3,"members":["A","B","X"]})");
  CHECK(shown[2] == R"({"t_us":3,"type":"group.epoch","group":"g","epoch":4,"members":["A","A"]})");
  CHECK(shown[4] == R"({"t_us":5,"type":"group.epoch","group":"g","epoch":5,"members":[]})");

  // An auto-commit answered NONE: its completion is full's only; an error, a failure and every
  // other purpose keep theirs.
  const auto commit = [](const char* phase, const char* purpose, const char* error) {
    Commit c{.consumer = "A", .group = "g", .phase = phase, .purpose = purpose};
    if (error != nullptr) c.error = std::string_view(error);
    return Event{c};
  };
  CHECK_FALSE(standard.keep(commit("completed", "auto-commit", "NONE")));
  CHECK(full.keep(commit("completed", "auto-commit", "NONE")));
  CHECK(standard.keep(commit("sent", "auto-commit", nullptr)));
  CHECK(standard.keep(commit("completed", "auto-commit", "NOT_COORDINATOR")));
  CHECK(standard.keep(commit("failed", "auto-commit", "REBALANCE_IN_PROGRESS")));
  CHECK(standard.keep(commit("completed", "before revocation", "NONE")));
  CHECK(standard.keep(commit("completed", "commitSync", "NONE")));
}

TEST_CASE(
    "a partition name without TOPIC-N is a bad trace line, not a read before the string (fuzz "
    "finding)") {
  using rsim::trace::parse_partition;
  CHECK(parse_partition("orders-7").topic == "orders");
  CHECK(parse_partition("orders-7").partition == 7);
  CHECK(parse_partition("my-topic-12").topic == "my-topic");
  CHECK(parse_partition("my-topic-12").partition == 12);
  CHECK_THROWS_AS(parse_partition("orders"), std::runtime_error);
  CHECK_THROWS_AS(parse_partition(""), std::runtime_error);
}

TEST_CASE(
    "an integer field given a float out of its range is a bad trace line, not undefined behaviour "
    "(fuzz finding)") {
  rsim::trace::ReadStorage st;
  const auto leo = [&](const nlohmann::ordered_json& value) {
    const nlohmann::ordered_json line{{"partition", "t-0"}, {"log_end_offset", value}};
    return std::get<rsim::trace::LogEndOffset>(
               rsim::trace::parse_fields("log_end_offset", line, st))
        .log_end_offset;
  };
  CHECK(leo(12) == 12);
  CHECK(leo(12.0) == 12);  // a float in range is truncated, as before
  CHECK(leo(12.5) == 12);
  CHECK_THROWS_AS(leo(4e70), std::runtime_error);
  CHECK_THROWS_AS(leo(9223372036854775808.0), std::runtime_error);  // 2^63: one past int64's max
}
