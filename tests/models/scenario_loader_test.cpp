// Scenario loader: every kind of bad input gets its exact, stable message (with the JSON pointer),
// all problems come out in one pass, defaults and Kafka configs are resolved, and
// scenarios/schema.json accepts exactly the keys the loader accepts.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/protocol/config.hpp"
#include "models/scenario/scenario.hpp"
#include "models/scenario/spec_json.hpp"

namespace {

using nlohmann::json;
using rsim::ScenarioError;
using Problems = std::vector<std::string>;

json base() {
  return json::parse(R"({
    "name": "t",
    "duration_ms": 60000,
    "topics": [{"name": "orders", "partitions": 6}],
    "consumers": [{"name": "A", "group": "g", "topics": ["orders"]},
                  {"name": "B", "group": "g", "topics": ["orders"]}],
    "events": [{"at_ms": 1000, "do": "start", "consumer": "A"}]
  })");
}

Problems problems(const json& doc) {
  try {
    rsim::parse_scenario(doc, "x.json");
  } catch (const ScenarioError& e) {
    return e.problems();
  }
  return {};
}

// The problems after adding one event to the base scenario.
Problems with_event(const json& event) {
  json doc = base();
  doc["events"].push_back(event);
  return problems(doc);
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  const auto dir = std::filesystem::temp_directory_path() / "rsim-scenario-loader-test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace

TEST_CASE("the base scenario is valid") {
  // Every other test changes one thing in it, so it must have no problem of its own.
  CHECK(problems(base()).empty());
}

// --- input that is not a scenario at all ---

TEST_CASE("a file that is not json reports line and column") {
  // nlohmann's byte position becomes line:col of the offending character.
  const auto path = write_temp("broken.json", "{\n  \"name\": \"x\",\n  }\n");
  try {
    rsim::load_scenario_file(path);
    FAIL("no error");
  } catch (const ScenarioError& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0] ==
          "line 3, column 3: not valid json: syntax error while parsing object key - unexpected "
          "'}'; expected string literal");
    CHECK(std::string(e.what()) == path + ": " + e.problems()[0]);
  }
}

TEST_CASE("a missing file is a scenario error") {
  // load_scenario_file never lets an I/O failure escape as anything but bad input.
  try {
    rsim::load_scenario_file("/nonexistent/dir/x.json");
    FAIL("no error");
  } catch (const ScenarioError& e) {
    CHECK(std::string(e.what()) == "/nonexistent/dir/x.json: cannot read the file");
  }
}

TEST_CASE("a document that is not an object") {
  // The root must be an object; nothing else is checked then.
  CHECK(problems(json::array()) == Problems{"must be a json object, got []"});
}

// --- types and unknown keys ---

TEST_CASE("wrong types are reported with the value") {
  // Each wrong type names the expected type and shows what was written.
  json doc = base();
  doc["seed"] = "7";
  doc["topics"][0]["partitions"] = 2.5;
  doc["consumers"][0]["name"] = 3;
  doc["network"] = json::array();
  CHECK(problems(doc) == Problems{
                             "/seed: must be an integer, got \"7\"",
                             "/network: must be an object, got []",
                             "/topics/0/partitions: must be an integer, got 2.5",
                             "/consumers/0/name: must be a string, got 3",
                             "/events/0/consumer: unknown consumer \"A\"",
                         });
}

TEST_CASE("unknown keys at every level suggest the closest known key") {
  // A typo never falls back to a default silently.
  json doc = base();
  doc["duraton_ms"] = 1;
  doc["cluster"] = {{"broker", 1}};
  doc["network"] = {{"latency", 1}};
  doc["topics"][0]["partiton"] = 1;
  doc["consumers"][0]["comit"] = "sync";
  doc["consumers"][0]["processing"] = {{"per_recrd_ms", 1}};
  doc["consumers"][0]["callbacks"] = {{"revoked_ms", 1}};
  doc["consumers"][0]["config_by_protocol"] = {{"clasic", json::object()}};
  doc["expect"] = {{{"metric", "m"}, {"op", "=="}, {"value", 1}, {"protocl", "consumer"}}};
  doc["events"][0]["consumr"] = "A";
  const Problems got = problems(doc);
  const Problems want{
      "/duraton_ms: unknown key; did you mean \"duration_ms\"?",
      "/cluster/broker: unknown key; did you mean \"brokers\"?",
      "/network/latency: unknown key; did you mean \"latency_ms\"?",
      "/topics/0/partiton: unknown key; did you mean \"partitions\"?",
      "/consumers/0/comit: unknown key; did you mean \"commit\"?",
      "/consumers/0/config_by_protocol/clasic: unknown key; did you mean \"classic\"?",
      "/consumers/0/processing/per_recrd_ms: unknown key; did you mean \"per_record_ms\"?",
      "/consumers/0/callbacks/revoked_ms: unknown key; did you mean \"revoke_ms\"?",
      "/events/0/consumr: unknown key; did you mean \"consumer\"?",
      "/expect/0/protocl: unknown key; did you mean \"protocol\"?",
  };
  CHECK(got == want);
}

TEST_CASE("an unknown key far from every known key gets no suggestion") {
  // Suggestions are only made when they are close.
  json doc = base();
  doc["zzzzzzzzzz"] = 1;
  CHECK(problems(doc) == Problems{"/zzzzzzzzzz: unknown key"});
}

TEST_CASE("a field of another event kind is named as such") {
  // for_ms exists, but not on start.
  CHECK(with_event({{"at_ms", 1}, {"do", "start"}, {"consumer", "B"}, {"for_ms", 5}}) ==
        Problems{"/events/1/for_ms: not a field of a \"start\" event"});
}

TEST_CASE("missing required keys") {
  // name at the top, name/partitions of a topic, name/group/topics of a consumer.
  json doc = base();
  doc.erase("name");
  doc["topics"].push_back({{"partitions", 1}});
  doc["consumers"].push_back({{"name", "C"}});
  CHECK(problems(doc) == Problems{
                             "/name: missing",
                             "/topics/1/name: missing",
                             "/consumers/2/group: missing",
                             "/consumers/2/topics: missing",
                         });
}

// --- Kafka configs ---

TEST_CASE("a misspelt kafka consumer config is unknown, with a suggestion") {
  // The classic typo of the style guide.
  json doc = base();
  doc["protocols"] = {"classic-eager"};
  doc["consumers"][0]["config"] = {{"sesion.timeout.ms", 10000}};
  CHECK(problems(doc) == Problems{"/consumers/0/config/sesion.timeout.ms: unknown kafka consumer "
                                  "config; did you mean \"session.timeout.ms\"?"});
}

TEST_CASE("a real kafka consumer config that is not modelled is rejected as such") {
  // Accepting it silently would suggest it changes the simulation.
  json doc = base();
  doc["consumers"][0]["config"] = {{"fetch.min.bytes", 1}, {"ssl.keystore.location", "/k"}};
  CHECK(problems(doc) ==
        Problems{
            "/consumers/0/config/fetch.min.bytes: is a kafka consumer config the simulator does "
            "not model",
            "/consumers/0/config/ssl.keystore.location: is a kafka consumer config the simulator "
            "does not model",
        });
}

TEST_CASE("group.protocol and group.id are set by the scenario, not by config") {
  // The variant sets group.protocol; the consumer's group sets group.id.
  json doc = base();
  doc["consumers"][0]["config"] = {{"group.protocol", "consumer"}, {"group.id", "h"}};
  CHECK(problems(doc) == Problems{
                             "/consumers/0/config/group.id: is set by the consumer's \"group\"",
                             "/consumers/0/config/group.protocol: is set by the protocol variant; "
                             "use \"protocols\" (or a start/restart event's \"config\" to change "
                             "it for one incarnation)",
                         });
}

TEST_CASE("broker configs: unknown, unmodelled, consumer key in the wrong place, bad value") {
  // cluster.config takes broker keys only.
  json doc = base();
  doc["cluster"] = {{"config",
                     {{"group.initial.rebalance.delay", 0},
                      {"offsets.retention.minutes", 10},
                      {"max.poll.records", 5},
                      {"offsets.topic.num.partitions", 0}}}};
  CHECK(problems(doc) ==
        Problems{
            "/cluster/config/group.initial.rebalance.delay: unknown kafka broker config; did you "
            "mean \"group.initial.rebalance.delay.ms\"?",
            "/cluster/config/max.poll.records: is a kafka consumer config; set it in a "
            "consumer's \"config\"",
            "/cluster/config/offsets.retention.minutes: is a kafka broker config the simulator "
            "does not model",
            "/cluster/config/offsets.topic.num.partitions: must be >= 1, got 0",
        });
}

