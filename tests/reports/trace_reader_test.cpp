// The one trace reader (reports::TraceReader): a line in the writer's compact form is read from
// its text, any other through the JSON parse, and both ways give the same typed event or refuse
// the line with the same message. tests/fuzz/fuzz_trace_reader.cpp checks the same on any text.
#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "models/scenario/world.hpp"
#include "models/trace/trace_jsonl.hpp"
#include "reports/trace_reader.hpp"

namespace tr = rsim::trace;
using reports::kKind;
using reports::TraceReader;

namespace {

// The line read back as the writer writes its event.
std::string written(const TraceReader& r) {
  std::string out;
  tr::append_jsonl(out, sim::SimTime{r.t_us()}, r.event());
  return out;
}

// Reads one line both ways: they must agree; returns the reader that read it from its text.
struct BothWays {
  std::string text;  // what the events' views point into
  TraceReader scanned, parsed;
  explicit BothWays(std::string line)
      : text(std::move(line)), scanned(std::string_view(text)), parsed(std::string_view(text)) {
    parsed.set_text_scan(false);
    REQUIRE(scanned.next());
    REQUIRE(parsed.next());
    CHECK(written(scanned) == written(parsed));
    CHECK(scanned.kind() == parsed.kind());
    CHECK_FALSE(parsed.scanned());
  }
};

std::string error_of(const std::string& text, bool scan) {
  TraceReader r(text);
  r.set_text_scan(scan);
  try {
    r.next();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// Kinds whose lines always hold nested JSON (a Splice, a Json set by every publisher): always
// read through the parse.
bool parsed_only(std::size_t kind) {
  return kind == kKind<tr::Record> || kind == kKind<tr::ConsumerMetadata> ||
         kind == kKind<tr::ConsumerConfig>;
}

bool hot(std::size_t kind) {
  return kind == kKind<tr::Lag> || kind == kKind<tr::Rpc> || kind == kKind<tr::Commit> ||
         kind == kKind<tr::RecordsFetched> || kind == kKind<tr::RecordsProcessed> ||
         kind == kKind<tr::Position> || kind == kKind<tr::Assignment> ||
         kind == kKind<tr::Callback>;
}

}  // namespace

TEST_CASE("trace reader: every line a run writes reads the same from its text and parsed") {
  const auto spec = rsim::load_scenario_file(
      std::string(RSIM_SOURCE_DIR) + "/scenarios/library/same-workload-classic-vs-kip848.json");
  for (const char* variant : {"classic-eager", "consumer"}) {
    const auto run = rsim::run_scenario(spec, variant, spec.seed);
    TraceReader scanned(run.trace_lines), parsed(run.trace_lines);
    parsed.set_text_scan(false);
    std::size_t lines = 0, from_text = 0, rpc_fields = 0;
    while (scanned.next()) {
      REQUIRE(parsed.next());
      ++lines;
      const std::string& line = run.trace_lines[scanned.line_no() - 1];
      CHECK(written(scanned) == written(parsed));
      // The high-volume kinds are read from their text; a line read so writes back the same
      // bytes; a kind with nested JSON is always parsed.
      if (hot(scanned.kind())) CHECK(scanned.scanned());
      if (scanned.scanned()) CHECK(written(scanned) == line);
      if (parsed_only(scanned.kind())) CHECK_FALSE(scanned.scanned());
      if (scanned.scanned()) ++from_text;
      if (const auto* rpc = std::get_if<tr::Rpc>(&scanned.event()); rpc && rpc->sent_fields)
        ++rpc_fields;
    }
    CHECK_FALSE(parsed.next());
    CHECK(lines == run.trace_lines.size());
    CHECK(from_text > lines / 2);
    // KIP-848 heartbeats name the optional fields they carry; classic requests carry none.
    CHECK((rpc_fields > 0) == (std::string(variant) == "consumer"));
  }
}

TEST_CASE("trace reader: a lag line's fields, from its text and through the parse") {
  const std::string line =
      R"({"t_us":5,"type":"lag","group":"g","partition":"orders-3","lag":7,"log_end_offset":9,)"
      R"("offset":2,"owner":null,"reason":"sample"})";
  BothWays both(line);
  CHECK(both.scanned.scanned());
  CHECK(both.scanned.t_us() == 5);
  const auto& lag = std::get<tr::Lag>(both.scanned.event());
  REQUIRE(lag.partition != nullptr);
  CHECK(lag.partition->topic == "orders");
  CHECK(lag.partition->partition == 3);
  CHECK(lag.lag == 7);
  CHECK(lag.log_end_offset == 9);
  CHECK(lag.offset == 2);
  CHECK_FALSE(lag.owner.value.has_value());
  CHECK(lag.reason == "sample");
  CHECK(both.scanned.has("owner"));
  CHECK_FALSE(both.scanned.has("consumer"));
  // Spacing is left to the parse, which reads the same event.
  BothWays spaced("{ " + line.substr(1));
  CHECK_FALSE(spaced.scanned.scanned());
  CHECK(written(spaced.scanned) == written(both.scanned));
}

TEST_CASE("trace reader: what the text read leaves to the parse reads as the parse reads it") {
  // A repeated member: the last one counts, both ways.
  BothWays repeated(R"({"t_us":1,"type":"lag","partition":"t-0","lag":7,"lag":8})");
  CHECK(repeated.scanned.scanned());
  CHECK(std::get<tr::Lag>(repeated.scanned.event()).lag == 8);
  // An escape in a string: parsed.
  BothWays escaped(R"({"t_us":1,"type":"consumer.stop","consumer":"a\"b"})");
  CHECK_FALSE(escaped.scanned.scanned());
  CHECK(std::get<tr::ConsumerStop>(escaped.scanned.event()).consumer == "a\"b");
  // A float where an integer is expected: nlohmann truncates it.
  BothWays fraction(R"({"t_us":1,"type":"lag","partition":"t-0","lag":7.9})");
  CHECK_FALSE(fraction.scanned.scanned());
  CHECK(std::get<tr::Lag>(fraction.scanned.event()).lag == 7);
  // An id beyond 32 bits: nlohmann keeps its low bits.
  BothWays wide(
      R"({"t_us":1,"type":"rpc","dir":"send","from":"a","to":"b","api":"JoinGroup","id":4294967297})");
  CHECK_FALSE(wide.scanned.scanned());
  CHECK(std::get<tr::Rpc>(wide.scanned.event()).id == 1);
  // A partition named twice in one commit's offsets: the parse keeps one (the last value).
  BothWays twice(
      R"({"t_us":1,"type":"commit","consumer":"c","group":"g","phase":"sent","purpose":"p",)"
      R"("offsets":{"t-0":1,"t-0":2}})");
  CHECK_FALSE(twice.scanned.scanned());
  const auto& offsets = *std::get<tr::Commit>(twice.scanned.event()).offsets;
  REQUIRE(offsets.size() == 1);
  CHECK(offsets[0].offset == 2);
}

TEST_CASE("trace reader: a request's member epoch and fields are typed") {
  BothWays both(
      R"({"t_us":3,"type":"rpc","dir":"send","from":"c1","to":"broker-1","api":"ConsumerGroupHeartbeat",)"
      R"("id":4,"member_epoch":2,"fields":["SubscribedTopicNames","TopicPartitions"]})");
  CHECK(both.scanned.scanned());
  const auto& rpc = std::get<tr::Rpc>(both.scanned.event());
  CHECK(rpc.member_epoch == 2);
  REQUIRE(rpc.sent_fields.has_value());
  REQUIRE(rpc.sent_fields->size() == 2);
  CHECK((*rpc.sent_fields)[0] == "SubscribedTopicNames");
  CHECK((*rpc.sent_fields)[1] == "TopicPartitions");
  CHECK_FALSE(rpc.error.has_value());
}

TEST_CASE("trace reader: bad lines are refused with the same message both ways") {
  for (const std::string& text :
       {std::string(R"({"t_us":1,"type":"lag","partition":"t-0","lag":"x"})"),
        std::string(R"({"t_us":1,"type":"lag","partition":"nodash","lag":1})"),
        std::string(R"({"t_us":"1","type":"lag"})"), std::string("{oops")}) {
    const std::string scanned = error_of(text, true);
    CHECK(scanned.rfind("trace.jsonl line 1: ", 0) == 0);
    CHECK(scanned == error_of(text, false));
  }
  CHECK(error_of(R"({"t_us":1,"type":"lag","partition":"nodash","lag":1})", true) ==
        R"(trace.jsonl line 1: "nodash" is not a partition (TOPIC-N))");
}

TEST_CASE("trace reader: read_only() reads the other kinds' lines as blank events of their kind") {
  const std::string text =
      "{\"t_us\":1,\"type\":\"consumer.stop\",\"consumer\":\"c1\"}\n"
      "{\"t_us\":2,\"type\":\"lag\",\"partition\":\"t-1\",\"lag\":4}\n";
  TraceReader r(text);
  reports::KindSet only;
  only.set(kKind<tr::Lag>);
  r.read_only(only);
  REQUIRE(r.next());
  CHECK(r.t_us() == 1);
  CHECK(r.kind() == kKind<tr::ConsumerStop>);
  CHECK(std::get<tr::ConsumerStop>(r.event()).consumer.empty());  // not read
  CHECK(r.has("consumer"));
  REQUIRE(r.next());
  CHECK(std::get<tr::Lag>(r.event()).lag == 4);
  CHECK_FALSE(r.next());
}
