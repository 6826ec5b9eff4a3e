// Issue 41, second half: exit 3 only for our own bugs (every input path validated into exit 2
// with the file and the JSON path or line), bounded resources (report linear in the trace,
// compare streaming a recording, limits on every list a scenario can grow), and messages
// (control characters escaped in stdout and JUnit, a trace ends with run.end, Kafka's long
// range, "seed": -0, exact numbers in limit messages).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "models/protocol/config.hpp"
#include "models/scenario/scenario.hpp"
#include "process_measure.hpp"
#include "reports/analyses/compare.hpp"
#include "reports/escape.hpp"
#include "reports/html_report.hpp"
#include "reports/narrative.hpp"
#include "reports/ordered_parse.hpp"
#include "reports/timeline.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::own_peak_rss_kib;
using testing::peak_rss_unmeasured;
using testing::run_cli;
using testing::run_measured;

namespace {

const char* kScenario = "scenarios/examples/two-consumers.json";

fs::path scratch(const std::string& tag) {
  const fs::path p =
      fs::temp_directory_path() / ("rsim-bounds-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return testing::remove_at_exit(p);
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

std::string problems_of(const json& doc) {
  try {
    rsim::parse_scenario(doc, "x.json");
  } catch (const rsim::ScenarioError& e) {
    return e.what();
  }
  return "";
}

json two_consumers() {
  std::ifstream in(std::string(RSIM_SOURCE_DIR) + "/" + kScenario);
  return json::parse(in);
}

// A run folder of the example scenario (classic-eager), written by the binary.
fs::path run_folder(const std::string& tag) {
  const fs::path dir = scratch(tag);
  const auto r = run_cli(std::string("run ") + kScenario + " --out " + (dir / "run").string(), tag);
  REQUIRE(r.code == 0);
  return dir / "run";
}

// As root, permissions do not keep anyone out: the command runs as nobody (setpriv) instead.
testing::CliResult run_cli_unprivileged(const std::string& args, const std::string& tag) {
  if (::geteuid() != 0) return run_cli(args, tag);
  const auto dir = fs::temp_directory_path();
  const std::string stem = "rebalance-sim-" + tag + "-" + std::to_string(getpid());
  const auto out = dir / (stem + ".out");
  const auto err = dir / (stem + ".err");
  const std::string cmd = std::string("cd ") + RSIM_SOURCE_DIR +
                          " && setpriv --reuid=65534 --regid=65534 --clear-groups " + RSIM_BINARY +
                          " " + args + " > " + out.string() + " 2> " + err.string();
  const int status = std::system(cmd.c_str());
  testing::CliResult r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, testing::read_file(out),
                       testing::read_file(err)};
  fs::remove(out);
  fs::remove(err);
  return r;
}

}  // namespace

// ---- Exit 3 only for our own bugs --------------------------------------------------------------

TEST_CASE(
    "input: a number beyond a double (1e400) is exit 2 with the file, line, column and JSON path") {
  const fs::path dir = scratch("1e400");
  json doc = two_consumers();
  std::string text = doc.dump(2);
  const std::string needle = "\"value\": 4";
  REQUIRE(text.find(needle) != std::string::npos);
  text.replace(text.find(needle), needle.size(), "\"value\": 1e400");
  write(dir / "big.json", text);
  // Where the number starts, counted as a reader counts.
  const std::size_t at = text.find("1e400");
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < at; ++i)
    if (text[i] == '\n') ++line, line_start = i + 1;
  const auto r = run_cli("validate " + (dir / "big.json").string(), "bounds-1e400");
  CHECK(r.code == 2);
  CHECK(r.err == fmt::format("{}: line {}, column {}: /expect/0/value: the number 1e400 is beyond "
                             "the range of a double "
                             "(at most 1.7976931348623157e308)\n",
                             (dir / "big.json").string(), line, at - line_start + 1));
  // The same for a negative one, and under check (one failed case, exit 2).
  text.replace(text.find("1e400"), 5, "-1e400");
  write(dir / "big.json", text);
  const auto c = run_cli("check " + (dir / "big.json").string(), "bounds-1e400-check");
  CHECK(c.code == 2);
  CHECK(c.out.find("/expect/0/value: the number -1e400 is beyond the range of a double") !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE(
    "input: summary.json of valid JSON but the wrong shape is exit 2 naming the file and the JSON "
    "path") {
  const fs::path run = run_folder("bounds-summary");
  const fs::path summary = run / "classic-eager" / "summary.json";
  const std::string good = testing::read_file(summary);
  write(summary, "[1, 2]\n");
  auto r = run_cli("report " + run.string(), "bounds-summary-1");
  CHECK(r.code == 2);
  CHECK(r.err == summary.string() +
                     ": the document must be an object (the summary a run writes), got [1,2]\n");
  json doc = json::parse(good);
  doc["rebalances"][0]["start_us"] = "soon";
  doc["rebalances"][1]["completed"] = 1;
  doc["seed"] = "7";
  write(summary, doc.dump(2));
  r = run_cli("report " + run.string(), "bounds-summary-2");
  CHECK(r.code == 2);
  CHECK(r.err == summary.string() + ": /seed: must be an integer, got \"7\"\n" + summary.string() +
                     ": /rebalances/0/start_us: must be a number, got \"soon\"\n" +
                     summary.string() +
                     ": /rebalances/1/completed: must be true or false, got 1\n");
  r = run_cli("explain " + run.string(), "bounds-summary-3");
  CHECK(r.code == 2);
  write(summary, good);
  CHECK(run_cli("report " + run.string(), "bounds-summary-4").code == 0);
  fs::remove_all(run.parent_path());
}

TEST_CASE(
    "input: a wrongly typed trace field under report --format csv is exit 2 naming the file and "
    "line") {
  const fs::path run = run_folder("bounds-csv");
  const fs::path trace = run / "classic-eager" / "trace.jsonl";
  std::string text = testing::read_file(trace);
  // The first response: its `dir` made a number.
  const std::size_t at = text.find("\"dir\":\"recv\"");
  REQUIRE(at != std::string::npos);
  const std::size_t line = static_cast<std::size_t>(std::count(
                               text.begin(), text.begin() + static_cast<long>(at), '\n')) +
                           1;
  text.replace(at, 12, "\"dir\":7");
  write(trace, text);
  const auto r = run_cli("report " + run.string() + " --format csv", "bounds-csv");
  CHECK(r.code == 2);
  CHECK(r.err.find(trace.string() + ": trace.jsonl line " + std::to_string(line)) == 0);
  fs::remove_all(run.parent_path());
}

TEST_CASE(
    "input: a trace cut at a line boundary is refused as truncated (report and compare), exit 2") {
  const fs::path run = run_folder("bounds-cut");
  const fs::path trace = run / "classic-eager" / "trace.jsonl";
  std::string text = testing::read_file(trace);
  text.erase(text.rfind('\n', text.size() - 2) + 1);  // the run.end line gone, the rest intact
  write(trace, text);
  auto r = run_cli("report " + run.string(), "bounds-cut-report");
  CHECK(r.code == 2);
  CHECK(r.err == trace.string() +
                     ": does not end with its run.end line: the trace was cut short (copy or "
                     "record it again)\n");
  // A recording without its last line: compare refuses it instead of calling it DIFFERS.
  const fs::path real = run.parent_path() / "real";
  fs::create_directories(real / "classic-eager");
  std::string rec = testing::read_file(fs::path(RSIM_SOURCE_DIR) /
                                       "fidelity/real/two-consumers/classic-eager/trace.jsonl");
  rec.erase(rec.rfind('\n', rec.size() - 2) + 1);
  const std::size_t lines = static_cast<std::size_t>(std::count(rec.begin(), rec.end(), '\n'));
  write(real / "classic-eager" / "trace.jsonl", rec);
  r = run_cli(std::string("compare ") + kScenario + " --real " + real.string(),
              "bounds-cut-compare");
  CHECK(r.code == 2);
  CHECK(r.err == fmt::format("{}: line {}: the trace ends without its run.end line: it was cut "
                             "short (record or copy it again)\n",
                             (real / "classic-eager" / "trace.jsonl").string(), lines));
  fs::remove_all(run.parent_path());
}

TEST_CASE("input: a meta.json of the wrong shape is exit 2 naming it") {
  const fs::path dir = scratch("meta");
  fs::create_directories(dir / "classic-eager");
  fs::copy_file(fs::path(RSIM_SOURCE_DIR) / "fidelity/real/two-consumers/classic-eager/trace.jsonl",
                dir / "classic-eager" / "trace.jsonl");
  write(dir / "classic-eager" / "meta.json", "[\"scenario_sha256\"]");
  auto r =
      run_cli(std::string("compare ") + kScenario + " --real " + dir.string(), "bounds-meta-1");
  CHECK(r.code == 2);
  CHECK(r.err ==
        (dir / "classic-eager" / "meta.json").string() +
            ": must be a JSON object (as the oracle writes it), got [\"scenario_sha256\"]\n");
  write(dir / "classic-eager" / "meta.json", "{\"scenario_sha256\": 5}");
  r = run_cli(std::string("compare ") + kScenario + " --real " + dir.string(), "bounds-meta-2");
  CHECK(r.code == 2);
  CHECK(r.err ==
        (dir / "classic-eager" / "meta.json").string() +
            ": /scenario_sha256: must be a string (the sha256 of the scenario file), got 5\n");
  fs::remove_all(dir);
}

TEST_CASE("input: check DIR with a subfolder that cannot be read is exit 2 naming it") {
  const fs::path dir = scratch("unreadable");
  fs::permissions(dir, fs::perms::all);
  fs::create_directories(dir / "locked");
  fs::copy_file(fs::path(RSIM_SOURCE_DIR) / kScenario, dir / "a.json");
  fs::permissions(dir / "locked", fs::perms::none);
  const auto r = run_cli_unprivileged("check " + dir.string(), "bounds-unreadable");
  fs::permissions(dir / "locked", fs::perms::owner_all);
  CHECK(r.code == 2);
  CHECK(r.err == (dir / "locked").string() + ": cannot list the folder: Permission denied\n");
  CHECK(r.out.empty());
  fs::remove_all(dir);
}

TEST_CASE("input: compare --out into an unwritable place is exit 2 naming it") {
  const fs::path dir = scratch("compare-out");
  write(dir / "file", "x");
  const auto r =
      run_cli(std::string("compare ") + kScenario + " --real fidelity/real/two-consumers --out " +
                  (dir / "file" / "sub").string(),
              "bounds-compare-out");
  CHECK(r.code == 2);
  CHECK(r.err.find("cannot write " + (dir / "file" / "sub").string() + ": Not a directory") !=
        std::string::npos);
  CHECK(testing::read_file(dir / "file") == "x");
  fs::remove_all(dir);
}

TEST_CASE(
    "input: compare --out on a nearly full disk is exit 2 with no compare.json and no staging "
    "folder") {
  const fs::path dir = scratch("compare-full");
  const std::string mount = "mount -t tmpfs -o size=256k tmpfs " + dir.string() + " 2>/dev/null";
  if (std::system(mount.c_str()) != 0) {
    MESSAGE(
        "cannot mount a tmpfs here (not privileged): the /dev/full test of OutputFile covers the "
        "write path");
    fs::remove_all(dir);
    return;
  }
  // Fill it up to a few KiB: report.html (tens of KiB) cannot be written whole.
  {
    std::ofstream fill(dir / "fill", std::ios::binary);
    const std::string block(4096, 'x');
    for (int i = 0; i < 62; ++i) fill << block;
  }
  const auto r = run_cli(std::string("compare ") + kScenario +
                             " --real fidelity/real/two-consumers --out " + (dir / "o").string(),
                         "bounds-compare-full");
  CHECK(r.code == 2);
  CHECK(r.err.find("cannot write " + (dir / "o").string()) != std::string::npos);
  CHECK(r.err.find("No space left on device") != std::string::npos);
  std::vector<std::string> left;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    left.push_back(fs::relative(e.path(), dir).string());
  std::sort(left.begin(), left.end());
  CHECK(left == std::vector<std::string>{"fill"});  // the folder this compare created goes again
  CHECK(std::system(("umount " + dir.string()).c_str()) == 0);
  fs::remove_all(dir);
}

TEST_CASE("input: explore keeps every other seed's result when one seed hits a watchdog bound") {
  const fs::path dir = scratch("explore-watchdog");
  // Under classic-eager, seeds 1..4 fire 8854, 7053, 8644 and 7219 events (run.end's `events`
  // of `run --faults-seed N`; three brokers: the followers' Fetches of replicated writes, finding
  // 22): --max-events 8760 stops seed 1 only.
  const auto r = run_cli(
      "explore scenarios/explore/two-groups-short.json --seeds 1..4 --protocol classic-eager "
      "--max-events 8760 --out " +
          dir.string(),
      "bounds-explore-watchdog");
  CHECK(r.code == 1);
  CHECK(r.out.find("  classic-eager: FAILED watchdog: watchdog: 8760 events fired, the limit of "
                   "one run, at t=39407750 us") != std::string::npos);
  CHECK(r.out.find("seed 1:") < r.out.find("FAILED watchdog"));
  CHECK(r.out.find("FAILED watchdog") < r.out.find("seed 2:"));
  CHECK(fs::exists(dir / "seed-1.json"));
  CHECK(r.out.find("= 4 runs, 1 violations in 1 seeds") != std::string::npos);
  std::size_t oks = 0;
  for (std::size_t at = r.out.find("classic-eager: ok"); at != std::string::npos;
       at = r.out.find("classic-eager: ok", at + 1))
    ++oks;
  CHECK(oks == 3);
  fs::remove_all(dir);
}

// ---- Bounded resources -------------------------------------------------------------------------

namespace {

/// A trace of two consumers rejoining `rebalances` times, 30 ms apart: per rebalance a JoinGroup
/// and a SyncGroup round trip of each member and an assignment each, then `heartbeats`
/// heartbeats each; and the summary of those rebalances.
struct RejoinLoop {
  std::string trace;
  nlohmann::ordered_json summary;
};
RejoinLoop rejoin_loop(int rebalances, int heartbeats) {
  RejoinLoop out;
  out.trace =
      "{\"t_us\":0,\"type\":\"run.start\",\"scenario\":\"loop\",\"protocol\":\"classic-eager\"}\n";
  json summary_rebalances = json::array();
  std::int64_t id = 0;
  std::vector<std::pair<std::int64_t, std::string>> lines;
  const auto rpc = [&](std::int64_t at, const char* c, const char* api) {
    lines.emplace_back(at, fmt::format("{{\"t_us\":{},\"type\":\"rpc\",\"dir\":\"send\",\"from\":"
                                       "\"{}\",\"to\":\"broker-0\",\"api\":\"{}\",\"id\":{}}}\n",
                                       at, c, api, id));
    lines.emplace_back(at + 1000,
                       fmt::format("{{\"t_us\":{},\"type\":\"rpc\",\"dir\":\"recv\",\"from\":"
                                   "\"broker-0\",\"to\":\"{}\",\"api\":\"{}\",\"id\":{}}}\n",
                                   at + 1000, c, api, id));
    ++id;
  };
  for (int i = 0; i < rebalances; ++i) {
    const std::int64_t t = static_cast<std::int64_t>(i) * 30000;
    lines.clear();
    for (const char* c : {"A", "B"}) {
      rpc(t + 100, c, "JoinGroup");
      rpc(t + 3000, c, "SyncGroup");
      lines.emplace_back(t + 5000,
                         fmt::format("{{\"t_us\":{},\"type\":\"assignment\",\"consumer\":\"{}\","
                                     "\"group\":\"g\",\"owned\":[\"orders-{}\"]}}\n",
                                     t + 5000, c, std::string(c) == "A" ? 0 : 1));
      for (int k = 0; k < heartbeats; ++k)
        rpc(t + 6000 + k * 2000 + (std::string(c) == "A" ? 0 : 500), c, "Heartbeat");
    }
    std::stable_sort(lines.begin(), lines.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& l : lines) out.trace += l.second;
    summary_rebalances.push_back({{"group", "g"},
                                  {"start_us", t + 1000},
                                  {"end_us", t + 5000},
                                  {"trigger", "member A joined"},
                                  {"generation", i + 1},
                                  {"completed", true},
                                  {"revoked", json::object()},
                                  {"assigned", {{"A", {"orders-0"}}, {"B", {"orders-1"}}}}});
  }
  out.trace += fmt::format("{{\"t_us\":{},\"type\":\"run.end\",\"events\":1}}\n",
                           static_cast<std::int64_t>(rebalances) * 30000);
  out.summary = reports::parse_ordered(json{
      {"scenario", "loop"},
      {"protocol", "classic-eager"},
      {"rebalances", summary_rebalances}}.dump());
  return out;
}

/// CPU seconds of this process for the timeline, the whole report and the narrative of `in`.
double report_cpu_s(const RejoinLoop& in, reports::Timeline& tl, std::vector<std::string>& story) {
  const std::clock_t start = std::clock();
  tl = reports::build_timeline(in.trace, in.summary);
  const std::string html = reports::render_html_report({tl}, {});
  story = reports::narrate(tl);
  CHECK(!html.empty());
  return static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
}

}  // namespace

TEST_CASE(
    "bounds: report on 20,000 rebalances stays linear (a quadratic pass over rebalances x messages "
    "blows the bound)") {
  // 20,000 rebalances (480,000 messages) against 2,000 of the same loop: ten times the input
  // costs about ten times the CPU when every pass is linear, a hundred times when a pass scans
  // rebalances x messages (each rebalance's narrative scanning every message sent before it:
  // more than a minute of CPU on the large input as a run folder, `report`, the build of the
  // issue's commit). The ratio, not a number of seconds, is the check: both sizes run in this
  // process one after the other, so a sanitizer's or a loaded machine's slowdown is in both
  // (an absolute bound of 20 s failed under ASan beside a build: 30.2 s). CPU time of this
  // process, not wall time.
  constexpr int kRebalances = 20000;
  constexpr int kHeartbeats = 10;
  reports::Timeline small_tl, tl;
  std::vector<std::string> small_story, story;
  const RejoinLoop small_in = rejoin_loop(kRebalances / 10, kHeartbeats);
  const RejoinLoop in = rejoin_loop(kRebalances, kHeartbeats);
  // The small input twice, keeping the faster: its first pass also warms the allocator.
  double small_s = report_cpu_s(small_in, small_tl, small_story);
  small_s = std::min(small_s, report_cpu_s(small_in, small_tl, small_story));
  const double cpu_s = report_cpu_s(in, tl, story);
  CHECK(tl.time_ordered);
  CHECK(tl.rebalances.size() == kRebalances);
  CHECK(tl.messages.size() == static_cast<std::size_t>(kRebalances) * 2 * (2 + kHeartbeats));
  CHECK(small_tl.rebalances.size() == kRebalances / 10);
  REQUIRE(story.size() == kRebalances);
  CHECK(story[19999].find("Rebalance 20000 of group g (generation 20000): from 599.971 s to "
                          "599.975 s (4 ms), trigger "
                          "\"member A joined\".") == 0);
  const double ratio = cpu_s / std::max(small_s, 0.01);
  MESSAGE(
      fmt::format("2,000 rebalances: {:.2f} s of CPU; 20,000 rebalances, {} messages: {:.2f} s "
                  "of CPU ({:.1f} times)",
                  small_s, tl.messages.size(), cpu_s, ratio));
  // Linear gives about 10 (10.9 and 14.7 in two Release runs); a pass over rebalances x
  // messages 100 or more (200 with one such pass added to the narrative). 40 leaves room for
  // the machine's load changing between the two sizes.
  CHECK(ratio < 40.0);
}

TEST_CASE("bounds: compare streams a recording 10x the largest fixture within a memory bound") {
  const fs::path dir = scratch("compare-10x");
  const std::string src = "fidelity/real/cooperative-revocation-duplicates";
  std::ifstream path_file(fs::path(RSIM_SOURCE_DIR) / src / "scenario.path");
  std::string scenario;
  std::getline(path_file, scenario);
  const std::string one =
      testing::read_file(fs::path(RSIM_SOURCE_DIR) / src / "classic-eager" / "trace.jsonl");
  const std::string body = one.substr(0, one.rfind('\n', one.size() - 2) + 1);  // without run.end
  const std::string end = one.substr(body.size());
  fs::create_directories(dir / "x1" / "classic-eager");
  fs::create_directories(dir / "x10" / "classic-eager");
  write(dir / "x1" / "classic-eager" / "trace.jsonl", one);
  {
    std::ofstream big(dir / "x10" / "classic-eager" / "trace.jsonl", std::ios::binary);
    for (int i = 0; i < 10; ++i) big << body;
    big << end;
  }
  const auto size10 = fs::file_size(dir / "x10" / "classic-eager" / "trace.jsonl");
  CHECK(size10 > 10 * (one.size() - end.size()));
  const auto x1 = run_measured(
      {"compare", scenario, "--real", (dir / "x1").string(), "--protocol", "classic-eager"},
      dir / "x1.out");
  const auto x10 = run_measured(
      {"compare", scenario, "--real", (dir / "x10").string(), "--protocol", "classic-eager"},
      dir / "x10.out");
  CHECK(x1.code <= 1);
  CHECK(x10.code <= 1);
  // Read whole into JSON documents, the 10x recording (about 8 MB) took about 8 bytes of memory
  // per byte of it on top of the 1x run; streamed, its facts add a few MiB.
  MESSAGE(fmt::format("max RSS: 1x {} KiB, 10x {} KiB ({} bytes); this test process {} KiB",
                      x1.max_rss_kib, x10.max_rss_kib, size10, own_peak_rss_kib()));
  if (const std::string why = peak_rss_unmeasured(x1.max_rss_kib, "the compare it runs");
      !why.empty()) {
    MESSAGE(why);
  } else {
    CHECK(x10.max_rss_kib - x1.max_rss_kib < static_cast<long>(size10 / 1024 * 2));
  }
  fs::remove_all(dir);
}

TEST_CASE(
    "bounds: an expect list, the events, the topics and any list past its limit are refused "
    "unread") {
  json doc = two_consumers();
  json expect = json::array();
  for (int i = 0; i < 1001; ++i)
    expect.push_back({{"metric", "rebalance_count"}, {"op", ">="}, {"value", 0}});
  doc["expect"] = expect;
  CHECK(problems_of(doc) ==
        "x.json: /expect: 1001 entries; the simulator's limit is 1000 (each expectation is checked "
        "against the whole run)");
  doc["expect"] = json::array();
  json events = json::array();
  for (int i = 0; i < 100001; ++i)
    events.push_back({{"at_ms", 1}, {"do", "start"}, {"consumer", "A"}});
  doc["events"] = events;
  CHECK(problems_of(doc) ==
        "x.json: /events: 100001 entries; the simulator's limit is 100000 (each event is scheduled "
        "and traced)");
  doc = two_consumers();
  json topics = json::array();
  for (int i = 0; i < 10001; ++i)
    topics.push_back({{"name", fmt::format("t{}", i)}, {"partitions", 1}});
  doc["topics"] = topics;
  CHECK(problems_of(doc).find(
            "x.json: /topics: 10001 entries; the simulator's limit is 10000 (each subscription is "
            "checked against every topic)") == 0);
  doc = two_consumers();
  json subscription = json::array();
  for (int i = 0; i < 10001; ++i) subscription.push_back("orders");
  doc["consumers"][0]["topics"] = subscription;
  CHECK(problems_of(doc) ==
        "x.json: /consumers/0/topics: 10001 entries; the simulator's limit is 10000 (a longer list "
        "has no use in a scenario)");
}

// ---- Messages ----------------------------------------------------------------------------------

TEST_CASE(
    "messages: control characters in names are escaped on stdout and JUnit stays well-formed XML") {
  const fs::path dir = scratch("control");
  json doc = two_consumers();
  doc["name"] = "evil\nPASS forged [classic-eager] expect[0]\x01\x1b[31m";
  write(dir / "evil.json", doc.dump());
  const auto r =
      run_cli("check " + (dir / "evil.json").string() + " --junit " + (dir / "j.xml").string(),
              "bounds-control");
  CHECK(r.code == 0);
  CHECK(r.out.find("\nPASS forged") == std::string::npos);
  CHECK(r.out.find("PASS evil\\nPASS forged [classic-eager] expect[0]\\x01\\x1b[31m "
                   "[classic-eager] expect[0]") == 0);
  const std::string xml = testing::read_file(dir / "j.xml");
  // XML 1.0 allows no control character but tab, newline and carriage return, not even as a
  // character reference: the name's are written as visible text.
  for (const char c : xml) {
    const auto u = static_cast<unsigned char>(c);
    CHECK_MESSAGE((u >= 0x20 || c == '\n'), "control character in the JUnit XML");
  }
  CHECK(xml.find("name=\"evil&#10;PASS forged [classic-eager] expect[0]\\x01\\x1b[31m "
                 "[classic-eager]\"") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE(
    "messages: markup_escape keeps XML well-formed for control characters and bytes that are not "
    "UTF-8") {
  CHECK(reports::markup_escape("a\tb\rc\nd") == "a&#9;b&#13;c&#10;d");
  CHECK(reports::markup_escape(std::string("x\x01y\x7fz", 5)) == "x\\x01y\\x7fz");
  CHECK(reports::markup_escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") ==
        "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  CHECK(reports::markup_escape("\xc3(") == "\\xc3(");  // a lead byte without its continuation
  CHECK(reports::markup_escape("\xc0\xaf") == "\\xc0\\xaf");           // an overlong '/'
  CHECK(reports::markup_escape("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
  CHECK(reports::markup_escape("\xef\xbf\xbf") == "\\xef\\xbf\\xbf");  // U+FFFF
  CHECK(reports::markup_escape("<&'\">") == "&lt;&amp;&#39;&quot;&gt;");
}

TEST_CASE(
    "messages: long configs take Kafka's range up to Long.MAX_VALUE and one more is refused") {
  const auto* spec = rsim::find_consumer_config("retry.backoff.ms");
  REQUIRE(spec != nullptr);
  CHECK(rsim::normalize_config_value(*spec, json(INT64_MAX)).problem.empty());
  CHECK(rsim::normalize_config_value(*spec, json("9223372036854775807")).problem.empty());
  CHECK(rsim::normalize_config_value(*spec, json(9223372036854775808ULL)).problem ==
        "must be <= 9223372036854775807, got 9223372036854775808");
  CHECK(rsim::normalize_config_value(*spec, json("9223372036854775808")).problem ==
        "must be an integer, got \"9223372036854775808\"");
  // An int config keeps Integer's range, now with the range named for a long number.
  const auto* session = rsim::find_consumer_config("session.timeout.ms");
  REQUIRE(session != nullptr);
  CHECK(rsim::normalize_config_value(*session, json("2147483648")).problem ==
        "must be <= 2147483647, got 2147483648");
  // A scenario with Long.MAX_VALUE runs: the timer never fires within the run.
  json doc = two_consumers();
  doc["consumers"][0]["config"]["metadata.max.age.ms"] = INT64_MAX;
  doc["consumers"][0]["config"]["retry.backoff.max.ms"] = "9223372036854775807";
  const fs::path dir = scratch("longmax");
  write(dir / "long.json", doc.dump());
  const auto r = run_cli(
      "run " + (dir / "long.json").string() + " --out " + (dir / "o").string() + " --trace none",
      "bounds-longmax");
  CHECK(r.code == 0);
  fs::remove_all(dir);
}

TEST_CASE("messages: a seed of -0 is seed 0 and a negative seed says so") {
  json doc = two_consumers();
  doc["seed"] = json::parse("-0");
  CHECK(problems_of(doc).empty());
  CHECK(rsim::parse_scenario(doc, "x.json").seed == 0);
  doc["seed"] = -3;
  CHECK(problems_of(doc) == "x.json: /seed: must be >= 0, got -3");
}

TEST_CASE("messages: limit messages give the exact numbers, not rounded to the limit") {
  json doc = two_consumers();
  json consumers = json::array();
  for (int i = 0; i < 10000; ++i)
    consumers.push_back({{"name", fmt::format("c{}", i)}, {"group", "g"}, {"topics", {"orders"}}});
  doc["consumers"] = consumers;
  doc["events"] = json::array();
  doc["expect"] = json::array();
  doc["duration_ms"] = 7200000 + 1;  // one millisecond past 20,000 consumer-hours
  CHECK(problems_of(doc) ==
        "x.json: /duration_ms: 10000 consumers for about 2.000000277 h is about 20000.002777777 "
        "consumer-hours; the simulator's limit is 20000 (e.g. 10000 consumers for 2 h): shorten "
        "duration_ms or run fewer consumers");
  doc["duration_ms"] = 7200000 + 360;  // 2.0001 h: a finite decimal, shown exactly
  CHECK(
      problems_of(doc) ==
      "x.json: /duration_ms: 10000 consumers for 2.0001 h is 20001 consumer-hours; the simulator's "
      "limit is 20000 (e.g. 10000 consumers for 2 h): shorten duration_ms or run fewer consumers");
  doc["duration_ms"] = 7200000;  // exactly at the limit: accepted
  CHECK(problems_of(doc).empty());
}