TEST_CASE("broker consumer-group timeouts must lie within their bounds, as Kafka requires") {
  // GroupCoordinatorConfig refuses a session timeout below its minimum.
  json doc = base();
  doc["cluster"] = {{"config", {{"group.consumer.session.timeout.ms", 10000}}}};
  CHECK(problems(doc) == Problems{"/cluster/config/group.consumer.session.timeout.ms: must be >= "
                                  "group.consumer.min.session.timeout.ms (45000), got 10000"});
  // Lowering the bounds too makes it valid.
  doc["cluster"]["config"]["group.consumer.min.session.timeout.ms"] = 1000;
  doc["cluster"]["config"]["group.consumer.min.heartbeat.interval.ms"] = 500;
  doc["cluster"]["config"]["group.consumer.heartbeat.interval.ms"] = "1000";
  CHECK(problems(doc).empty());
  const auto spec = rsim::parse_scenario(doc, "x.json");
  const auto broker = rsim::resolve_broker_config(spec.cluster);
  CHECK(broker.group_consumer_session_timeout_ms == 10000);
  CHECK(broker.group_consumer_heartbeat_interval_ms == 1000);
  CHECK(broker.group_initial_rebalance_delay_ms == 3000);
  // Heartbeat at or above the session timeout is refused as well.
  doc["cluster"]["config"]["group.consumer.max.heartbeat.interval.ms"] = 20000;
  doc["cluster"]["config"]["group.consumer.heartbeat.interval.ms"] = 10000;
  CHECK(problems(doc) == Problems{"/cluster/config/group.consumer.heartbeat.interval.ms: must be < "
                                  "group.consumer.session.timeout.ms (10000), got 10000"});
}

TEST_CASE("kafka config values may be strings and lists as in .properties files") {
  // "45000", "false" and "range, sticky" mean what Kafka would read from a properties file.
  json doc = base();
  doc["protocols"] = {"classic-eager"};
  doc["consumers"][0]["config"] = {{"session.timeout.ms", "30000"},
                                   {"enable.auto.commit", "false"},
                                   {"partition.assignment.strategy", "range, sticky"},
                                   {"retry.backoff.ms", 250}};
  const auto spec = rsim::parse_scenario(doc, "x.json");
  const auto& config = spec.consumers[0].config;
  // Normalized and typed: "30000" is the integer 30000, "false" the boolean, the comma-separated
  // string a list.
  CHECK(config.at("session.timeout.ms") == rsim::ConfigValue(30000));
  CHECK(config.at("session.timeout.ms").is_integer());
  CHECK(config.at("enable.auto.commit") == rsim::ConfigValue(false));
  CHECK(config.at("partition.assignment.strategy") ==
        rsim::ConfigValue(rsim::ConfigValue::List{"range", "sticky"}));
  CHECK(config.at("retry.backoff.ms") == rsim::ConfigValue(250));
  const auto c = rsim::resolve_consumer_config(spec.consumers[0], "classic-eager", 1);
  CHECK(c.session_timeout_ms == 30000);
  CHECK_FALSE(c.enable_auto_commit);
  CHECK(c.partition_assignment_strategy == std::vector<std::string>{"range", "sticky"});
  CHECK(c.retry_backoff_ms == 250);
}

TEST_CASE("bad kafka config values") {
  // Wrong type, out of Kafka's range, unknown enum value.
  json doc = base();
  doc["consumers"][0]["config"] = {{"max.poll.records", 0},
                                   {"enable.auto.commit", "yes"},
                                   {"max.poll.interval.ms", "abc"},
                                   {"auto.offset.reset", "begin"},
                                   {"request.timeout.ms", 3000000000LL}};
  CHECK(problems(doc) == Problems{
                             "/consumers/0/config/auto.offset.reset: must be one of latest, "
                             "earliest, none, got \"begin\"",
                             "/consumers/0/config/enable.auto.commit: must be true or false, "
                             "got \"yes\"",
                             "/consumers/0/config/max.poll.interval.ms: must be an integer, got "
                             "\"abc\"",
                             "/consumers/0/config/max.poll.records: must be >= 1, got 0",
                             "/consumers/0/config/request.timeout.ms: must be <= 2147483647, got "
                             "3000000000",
                         });
}

TEST_CASE("assignor names: short names, kafka class names, and unknown ones") {
  // Class names are normalized to short names; unknown names get a suggestion.
  json doc = base();
  doc["protocols"] = {"classic-eager"};
  doc["consumers"][0]["config"] = {
      {"partition.assignment.strategy",
       {"org.apache.kafka.clients.consumer.CooperativeStickyAssignor", "roundrobin"}}};
  auto spec = rsim::parse_scenario(doc, "x.json");
  CHECK(spec.consumers[0].config.at("partition.assignment.strategy") ==
        rsim::ConfigValue(rsim::ConfigValue::List{"cooperative-sticky", "roundrobin"}));

  doc["consumers"][0]["config"]["partition.assignment.strategy"] = {"range", "rnage"};
  CHECK(problems(doc) == Problems{"/consumers/0/config/partition.assignment.strategy/1: unknown "
                                  "assignor \"rnage\"; did you mean \"range\"?"});
  doc["consumers"][0]["config"]["partition.assignment.strategy"] = "range,coperative-sticky";
  CHECK(problems(doc) == Problems{"/consumers/0/config/partition.assignment.strategy: unknown "
                                  "assignor \"coperative-sticky\"; did you mean "
                                  "\"cooperative-sticky\"?"});

  doc["protocols"] = {"consumer"};
  doc["consumers"][0]["config"] = {{"group.remote.assignor", "unifrom"}};
  CHECK(problems(doc) == Problems{"/consumers/0/config/group.remote.assignor: unknown assignor "
                                  "\"unifrom\"; did you mean \"uniform\"?"});
  doc["consumers"][0]["config"] = {
      {"group.remote.assignor", "org.apache.kafka.coordinator.group.assignor.RangeAssignor"}};
  spec = rsim::parse_scenario(doc, "x.json");
  CHECK(spec.consumers[0].config.at("group.remote.assignor") == rsim::ConfigValue("range"));

  doc["cluster"] = {{"config", {{"group.consumer.assignors", "range,sticky"}}}};
  CHECK(problems(doc) == Problems{"/cluster/config/group.consumer.assignors: unknown assignor "
                                  "\"sticky\""});
}

TEST_CASE("a common config key kafka rejects under a variant the scenario runs") {
  // The message says where the key belongs instead.
  json doc = base();  // default protocols: classic-eager and consumer
  doc["consumers"][0]["config"] = {{"session.timeout.ms", 10000}};
  doc["consumers"][1]["config"] = {{"group.remote.assignor", "range"}};
  CHECK(problems(doc) ==
        Problems{
            "/consumers/0/config/session.timeout.ms: kafka rejects this key with "
            "group.protocol=consumer; move it into config_by_protocol.classic",
            "/consumers/1/config/group.remote.assignor: kafka rejects this key with "
            "group.protocol=classic; move it into config_by_protocol.consumer",
        });
  // Under one protocol only, the same keys are fine where Kafka accepts them.
  doc["protocols"] = {"consumer"};
  doc["consumers"][0]["config"] = json::object();
  CHECK(problems(doc).empty());
}

TEST_CASE("config_by_protocol rejects the keys kafka rejects under that protocol") {
  // heartbeat.interval.ms means nothing to group.protocol=consumer.
  json doc = base();
  doc["consumers"][0]["config_by_protocol"] = {{"consumer", {{"heartbeat.interval.ms", 1000}}}};
  CHECK(problems(doc) == Problems{"/consumers/0/config_by_protocol/consumer/heartbeat.interval.ms: "
                                  "kafka rejects this key with group.protocol=consumer"});
}

TEST_CASE("heartbeat.interval.ms must be lower than session.timeout.ms") {
  // Kafka's classic consumer refuses to start otherwise.
  json doc = base();
  doc["consumers"][0]["config_by_protocol"] = {
      {"classic", {{"heartbeat.interval.ms", 10000}, {"session.timeout.ms", 10000}}}};
  CHECK(problems(doc) ==
        Problems{"/consumers/0/config_by_protocol/classic/heartbeat.interval.ms: must be < "
                 "session.timeout.ms (10000), got 10000"});
  doc["consumers"][0]["config_by_protocol"] = {{"classic", {{"session.timeout.ms", 3000}}}};
  CHECK(problems(doc) ==
        Problems{"/consumers/0/config_by_protocol/classic/session.timeout.ms: must be > "
                 "heartbeat.interval.ms (3000), got 3000"});
}

// --- names and references ---

TEST_CASE("unknown protocol variants") {
  // Names are checked against the contract's variants, with a suggestion.
  json doc = base();
  doc["protocols"] = {"classic-eager", "cooperative", "consumr", "consumer", "consumer"};
  CHECK(problems(doc) == Problems{
                             "/protocols/1: unknown protocol variant \"cooperative\"",
                             "/protocols/2: unknown protocol variant \"consumr\"; did you mean "
                             "\"consumer\"?",
                             "/protocols/4: lists \"consumer\" twice",
                         });
  doc["protocols"] = json::array();
  CHECK(problems(doc) == Problems{"/protocols: must not be empty"});
}

TEST_CASE("duplicate consumer and topic names, reserved and invalid names") {
  // Names identify consumers and topics everywhere in the trace.
  json doc = base();
  doc["topics"].push_back({{"name", "orders"}, {"partitions", 1}});
  doc["topics"].push_back({{"name", "bad topic"}, {"partitions", 1}});
  doc["consumers"].push_back({{"name", "A"}, {"group", "g"}, {"topics", json::array()}});
  doc["consumers"].push_back({{"name", "coordinator"}, {"group", "g"}, {"topics", json::array()}});
  CHECK(problems(doc) ==
        Problems{
            "/topics/1/name: duplicate topic name \"orders\"",
            "/topics/2/name: must be a kafka topic name ([a-zA-Z0-9._-], at most 249), got \"bad "
            "topic\"",
            "/consumers/2/name: duplicate consumer name \"A\"",
            "/consumers/3/name: \"coordinator\" is reserved for network endpoints",
        });
}

TEST_CASE("unknown consumers, topics and groups in events") {
  // References are resolved against the declared names, with suggestions when close.
  CHECK(with_event({{"at_ms", 1}, {"do", "crash"}, {"consumer", "Bob"}}) ==
        Problems{"/events/1/consumer: unknown consumer \"Bob\""});
  json doc = base();
  doc["consumers"][1]["name"] = "worker-1";
  doc["events"].push_back({{"at_ms", 1}, {"do", "crash"}, {"consumer", "worker-2"}});
  doc["events"].push_back(
      {{"at_ms", 1}, {"do", "subscribe"}, {"consumer", "A"}, {"topics", {"ordres"}}});
  doc["events"].push_back(
      {{"at_ms", 1}, {"do", "add-partitions"}, {"topic", "payments"}, {"partitions", 8}});
  doc["events"].push_back({{"at_ms", 1}, {"do", "fail-coordinator"}, {"group", "gg"}});
  CHECK(problems(doc) == Problems{
                             "/events/1/consumer: unknown consumer \"worker-2\"; did you mean "
                             "\"worker-1\"?",
                             "/events/2/topics/0: unknown topic \"ordres\"; did you mean "
                             "\"orders\"?",
                             "/events/3/topic: unknown topic \"payments\"",
                             "/events/4/group: unknown group \"gg\"; did you mean \"g\"?",
                         });
}

TEST_CASE("a consumer subscribed to an unknown topic") {
  // The subscription must name declared topics.
  json doc = base();
  doc["consumers"][0]["topics"] = {"orders", "order"};
  CHECK(problems(doc) ==
        Problems{"/consumers/0/topics/1: unknown topic \"order\"; did you mean \"orders\"?"});
}

TEST_CASE("unknown event kinds") {
  // `do` is one of the contract's kinds.
  CHECK(with_event({{"at_ms", 1}, {"do", "crsh"}, {"consumer", "A"}}) ==
        Problems{"/events/1/do: unknown event kind \"crsh\"; did you mean \"crash\"?"});
  CHECK(with_event({{"at_ms", 1}, {"consumer", "A"}}) == Problems{"/events/1/do: missing"});
}

TEST_CASE("missing required fields per event kind") {
  // Each kind names its own required fields.
  CHECK(with_event({{"at_ms", 1}, {"do", "start"}}) == Problems{"/events/1/consumer: missing"});
  CHECK(with_event({{"do", "stop"}, {"consumer", "A"}}) == Problems{"/events/1/at_ms: missing"});
  CHECK(with_event({{"at_ms", 1}, {"do", "restart"}, {"consumer", "A"}}) ==
        Problems{"/events/1/after_ms: missing"});
  CHECK(with_event({{"at_ms", 1}, {"do", "stall"}, {"consumer", "A"}}) ==
        Problems{"/events/1/for_ms: missing"});
  CHECK(with_event({{"at_ms", 1}, {"do", "pause"}, {"consumer", "A"}}) ==
        Problems{"/events/1/for_ms: missing"});
  CHECK(with_event({{"at_ms", 1}, {"do", "subscribe"}, {"consumer", "A"}}) ==
        Problems{"/events/1/topics: missing"});
  CHECK(with_event({{"at_ms", 1}, {"do", "add-partitions"}, {"topic", "orders"}}) ==
        Problems{"/events/1/partitions: missing"});
  CHECK(with_event({{"at_ms", 1}, {"do", "network"}, {"latency_ms", 5}}) ==
        Problems{"/events/1/between: missing"});
  CHECK(with_event({{"at_ms", 1}, {"do", "network"}, {"between", {"A", "*"}}}) ==
        Problems{"/events/1: needs latency_ms and/or drop_rate"});
  CHECK(with_event({{"at_ms", 1}, {"do", "partition-network"}, {"between", {"A", "*"}}}) ==
        Problems{"/events/1/for_ms: missing"});
  CHECK(with_event({{"at_ms", 1}, {"do", "fail-coordinator"}}) ==
        Problems{"/events/1/group: missing"});
}

TEST_CASE("network endpoints") {
  // Consumers, "coordinator", "broker-N" with N < cluster.brokers, or "*".
  json doc = base();
  doc["cluster"] = {{"brokers", 3}};
  doc["events"].push_back(
      {{"at_ms", 1}, {"do", "partition-network"}, {"between", {"A", "broker-2"}}, {"for_ms", 5}});
  doc["events"].push_back(
      {{"at_ms", 1}, {"do", "partition-network"}, {"between", {"A", "broker-3"}}, {"for_ms", 5}});
  doc["events"].push_back(
      {{"at_ms", 1}, {"do", "network"}, {"between", {"coordinatr", "*"}}, {"drop_rate", 0.5}});
  doc["events"].push_back({{"at_ms", 1}, {"do", "network"}, {"between", {"A"}}, {"drop_rate", 1}});
  CHECK(problems(doc) == Problems{
                             "/events/2/between/1: unknown endpoint \"broker-3\": cluster.brokers "
                             "is 3",
                             "/events/3/between/0: unknown endpoint \"coordinatr\"; did you mean "
                             "\"coordinator\"?",
                             "/events/4/between: must be an array of two endpoints, got [\"A\"]",
                         });
}

// --- numbers ---

TEST_CASE("negative, zero and absurd numbers") {
  // The style guide's example message, and the upper bounds that catch unit mistakes.
  CHECK(with_event({{"at_ms", 3}, {"do", "stall"}, {"consumer", "A"}, {"for_ms", -5}}) ==
        Problems{"/events/1/for_ms: must be > 0, got -5"});
  CHECK(with_event({{"at_ms", -1}, {"do", "crash"}, {"consumer", "A"}}) ==
        Problems{"/events/1/at_ms: must be >= 0, got -1"});
  json doc = base();
  doc["duration_ms"] = 700000000;
  doc["topics"][0]["partitions"] = 100001;
  doc["topics"].push_back({{"name", "t2"}, {"partitions", 0}, {"initial_records", -1}});
  doc["network"] = {{"drop_rate", 1.5}, {"latency_ms", -1}};
  doc["cluster"] = {{"brokers", 0}};
  doc["consumers"][0]["poll_timeout_ms"] = -100;
  CHECK(problems(doc) == Problems{
                             "/duration_ms: must be <= 604800000 (7 days), got 700000000",
                             "/cluster/brokers: must be > 0, got 0",
                             "/network/latency_ms: must be >= 0, got -1",
                             "/network/drop_rate: must be <= 1, got 1.5",
                             "/topics/0/partitions: must be <= 100000, got 100001",
                             "/topics/1/partitions: must be > 0, got 0",
                             "/topics/1/initial_records: must be >= 0, got -1",
                             "/consumers/0/poll_timeout_ms: must be >= 0, got -100",
                         });
}

TEST_CASE("events after duration_ms") {
  // An event the run would never reach is a mistake.
  CHECK(with_event({{"at_ms", 60001}, {"do", "crash"}, {"consumer", "A"}}) ==
        Problems{"/events/1/at_ms: must be <= duration_ms (60000), got 60001"});
}

TEST_CASE("add-partitions must raise the count, in time order") {
  // The second event (later in time, earlier in the file) is checked against the first.
  json doc = base();
  doc["events"].push_back(
      {{"at_ms", 5000}, {"do", "add-partitions"}, {"topic", "orders"}, {"partitions", 8}});
  doc["events"].push_back(
      {{"at_ms", 2000}, {"do", "add-partitions"}, {"topic", "orders"}, {"partitions", 10}});
  doc["events"].push_back(
      {{"at_ms", 100}, {"do", "add-partitions"}, {"topic", "orders"}, {"partitions", 6}});
  CHECK(problems(doc) == Problems{
                             "/events/3/partitions: must be greater than the current partition "
                             "count (6), got 6",
                             "/events/1/partitions: must be greater than the current partition "
                             "count (10), got 8",
                         });
}

// --- distributions ---

TEST_CASE("distribution parsing") {
  // A number is a constant; objects pick a distribution; fractional ms are kept.
  json doc = base();
  doc["network"] = {{"latency_ms", 0.25}};
  doc["cluster"] = {{"write_latency_ms", {{"dist", "uniform"}, {"min", 1}, {"max", 5}}}};
  doc["consumers"][0]["processing"] = {
      {"per_record_ms", {{"dist", "exponential"}, {"mean", 2}}},
      {"per_batch_ms", {{"dist", "normal"}, {"mean", 5}, {"stddev", 1}, {"min", 0}}}};
  doc["consumers"][0]["callbacks"] = {
      {"revoke_ms", {{"dist", "lognormal"}, {"median", 3}, {"sigma", 0.5}}},
      {"assign_ms", {{"dist", "constant"}, {"value", 7}}}};
  const auto s = rsim::parse_scenario(doc, "x.json");
  CHECK(s.network.latency.is_constant());
  CHECK(s.network.latency.value == doctest::Approx(0.25));
  CHECK(s.cluster.write_latency.kind == sim::Distribution::Kind::Uniform);
  CHECK(s.cluster.write_latency.min == 1);
  CHECK(s.cluster.write_latency.max == 5);
  const auto& c = s.consumers[0];
  CHECK(c.processing.per_record.kind == sim::Distribution::Kind::Exponential);
  CHECK(c.processing.per_record.mean == 2);
  CHECK(c.processing.per_batch.kind == sim::Distribution::Kind::Normal);
  CHECK(c.processing.per_batch.has_min);
  CHECK_FALSE(c.processing.per_batch.has_max);
  CHECK(c.processing.per_batch.stddev == 1);
  CHECK(c.callbacks.revoke.kind == sim::Distribution::Kind::Lognormal);
  CHECK(c.callbacks.revoke.sigma == doctest::Approx(0.5));
  CHECK(c.callbacks.assign.value == 7);
  CHECK(c.callbacks.lost.value == 0);
}

TEST_CASE("distributions with bad parameters") {
  // Each bad parameter is reported at its own pointer; min > max at the object.
  json doc = base();
  doc["network"] = {{"latency_ms", {{"dist", "uniform"}, {"min", 5}, {"max", 1}}}};
  doc["cluster"] = {{"write_latency_ms", {{"dist", "normal"}, {"mean", 5}, {"stddev", -1}}}};
  doc["consumers"][0]["processing"] = {{"per_record_ms", {{"dist", "exponential"}, {"mean", 0}}},
                                       {"per_batch_ms", {{"dist", "gaussian"}, {"mean", 1}}}};
  doc["consumers"][0]["callbacks"] = {
      {"revoke_ms", {{"mean", 3}}},
      {"assign_ms", {{"dist", "lognormal"}, {"median", 3}, {"sigma", 0.5}, {"mean", 1}}},
      {"lost_ms", "slow"}};
  CHECK(problems(doc) ==
        Problems{
            "/cluster/write_latency_ms/stddev: must be >= 0, got -1",
            "/network/latency_ms: uniform min must be <= max, got 5 > 1",
            "/consumers/0/processing/per_record_ms/mean: must be > 0, got 0",
            "/consumers/0/processing/per_batch_ms/dist: unknown distribution \"gaussian\"",
            "/consumers/0/callbacks/revoke_ms/dist: missing",
            "/consumers/0/callbacks/assign_ms/mean: unknown key; did you mean \"median\"?",
            "/consumers/0/callbacks/lost_ms: must be a number or a distribution object, got "
            "\"slow\"",
        });
}

// --- expect ---

TEST_CASE("expect entries with a bad op, protocol or value") {
  // op is one of six; ordering ops need a number.
  json doc = base();
  doc["expect"] = {
      {{"metric", "rebalance_count"}, {"op", "=~"}, {"value", 3}},
      {{"protocol", "classic"}, {"metric", "rebalance_count"}, {"op", "=="}, {"value", 3}},
      {{"metric", "max_lag"}, {"op", "<"}, {"value", "10"}},
      {{"metric", "final_assignment"}, {"op", "=="}, {"value", {{"A", {"orders-0"}}}}},
      {{"metric", "lost"}, {"op", "=="}}};
  CHECK(problems(doc) ==
        Problems{
            "/expect/0/op: unknown op \"=~\" (==, !=, <, <=, >, >=, within, between)",
            "/expect/1/protocol: unknown protocol variant \"classic\"; did you mean "
            "\"classic-eager\"?",
            "/expect/2/value: must be a number for op \"<\", got \"10\"",
            "/expect/4/value: missing",
        });
}

// --- the valid path ---

TEST_CASE("all problems are reported in one pass") {
  // A user fixes the file once, not once per problem; what() lists them one per line.
  json doc = base();
  doc["seed"] = -1;
  doc["topics"][0]["partitions"] = 0;
  doc["consumers"][0]["config"] = {{"sesion.timeout.ms", 1}};
  doc["events"].push_back({{"at_ms", 1}, {"do", "stall"}, {"consumer", "A"}, {"for_ms", -5}});
  doc["expect"] = {{{"metric", "m"}, {"op", "=~"}, {"value", 1}}};
  try {
    rsim::parse_scenario(doc, "scenarios/x.json");
    FAIL("no error");
  } catch (const ScenarioError& e) {
    CHECK(e.problems().size() == 5);
    CHECK(std::string(e.what()) ==
          "scenarios/x.json: /seed: must be >= 0, got -1\n"
          "scenarios/x.json: /topics/0/partitions: must be > 0, got 0\n"
          "scenarios/x.json: /consumers/0/config/sesion.timeout.ms: unknown kafka consumer "
          "config; did you mean \"session.timeout.ms\"?\n"
          "scenarios/x.json: /events/1/for_ms: must be > 0, got -5\n"
          "scenarios/x.json: /expect/0/op: unknown op \"=~\" (==, !=, <, <=, >, >=, within, "
          "between)");
  }
}

TEST_CASE("defaults are filled in") {
  // seed 1, both default variants, one broker, 1 ms constant latency, no drops, poll 100 ms.
  const json doc = json::parse(R"({"name": "minimal"})");
  const auto s = rsim::parse_scenario(doc, "x.json");
  CHECK(s.seed == 1);
  CHECK(s.duration == sim::ms(60000));
  CHECK(s.protocols == std::vector<std::string>{"classic-eager", "consumer"});
  CHECK(s.cluster.brokers == 1);
  CHECK(s.cluster.config.empty());
  // The timing texture's Kafka-like defaults (docs/fidelity.md, "Timing texture"), each also
  // what a scenario's {"dist": "lognormal", ...} of the same parameters gives.
  CHECK(s.cluster.write_latency.kind == sim::Distribution::Kind::Lognormal);
  CHECK(s.cluster.write_latency.median == 3.5);
  CHECK(s.cluster.write_latency.sigma == 0.6);
  CHECK(s.cluster.request_handling.kind == sim::Distribution::Kind::Lognormal);
  CHECK(s.cluster.request_handling.median == 1.5);
  CHECK(s.cluster.request_handling.sigma == 0.5);
  CHECK(s.network.latency.is_constant());
  CHECK(s.network.latency.value == 1);
  CHECK(s.network.drop_rate == 0);
  CHECK(s.topics.empty());
  CHECK(s.events.empty());

  const auto b = rsim::parse_scenario(base(), "x.json");
  const auto& c = b.consumers[0];
  CHECK(c.poll_timeout == sim::ms(100));
  CHECK(c.commit == rsim::CommitMode::Auto);
  CHECK(c.processing.per_record.value == 0);
  CHECK(c.heartbeat_wakeup_lateness.kind == sim::Distribution::Kind::Lognormal);
  CHECK(c.heartbeat_wakeup_lateness.median == 1.0);
  CHECK(c.heartbeat_wakeup_lateness.sigma == 1.2);
  CHECK(c.callbacks.revoke.is_constant());
  CHECK(c.callbacks.revoke.value == 0);
  CHECK(b.topics[0].initial_records == 0);
  CHECK_FALSE(b.topics[0].produce_gap.has_value());

  const auto broker = rsim::resolve_broker_config(b.cluster);
  CHECK(broker.group_initial_rebalance_delay_ms == 3000);
  CHECK(broker.offsets_topic_num_partitions == 50);
  CHECK(broker.group_consumer_assignors == std::vector<std::string>{"uniform", "range"});
}

TEST_CASE("times in ms become integral microseconds") {
  // SimTime is µs; every *_ms integer is multiplied by 1000.
  json doc = base();
  doc["duration_ms"] = 40000;
  doc["consumers"][0]["poll_timeout_ms"] = 250;
  doc["events"] = {
      {{"at_ms", 1500}, {"do", "restart"}, {"consumer", "A"}, {"after_ms", 2}, {"graceful", false}},
      {{"at_ms", 1600}, {"do", "pause"}, {"consumer", "B"}, {"for_ms", 7}},
      {{"at_ms", 1700}, {"do", "fail-coordinator"}, {"group", "g"}, {"down_ms", 9}},
      {{"at_ms", 1800},
       {"do", "network"},
       {"between", {"*", "coordinator"}},
       {"latency_ms", 0.25},
       {"drop_rate", 0.1}}};
  const auto s = rsim::parse_scenario(doc, "x.json");
  CHECK(s.duration.count() == 40'000'000);
  CHECK(s.consumers[0].poll_timeout.count() == 250'000);
  REQUIRE(s.events.size() == 4);
  CHECK(s.events[0].at.count() == 1'500'000);
  const auto* restart = s.events[0].as<rsim::verb::Restart>();
  REQUIRE(restart != nullptr);
  CHECK(restart->consumer == "A");
  CHECK(restart->after.count() == 2000);
  CHECK_FALSE(restart->graceful);
  const auto* pause = s.events[1].as<rsim::verb::Pause>();
  REQUIRE(pause != nullptr);
  CHECK(pause->for_.count() == 7000);
  const auto* fail = s.events[2].as<rsim::verb::FailCoordinator>();
  REQUIRE(fail != nullptr);
  CHECK(fail->group == "g");
  CHECK(fail->down.count() == 9000);
  CHECK(fail->has_down);
  const auto* net = s.events[3].as<rsim::verb::Network>();
  REQUIRE(net != nullptr);
  CHECK(net->between == std::vector<std::string>{"*", "coordinator"});
  REQUIRE(net->latency.has_value());
  CHECK(net->latency->value == doctest::Approx(0.25));
  CHECK(net->drop_rate == doctest::Approx(0.1));
  CHECK_FALSE(net->has_for);
}

TEST_CASE("events are sorted by time, file order kept for equal times") {
  // The script reads top to bottom among simultaneous events.
  json doc = base();
  doc["events"] = {{{"at_ms", 3000}, {"do", "stop"}, {"consumer", "A"}},
                   {{"at_ms", 1000}, {"do", "start"}, {"consumer", "B"}},
                   {{"at_ms", 1000}, {"do", "start"}, {"consumer", "A"}},
                   {{"at_ms", 0}, {"do", "subscribe"}, {"consumer", "A"}, {"topics", {"orders"}}}};
  const auto s = rsim::parse_scenario(doc, "x.json");
  REQUIRE(s.events.size() == 4);
  CHECK(s.events[0].index == 3);
  CHECK(s.events[1].index == 1);
  CHECK(s.events[1].as<rsim::verb::Start>()->consumer == "B");
  CHECK(s.events[2].index == 2);
  CHECK(s.events[2].as<rsim::verb::Start>()->consumer == "A");
  CHECK(std::string(s.events[3].kind()) == "stop");
}

TEST_CASE("topics: produce as a rate or a gap distribution") {
  // records_per_sec becomes a constant gap of 1000/rate ms.
  json doc = base();
  doc["topics"][0]["produce"] = {{"records_per_sec", 20}};
  doc["topics"][0]["initial_records"] = 10;
  doc["topics"].push_back({{"name", "t2"},
                           {"partitions", 2},
                           {"produce", {{"gap_ms", {{"dist", "exponential"}, {"mean", 4}}}}}});
  doc["topics"].push_back({{"name", "t3"}, {"partitions", 1}, {"produce", 50}});
  auto s = rsim::parse_scenario(doc, "x.json");
  REQUIRE(s.topics[0].produce_gap.has_value());
  CHECK(s.topics[0].produce_gap->value == doctest::Approx(50));
  CHECK(s.topics[0].records_per_sec == 20);
  CHECK(s.topics[0].initial_records == 10);
  CHECK(s.topics[1].produce_gap->kind == sim::Distribution::Kind::Exponential);
  CHECK(s.topics[2].produce_gap->value == doctest::Approx(20));
  CHECK(s.topic("t2")->partitions == 2);
  CHECK(s.consumer("B")->group == "g");
  CHECK(s.consumer("Z") == nullptr);

  doc["topics"][0]["produce"] = {{"records_per_sec", 20}, {"gap_ms", 3}};
  doc["topics"][1]["produce"] = json::object();
  CHECK(problems(doc) == Problems{"/topics/0/produce: give records_per_sec or gap_ms, not both",
                                  "/topics/1/produce: needs records_per_sec or gap_ms"});
}

TEST_CASE("consumer config merge per protocol and the variant's assignors") {
  // config_by_protocol overrides config for its protocol; classic-* pick the assignors unless set.
  json doc = base();
  doc["protocols"] = {"classic-eager", "classic-cooperative", "consumer"};
  doc["consumers"][0]["config"] = {{"max.poll.records", 10}, {"group.instance.id", "a-1"}};
  doc["consumers"][0]["config_by_protocol"] = {
      {"classic", {{"session.timeout.ms", 10000}, {"max.poll.records", 20}}},
      {"consumer", {{"group.remote.assignor", "range"}}}};
  doc["consumers"][1]["config_by_protocol"] = {
      {"classic", {{"partition.assignment.strategy", "roundrobin"}}}};
  const auto s = rsim::parse_scenario(doc, "x.json");

  const auto eager = rsim::resolve_consumer_config(s.consumers[0], "classic-eager", 1);
  CHECK(eager.group_protocol == "classic");
  CHECK(eager.group_id == "g");
  // A static member's default client.id is consumer-<group.id>-<group.instance.id>
  // (ConsumerConfig.maybeOverrideClientId), whatever the process's sequence number.
  CHECK(eager.client_id == "consumer-g-a-1");
  CHECK(eager.group_instance_id == std::optional<std::string>("a-1"));
  CHECK(eager.session_timeout_ms == 10000);
  CHECK(eager.max_poll_records == 20);
  CHECK(eager.partition_assignment_strategy ==
        std::vector<std::string>{"range", "cooperative-sticky"});
  CHECK_FALSE(eager.group_remote_assignor.has_value());

  const auto coop = rsim::resolve_consumer_config(s.consumers[0], "classic-cooperative", 2);
  CHECK(coop.partition_assignment_strategy == std::vector<std::string>{"cooperative-sticky"});
  CHECK(coop.client_id == "consumer-g-a-1");

  const auto kip848 = rsim::resolve_consumer_config(s.consumers[0], "consumer", 1);
  CHECK(kip848.group_protocol == "consumer");
  CHECK(kip848.session_timeout_ms == 45000);
  CHECK(kip848.max_poll_records == 10);
  CHECK(kip848.group_remote_assignor == std::optional<std::string>("range"));

  const auto own = rsim::resolve_consumer_config(s.consumers[1], "classic-cooperative", 3);
  CHECK(own.partition_assignment_strategy == std::vector<std::string>{"roundrobin"});
  CHECK(own.heartbeat_interval_ms == 3000);
  CHECK(own.max_poll_interval_ms == 300000);
  CHECK(own.auto_offset_reset == "latest");
  // A dynamic member: consumer-<group.id>-<n>, n the process's sequence number.
  CHECK(own.client_id == "consumer-g-3");
  CHECK(rsim::resolve_consumer_config(s.consumers[1], "classic-eager", 1).client_id ==
        "consumer-g-1");
  CHECK(own.enable_auto_commit);

  doc["consumers"][0]["config"]["client.id"] = "mine";
  const auto named = rsim::parse_scenario(doc, "x.json");
  CHECK(rsim::resolve_consumer_config(named.consumers[0], "consumer", 1).client_id == "mine");
  CHECK(rsim::group_protocol_of("share") == "share");
}

TEST_CASE("load_scenario_file hashes the file's bytes with SHA-256") {
  // The digest is of the bytes as stored, so summaries name the exact input.
  const std::string content = "{\"name\": \"hash-me\"}\n";
  const auto path = write_temp("hash.json", content);
  const auto s = rsim::load_scenario_file(path);
  CHECK(s.name == "hash-me");
  CHECK(s.source_path == path);
  // sha256sum of the 20 bytes above.
  CHECK(s.sha256 == "bbf20054e5d9caa07702c5784ea35e07a1ef8e825a3544aa16679bc30d227034");
}

// --- schema and loader agree ---

namespace {

json load_schema() {
  std::ifstream in(std::string(RSIM_SOURCE_DIR) + "/scenarios/schema.json");
  REQUIRE(in.good());
  return json::parse(in);
}

std::set<std::string> keys_of(const json& object_schema) {
  std::set<std::string> keys;
  for (const auto& [k, v] : object_schema.at("properties").items()) keys.insert(k);
  return keys;
}

std::set<std::string> as_set(const std::vector<std::string>& v) {
  return {v.begin(), v.end()};
}

std::string def_name(std::string level) {
  for (char& c : level) {
    if (c == ':') c = '_';
  }
  return level;
}

}  // namespace

TEST_CASE("schema.json lists exactly the keys the loader accepts, at every level") {
  // Editors validate with the schema; a key one accepts and the other rejects is a bug.
  const json schema = load_schema();
  CHECK(schema.at("$schema") == "https://json-schema.org/draft/2020-12/schema");
  const json& defs = schema.at("$defs");
  for (const auto& row : rsim::scenario_accepted_keys()) {
    const auto& level = std::get<0>(row);
    const auto& keys = std::get<1>(row);
    CAPTURE(level);
    const json& object_schema = level == "scenario" ? schema : defs.at(def_name(level));
    CHECK(keys_of(object_schema) == as_set(keys));
    CHECK(object_schema.at("additionalProperties") == false);
    const auto req = rsim::scenario_required_keys().find(level);
    const std::vector<std::string> required =
        req == rsim::scenario_required_keys().end() ? std::vector<std::string>{} : req->second;
    const auto schema_required = object_schema.contains("required")
                                     ? object_schema.at("required").get<std::vector<std::string>>()
                                     : std::vector<std::string>{};
    CHECK(as_set(schema_required) == as_set(required));
  }
  std::set<std::string> consumer_keys;
  for (const auto& s : rsim::consumer_config_specs()) consumer_keys.insert(s.key);
  CHECK(keys_of(defs.at("consumer_config")) == consumer_keys);
  CHECK(defs.at("consumer_config").at("additionalProperties") == false);
  std::set<std::string> broker_keys;
  for (const auto& s : rsim::broker_config_specs()) broker_keys.insert(s.key);
  CHECK(keys_of(defs.at("broker_config")) == broker_keys);
  CHECK(defs.at("broker_config").at("additionalProperties") == false);
}

TEST_CASE("schema.json enumerates the loader's names") {
  // Event kinds, distributions, protocol variants, ops and assignors are the same lists.
  const json schema = load_schema();
  const json& defs = schema.at("$defs");
  std::set<std::string> kinds;
  for (const auto& alt : defs.at("event").at("oneOf")) {
    const std::string ref = alt.at("$ref");
    const std::string name = ref.substr(ref.rfind('/') + 1);
    kinds.insert(defs.at(name).at("properties").at("do").at("const").get<std::string>());
  }
  CHECK(kinds == as_set(rsim::event_kinds()));
  std::set<std::string> dists;
  for (const auto& alt : defs.at("distribution").at("oneOf")) {
    if (!alt.contains("$ref")) continue;
    const std::string ref = alt.at("$ref");
    const std::string name = ref.substr(ref.rfind('/') + 1);
    dists.insert(defs.at(name).at("properties").at("dist").at("const").get<std::string>());
  }
  CHECK(dists == as_set(rsim::distribution_kinds()));
  CHECK(as_set(defs.at("protocol_variant").at("enum").get<std::vector<std::string>>()) ==
        as_set(rsim::protocol_variants()));
  const auto* strategy = rsim::find_consumer_config("partition.assignment.strategy");
  REQUIRE(strategy != nullptr);
  std::set<std::string> short_names;
  for (const auto& name : defs.at("client_assignor").at("enum")) {
    const std::string n = name.get<std::string>();
    CHECK(rsim::client_assignor_short_name(n) != "");
    short_names.insert(rsim::client_assignor_short_name(n));
  }
  CHECK(short_names == as_set(strategy->allowed));
}

TEST_CASE("sample documents: the contract's example loads, bad samples fail") {
  // The same documents are checked against schema.json by python's jsonschema in the docs.
  const json example = json::parse(R"({
    "$schema": "../schema.json",
    "name": "two-consumers",
    "description": "A owns all six partitions; B joins, later B leaves.",
    "seed": 7,
    "duration_ms": 40000,
    "protocols": ["classic-eager", "consumer"],
    "cluster": {"brokers": 1,
                "config": {"group.initial.rebalance.delay.ms": 0,
                           "offsets.topic.num.partitions": 50}},
    "network": {"latency_ms": {"dist": "constant", "value": 1}},
    "topics": [{"name": "orders", "partitions": 6, "initial_records": 10,
                "produce": {"records_per_sec": 20}}],
    "consumers": [
      {"name": "A", "group": "g", "topics": ["orders"]},
      {"name": "B", "group": "g", "topics": ["orders"],
       "config": {"max.poll.records": 500},
       "processing": {"per_record_ms": 2},
       "callbacks": {"revoke_ms": 0, "assign_ms": 0}}],
    "events": [
      {"at_ms": 1000, "do": "start", "consumer": "A"},
      {"at_ms": 3000, "do": "start", "consumer": "B"},
      {"at_ms": 20000, "do": "stop", "consumer": "B"}],
    "expect": [
      {"protocol": "classic-eager", "metric": "rebalance_count", "op": "==", "value": 3}]
  })");
  const auto s = rsim::parse_scenario(example, "two-consumers.json");
  CHECK(s.seed == 7);
  CHECK(s.events.size() == 3);
  CHECK(s.expect.size() == 1);
  CHECK(s.expect[0].protocol == std::optional<std::string>("classic-eager"));
}

TEST_CASE(
    "expectation values and order matchers: typed, and back to the file's JSON byte for byte") {
  json doc = base();
  doc["expect"] = json::parse(R"([
    {"metric": "rebalance_count", "op": "==", "value": 3},
    {"metric": "max_lag", "op": "<=", "value": 2.50},
    {"metric": "max_lag", "op": "<", "value": 1e3},
    {"metric": "max_lag", "op": "!=", "value": -7},
    {"metric": "max_lag", "op": "==", "value": 18446744073709551615},
    {"metric": "rebalances/0/critical_path/dominant", "op": "==", "value": "heartbeat_wait_ms"},
    {"metric": "max_lag", "op": "between", "value": [0, 10.5]},
    {"metric": "max_lag", "op": "==", "value": {"b": [true, null], "a": "x"}},
    {"expect": "order", "first": {"type": "callback", "phase": "end", "consumer": "A"},
     "then": {"type": "consumer.stop"}}])");
  const auto s = rsim::parse_scenario(doc, "x.json");
  REQUIRE(s.expect.size() == 9);
  // The number kinds stay apart: an integer, a fraction, 1e3 (a double: 1000.0), a negative
  // integer, an unsigned one beyond int64.
  CHECK(std::get<std::uint64_t>(s.expect[0].value.v) == 3);
  CHECK(std::get<double>(s.expect[1].value.v) == 2.5);
  CHECK(s.expect[2].value.number() == 1000.0);
  CHECK(std::get<std::int64_t>(s.expect[3].value.v) == -7);
  CHECK(std::get<std::uint64_t>(s.expect[4].value.v) == 18446744073709551615ULL);
  CHECK(std::get<std::string>(s.expect[5].value.v) == "heartbeat_wait_ms");
  REQUIRE(s.expect[6].value.array() != nullptr);
  CHECK(s.expect[6].value.array()->at(1).number() == 10.5);
  const std::vector<std::string> dumped{"3",
                                        "2.5",
                                        "1000.0",
                                        "-7",
                                        "18446744073709551615",
                                        "\"heartbeat_wait_ms\"",
                                        "[0,10.5]",
                                        R"({"a":"x","b":[true,null]})"};
  for (std::size_t i = 0; i < dumped.size(); ++i)
    CHECK(json(s.expect[i].value).dump() == dumped[i]);
  // A matcher: its type apart from the fields it must equal; back to JSON as the file wrote it.
  const auto& order = s.expect[8];
  CHECK(order.first.type == "callback");
  CHECK(order.first.fields.size() == 2);
  CHECK(std::get<std::string>(order.first.fields.at("phase").v) == "end");
  CHECK(order.then.type == "consumer.stop");
  CHECK(order.then.fields.empty());
  CHECK(json(order.first).dump() == R"({"consumer":"A","phase":"end","type":"callback"})");
  CHECK(json(order.then).dump() == R"({"type":"consumer.stop"})");
}

TEST_CASE(
    "config values back to JSON: the trace's consumer.config writes them as the file's normalized "
    "JSON") {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["session.timeout.ms"] = rsim::ConfigValue(30000);
  j["enable.auto.commit"] = rsim::ConfigValue(false);
  j["group.protocol"] = rsim::ConfigValue("consumer");
  j["partition.assignment.strategy"] =
      rsim::ConfigValue(rsim::ConfigValue::List{"range", "sticky"});
  CHECK(j.dump() ==
        R"({"session.timeout.ms":30000,"enable.auto.commit":false,"group.protocol":"consumer",)"
        R"("partition.assignment.strategy":["range","sticky"]})");
}

TEST_CASE("sample documents: the loader accepts and rejects what schema.json does") {
  // These samples were also checked against scenarios/schema.json with python-jsonschema
  // (Draft202012Validator); both must agree on each.
  const std::vector<std::pair<const char*, bool>> samples{
      {R"({"name":"x","duraton_ms":1})", false},
      {R"({"name":"x","consumers":[{"name":"A","group":"g","topics":[],
           "config":{"session.timeout.ms":1}}]})",
       false},
      {R"({"name":"x","protocols":["share","classic-eager"],"consumers":[{"name":"A","group":"g",
           "topics":[],"config":{"group.remote.assignor":"range"}}]})",
       false},
      {R"({"name":"x","consumers":[{"name":"A","group":"g","topics":[],
           "config":{"sesion.timeout.ms":1}}]})",
       false},
      {R"({"name":"x","consumers":[{"name":"A","group":"g","topics":[]}],
           "events":[{"at_ms":1,"do":"start","consumer":"A","for_ms":3}]})",
       false},
      {R"({"name":"x","consumers":[{"name":"A","group":"g","topics":[]}],
           "events":[{"at_ms":1,"do":"network","between":["A","*"]}]})",
       false},
      {R"({"name":"x","consumers":[{"name":"A","group":"g","topics":[],
           "config_by_protocol":{"consumer":{"session.timeout.ms":1}}}]})",
       false},
      {R"({"name":"x","network":{"latency_ms":{"dist":"normal","mean":1}}})", false},
      {R"({"name":"x","expect":[{"metric":"m","op":"<","value":"3"}]})", false},
      {R"({"name":"x","consumers":[{"name":"broker-1","group":"g","topics":[]}]})", false},
      {R"({"name":"x","protocols":["classic-cooperative"],"consumers":[{"name":"A","group":"g",
           "topics":[],"config":{"session.timeout.ms":10000}}]})",
       true},
      {R"({"name":"x","protocols":["consumer"],"consumers":[{"name":"A","group":"g","topics":[],
           "config":{"group.remote.assignor":"range"}}]})",
       true},
      {R"({"name":"x","consumers":[{"name":"A","group":"g","topics":[],
           "config":{"max.poll.records":"45000","enable.auto.commit":"FALSE"},
           "config_by_protocol":{"consumer":{"group.remote.assignor":
             "org.apache.kafka.coordinator.group.assignor.RangeAssignor"}}}]})",
       true},
      {R"({"name":"x","consumers":[{"name":"A","group":"g","topics":[]}],
           "events":[{"at_ms":1,"do":"network","between":["A","*"],
                      "latency_ms":{"dist":"uniform","min":1,"max":2},"for_ms":5}],
           "cluster":{"write_latency_ms":0.5,"config":{"group.consumer.assignors":["range"]}}})",
       true},
      {R"({"name":"x","topics":[{"name":"t","partitions":1,
           "produce":{"gap_ms":{"dist":"exponential","mean":2}}}]})",
       true},
  };
  for (const auto& row : samples) {
    const auto& text = std::get<0>(row);
    const auto& valid = std::get<1>(row);
    CAPTURE(text);
    CHECK(problems(json::parse(text)).empty() == valid);
  }
}

TEST_CASE("the complete example of docs/writing-scenarios.md loads") {
  // The documentation's example must stay a valid scenario.
  std::ifstream in(std::string(RSIM_SOURCE_DIR) + "/docs/writing-scenarios.md");
  REQUIRE(in.good());
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto heading = text.find("## A complete example");
  REQUIRE(heading != std::string::npos);
  const auto open = text.find("```json\n", heading);
  REQUIRE(open != std::string::npos);
  const auto close = text.find("```", open + 8);
  REQUIRE(close != std::string::npos);
  const auto s = rsim::parse_scenario(json::parse(text.substr(open + 8, close - open - 8)),
                                      "docs/writing-scenarios.md");
  CHECK(s.protocols.size() == 3);
  CHECK(s.consumers.size() == 3);
  CHECK(rsim::resolve_consumer_config(*s.consumer("B"), "classic-eager", 2).session_timeout_ms ==
        10000);
  CHECK(rsim::resolve_consumer_config(*s.consumer("C"), "consumer", 3).max_poll_records == 100);
}

TEST_CASE("on_stop and the broker events") {
  // on_stop is wakeup (default) or after_poll.
  json doc = base();
  CHECK(rsim::parse_scenario(doc, "x.json").consumers[0].on_stop == rsim::StopMode::Wakeup);
  doc["consumers"][0]["on_stop"] = "after_poll";
  CHECK(rsim::parse_scenario(doc, "x.json").consumers[0].on_stop == rsim::StopMode::AfterPoll);
  doc["consumers"][0]["on_stop"] = "wakup";
  CHECK(problems(doc) ==
        Problems{"/consumers/0/on_stop: unknown on_stop \"wakup\"; did you mean \"wakeup\"?"});
  // Broker events name a broker id below cluster.brokers (1 in base()).
  CHECK(with_event({{"at_ms", 1}, {"do", "stop-broker"}}) == Problems{"/events/1/broker: missing"});
  CHECK(with_event({{"at_ms", 1}, {"do", "restart-broker"}, {"broker", 0}}) ==
        Problems{"/events/1/after_ms: missing"});
  CHECK(with_event({{"at_ms", 1}, {"do", "crash-broker"}, {"broker", 1}}) ==
        Problems{
            "/events/1/broker: must be <= 0 (broker ids are 0..0: cluster.brokers is 1), got 1"});
  CHECK(with_event({{"at_ms", 1}, {"do", "start-broker"}, {"broker", "broker-0"}}) ==
        Problems{"/events/1/broker: must be an integer, got \"broker-0\""});
  CHECK(
      with_event({{"at_ms", 1}, {"do", "stop-broker"}, {"broker", 0}, {"consumer", "A"}}).size() ==
      1);
  doc = base();
  doc["events"].push_back({{"at_ms", 5000},
                           {"do", "restart-broker"},
                           {"broker", 0},
                           {"after_ms", 100},
                           {"graceful", false}});
  const auto s = rsim::parse_scenario(doc, "x.json");
  REQUIRE(s.events.back().as<rsim::verb::RestartBroker>() != nullptr);
  CHECK(s.events.back().as<rsim::verb::RestartBroker>()->broker == 0);
  CHECK(s.events.back().as<rsim::verb::RestartBroker>()->after == sim::ms(100));
  CHECK_FALSE(s.events.back().as<rsim::verb::RestartBroker>()->graceful);
}

TEST_CASE("group configs: share keys per group, validated as Kafka's GroupConfig does") {
  json doc = base();
  doc["groups"] = {{"g",
                    {{"config",
                      {{"share.record.lock.duration.ms", "20000"},
                       {"share.delivery.count.limit", 3},
                       {"share.auto.offset.reset", "by_duration:PT10S"},
                       {"share.isolation.level", "read_committed"},
                       {"share.renew.acknowledge.enable", "false"}}}}}};
  const rsim::ScenarioSpec spec = rsim::parse_scenario(doc, "x.json");
  REQUIRE(spec.group_configs.count("g") == 1);
  const rsim::ShareGroupConfig c =
      rsim::resolve_share_group_config(rsim::BrokerConfig{}, spec.group_configs.at("g"));
  CHECK(c.record_lock_duration_ms == 20000);
  CHECK(c.delivery_count_limit == 3);
  CHECK(c.auto_offset_reset == "by_duration");
  CHECK(c.auto_offset_reset_duration_ms == 10000);
  CHECK(c.isolation_level == "read_committed");
  CHECK_FALSE(c.renew_acknowledge_enable);
  CHECK(c.session_timeout_ms == 45000);  // the broker's group.share.session.timeout.ms
  CHECK(c.heartbeat_interval_ms == 5000);

  // Out of the broker's bounds, with Kafka's messages; unknown and unmodelled keys; a group no
  // consumer is in.
  doc["groups"] = {{"g",
                    {{"config",
                      {{"share.record.lock.duration.ms", 5000},
                       {"share.delivery.count.limit", 11},
                       {"share.session.timeout.ms", 50000},
                       {"share.heartbeat.interval.ms", 6000},
                       {"share.auto.offset.reset", "none"}}}}},
                   {"h", {{"config", json::object()}}}};
  const Problems bad = problems(doc);
  const std::set<std::string> got(bad.begin(), bad.end());
  CHECK(
      got ==
      std::set<std::string>{
          "/groups/g/config/share.auto.offset.reset: Invalid value `none` for configuration "
          "share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format "
          "'by_duration:<PnDTnHnMn.nS>'.",
          "/groups/g/config/share.delivery.count.limit: share.delivery.count.limit must be in the "
          "range "
          "2 to 10 inclusive.",
          "/groups/g/config/share.record.lock.duration.ms: share.record.lock.duration.ms must be "
          "in the "
          "range 15000 to 60000 inclusive.",
          "/groups/h: no consumer is in this group (the consumers' groups: g)",
      });
  doc["groups"] = {{"g",
                    {{"config",
                      {{"share.session.timeout.ms", 45000},
                       {"share.heartbeat.interval.ms", 15000},
                       {"share.record.lock.duration", 20000},
                       {"consumer.session.timeout.ms", 45000},
                       {"share.delivery.count.limit", "five"}}}}}};
  const Problems more = problems(doc);
  const std::set<std::string> got2(more.begin(), more.end());
  CHECK(got2 ==
        std::set<std::string>{
            "/groups/g/config/consumer.session.timeout.ms: is a kafka group config the simulator "
            "does not model",
            "/groups/g/config/share.delivery.count.limit: must be an integer, got \"five\"",
            "/groups/g/config/share.record.lock.duration: unknown kafka group config; did you mean "
            "\"share.record.lock.duration.ms\"?",
        });
  doc["groups"] = {
      {"g",
       {{"config",
         {{"share.session.timeout.ms", 45000}, {"share.heartbeat.interval.ms", 15000}}}}}};
  CHECK(problems(doc) == Problems{});
  doc["groups"] = {
      {"g",
       {{"config",
         {{"share.session.timeout.ms", 50000}, {"share.heartbeat.interval.ms", 15000}}}}}};
  CHECK(problems(doc) == Problems{});
  CHECK(rsim::parse_iso8601_duration_ms("PT1H30M") == 5400000);
  CHECK(rsim::parse_iso8601_duration_ms("P1DT0.5S") == 86400500);
  CHECK(rsim::parse_iso8601_duration_ms("-PT1S") == -1000);
  CHECK_FALSE(rsim::parse_iso8601_duration_ms("PT").has_value());
  CHECK_FALSE(rsim::parse_iso8601_duration_ms("10s").has_value());
  CHECK_FALSE(rsim::parse_iso8601_duration_ms("P1H").has_value());
}

TEST_CASE("schema.json lists the modelled group configs") {
  const json schema = load_schema();
  std::set<std::string> keys;
  for (const auto& s : rsim::group_config_specs()) keys.insert(s.key);
  CHECK(keys_of(schema.at("$defs").at("group_config")) == keys);
  CHECK(schema.at("$defs").at("group_config").at("additionalProperties") == false);
}

// --- start/restart config: a new incarnation's Kafka configs ---

TEST_CASE("a restart's config is read like a consumer's config, group.protocol included") {
  json doc = base();
  doc["events"].push_back(
      {{"at_ms", 2000},
       {"do", "restart"},
       {"consumer", "A"},
       {"after_ms", 100},
       {"config", {{"group.protocol", "consumer"}, {"max.poll.records", "50"}}}});
  doc["events"].push_back({{"at_ms", 3000},
                           {"do", "start"},
                           {"consumer", "B"},
                           {"config",
                            {{"group.protocol", "classic"},
                             {"partition.assignment.strategy",
                              "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"}}}});
  const auto spec = rsim::parse_scenario(doc, "x.json");
  REQUIRE(spec.events.size() == 3);
  const auto* restart = spec.events[1].as<rsim::verb::Restart>();
  REQUIRE(restart != nullptr);
  CHECK(restart->has_config);
  CHECK(restart->config.at("group.protocol") == "consumer");
  CHECK(restart->config.at("max.poll.records") == 50);  // normalized as consumer configs are
  REQUIRE(spec.events[2].as<rsim::verb::Start>() != nullptr);
  CHECK(spec.events[2].as<rsim::verb::Start>()->config.at("partition.assignment.strategy") ==
        json::array({"cooperative-sticky"}));
  CHECK_FALSE(spec.events[0].as<rsim::verb::Start>()->has_config);
}

TEST_CASE(
    "a restart's config: bad values and keys Kafka refuses under the incarnation's protocol") {
  CHECK(with_event({{"at_ms", 2000},
                    {"do", "restart"},
                    {"consumer", "A"},
                    {"after_ms", 0},
                    {"config", {{"group.protocol", "share"}}}}) ==
        Problems{"/events/1/config/group.protocol: share groups are their own variant (a share "
                 "consumer is a different client); use \"protocols\""});
  CHECK(with_event({{"at_ms", 2000},
                    {"do", "restart"},
                    {"consumer", "A"},
                    {"after_ms", 0},
                    {"config", {{"group.protocol", "consumr"}}}}) ==
        Problems{"/events/1/config/group.protocol: must be \"classic\" or \"consumer\", got "
                 "\"consumr\"; did you mean \"consumer\"?"});
  CHECK(with_event({{"at_ms", 2000},
                    {"do", "restart"},
                    {"consumer", "A"},
                    {"after_ms", 0},
                    {"config", {{"group.protocol", "consumer"}, {"session.timeout.ms", 10000}}}}) ==
        Problems{"/events/1/config/session.timeout.ms: kafka rejects this key with "
                 "group.protocol=consumer, the protocol of this incarnation"});
  // Without group.protocol the incarnation runs every protocol of the scenario.
  CHECK(with_event({{"at_ms", 2000},
                    {"do", "restart"},
                    {"consumer", "A"},
                    {"after_ms", 0},
                    {"config", {{"partition.assignment.strategy", "range"}}}}) ==
        Problems{"/events/1/config/partition.assignment.strategy: kafka rejects this key with "
                 "group.protocol=consumer, which the scenario runs; set group.protocol in this "
                 "config"});
  const auto on_stop =
      with_event({{"at_ms", 2000}, {"do", "stop"}, {"consumer", "A"}, {"config", json::object()}});
  REQUIRE(on_stop.size() == 1);
  CHECK(on_stop[0] ==
        "/events/1/config: not a field of a \"stop\" event");  // only start and restart
  // A consumer's own config with a key the new protocol refuses must move to config_by_protocol.
  json doc = base();
  doc["protocols"] = {"classic-eager"};
  doc["consumers"][0]["config"] = {{"session.timeout.ms", 10000}};
  doc["events"].push_back({{"at_ms", 2000},
                           {"do", "restart"},
                           {"consumer", "A"},
                           {"after_ms", 0},
                           {"config", {{"group.protocol", "consumer"}}}});
  CHECK(problems(doc) == Problems{"/consumers/0/config/session.timeout.ms: kafka rejects this key "
                                  "with group.protocol=consumer, which /events/1/config sets; move "
                                  "it into config_by_protocol.classic"});
  // The classic heartbeat bound holds per incarnation.
  CHECK(
      with_event({{"at_ms", 2000},
                  {"do", "restart"},
                  {"consumer", "A"},
                  {"after_ms", 0},
                  {"config", {{"group.protocol", "classic"}, {"heartbeat.interval.ms", 50000}}}}) ==
      Problems{"/events/1/config: heartbeat.interval.ms (50000) must be < session.timeout.ms "
               "(45000) in this incarnation"});
}

TEST_CASE("a lesson's watch_for steps: a non-empty list of non-empty strings") {
  // scenarios/lessons/ (docs/playground.md): the run ignores the field, the loader checks it.
  json doc = base();
  doc["lesson"] = {{"watch_for", {"A joins", "B joins"}}};
  CHECK(problems(doc).empty());
  doc["lesson"] = {{"watch_for", {"A joins", 1, ""}}, {"watch", true}};
  CHECK(problems(doc) == Problems{"/lesson/watch: unknown key; did you mean \"watch_for\"?",
                                  "/lesson/watch_for/1: must be a non-empty string, got 1",
                                  "/lesson/watch_for/2: must be a non-empty string, got \"\""});
  doc["lesson"] = {{"watch_for", json::array()}};
  CHECK(problems(doc) ==
        Problems{"/lesson/watch_for: must be a non-empty list of strings, got []"});
  doc["lesson"] = "steps";
  CHECK(problems(doc) == Problems{"/lesson: must be an object, got \"steps\""});
}

TEST_CASE("a lesson's rebalance_from_ms: an integer time below duration_ms, kept in the spec") {
  // The rebalance the lesson is about (report.html's step control opens it, issue 35).
  json doc = base();
  doc["lesson"] = {{"watch_for", {"B joins"}}, {"rebalance_from_ms", 10000}};
  CHECK(problems(doc).empty());
  CHECK(rsim::parse_scenario(doc, "s.json").lesson_rebalance_from_ms == 10000);
  doc["lesson"] = {{"watch_for", {"B joins"}}};
  CHECK_FALSE(rsim::parse_scenario(doc, "s.json").lesson_rebalance_from_ms.has_value());
  doc["lesson"] = {{"rebalance_from_ms", 60000}};
  CHECK(
      problems(doc) ==
      Problems{"/lesson/rebalance_from_ms: must be < duration_ms (60000), got 60000: no rebalance "
               "starts after the run"});
  doc["lesson"] = {{"rebalance_from_ms", "10 s"}, {"rebalance", 2}};
  CHECK(problems(doc) ==
        Problems{"/lesson/rebalance: unknown key; did you mean \"rebalance_from_ms\"?",
                 "/lesson/rebalance_from_ms: must be an integer, got \"10 s\""});
  doc["lesson"] = {{"rebalance_from_ms", -1}};
  CHECK(problems(doc) == Problems{"/lesson/rebalance_from_ms: must be >= 0, got -1"});
}

TEST_CASE("each verb becomes its own struct with only its fields") {
  // The `do` list is the closed variant's, in the order of the format documentation.
  CHECK(rsim::event_kinds() ==
        std::vector<std::string>{"start", "stop", "crash", "restart", "stall", "pause", "subscribe",
                                 "add-partitions", "network", "partition-network",
                                 "fail-coordinator", "produce", "stop-broker", "crash-broker",
                                 "start-broker", "restart-broker", "rollout", "drain-node"});
  for (const auto& kind : rsim::event_kinds()) {
    const auto v = rsim::verb_named(kind);
    REQUIRE(v.has_value());
    CHECK(std::string(rsim::verb_name(*v)) == kind);
  }
  CHECK_FALSE(rsim::verb_named("restart-consumer").has_value());
  json doc = base();
  doc["cluster"] = {{"brokers", 2}};
  doc["events"] = {
      {{"at_ms", 1000},
       {"do", "start"},
       {"consumer", "A"},
       {"config", {{"max.poll.records", 100}}}},
      {{"at_ms", 2000}, {"do", "stall"}, {"consumer", "B"}, {"for_ms", 1500}},
      {{"at_ms", 3000}, {"do", "add-partitions"}, {"topic", "orders"}, {"partitions", 8}},
      {{"at_ms", 4000},
       {"do", "partition-network"},
       {"between", {"A", "broker-1"}},
       {"for_ms", 250}},
      {{"at_ms", 5000}, {"do", "produce"}, {"topic", "orders"}, {"records_per_sec", 40}},
      {{"at_ms", 6000},
       {"do", "restart-broker"},
       {"broker", 1},
       {"after_ms", 700},
       {"graceful", false}}};
  const auto s = rsim::parse_scenario(doc, "x.json");
  REQUIRE(s.events.size() == 6);
  const auto* start = s.events[0].as<rsim::verb::Start>();
  REQUIRE(start != nullptr);
  CHECK(start->consumer == "A");
  CHECK(start->has_config);
  CHECK(start->config.at("max.poll.records") == 100);
  CHECK(rsim::verb_config(s.events[0].verb) == &start->config);
  CHECK(*rsim::verb_consumer(s.events[1].verb) == "B");
  CHECK(s.events[1].as<rsim::verb::Stall>()->for_.count() == 1'500'000);
  CHECK(s.events[1].as<rsim::verb::Pause>() == nullptr);
  CHECK(s.events[2].as<rsim::verb::AddPartitions>()->partitions == 8);
  CHECK(rsim::verb_consumer(s.events[2].verb) == nullptr);
  const auto* cut = s.events[3].as<rsim::verb::PartitionNetwork>();
  REQUIRE(cut != nullptr);
  CHECK(cut->between == std::vector<std::string>{"A", "broker-1"});
  CHECK(cut->for_.count() == 250'000);
  const auto* produce = s.events[4].as<rsim::verb::Produce>();
  REQUIRE(produce != nullptr);
  CHECK(produce->records_per_sec == 40);
  CHECK(produce->produce_gap->value == doctest::Approx(25));  // 1000 ms / 40 records
  const auto* bounce = s.events[5].as<rsim::verb::RestartBroker>();
  REQUIRE(bounce != nullptr);
  CHECK(bounce->broker == 1);
  CHECK(bounce->after.count() == 700'000);
  CHECK_FALSE(bounce->graceful);
  CHECK(std::string(s.events[5].kind()) == "restart-broker");
}
