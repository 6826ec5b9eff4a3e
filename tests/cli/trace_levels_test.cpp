// `run --trace full|standard|none` and `--quiet`, as a separate process: each level is
// deterministic, the summary is the same at every level, `standard` is `full` without what only
// `full` writes (Fetch rpcs, records.* lines, OffsetCommit records, quiet heartbeats, lag lines
// that repeat the last value written), every reader of the files carries lag forward, `none`
// writes only summary.json, and --quiet prints nothing on success.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() /
                     ("rebalance-sim-trace-levels-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return testing::remove_at_exit(d);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

bool heartbeat_api(const std::string& api) {
  return api == "Heartbeat" || api == "ConsumerGroupHeartbeat";
}

/// What a comparison of a `full` trace with a `standard` one found.
struct LevelWalk {
  bool matched = true;  // standard = full less lines only full writes, in order
  std::string first_problem;
  int lag_written = 0, lag_held = 0, lag_owner_changes = 0, lag_value_changes = 0;
  int records_dropped = 0, commit_records_dropped = 0, heartbeats_dropped = 0, fetch_dropped = 0;
  int auto_commit_rpcs_dropped = 0;         // an auto-commit's request, and its answer when NONE
  int auto_commit_completions_dropped = 0;  // its `commit` completed line when NONE
  int epoch_heartbeats_dropped = 0;         // a NONE heartbeat answer that brings a new epoch
  int group_epoch_changes = 0;              // group.epoch lines written as joined / left
  int group_epoch_joined = 0, group_epoch_left = 0;  // names in them
};

using Names = std::multiset<std::string>;

Names names_of(const nlohmann::json& a) {
  Names out;
  for (const auto& n : a) out.insert(n.get<std::string>());
  return out;
}

/// A standard group.epoch line against full's: the group's first line the same; any other
/// full's fields with `joined` and `left` (sorted: the change since the group's previous line)
/// in place of `members`. Empty when they agree, else what differs.
std::string group_epoch_differs(const nlohmann::json& f, const nlohmann::json& s,
                                std::map<std::string, Names>& members, LevelWalk& w) {
  const std::string group = f.at("group");
  const Names now = names_of(f.at("members"));
  const auto it = members.find(group);
  if (it == members.end()) {
    members[group] = now;
    return f == s ? "" : "the group's first group.epoch line differs";
  }
  if (s.contains("members") || !s.contains("joined") || !s.contains("left"))
    return "no joined / left";
  auto a = f, b = s;
  a.erase("members");
  b.erase("joined");
  b.erase("left");
  if (a != b) return "other fields differ";
  for (const char* key : {"joined", "left"})
    if (!std::is_sorted(s.at(key).begin(), s.at(key).end())) return std::string(key) + " unsorted";
  Names joined, left;
  std::set_difference(now.begin(), now.end(), it->second.begin(), it->second.end(),
                      std::inserter(joined, joined.end()));
  std::set_difference(it->second.begin(), it->second.end(), now.begin(), now.end(),
                      std::inserter(left, left.end()));
  if (names_of(s.at("joined")) != joined || names_of(s.at("left")) != left)
    return "joined / left are not the change";
  ++w.group_epoch_changes;
  w.group_epoch_joined += static_cast<int>(joined.size());
  w.group_epoch_left += static_cast<int>(left.size());
  it->second = now;
  return "";
}

/// Walks the full trace line by line against the standard one: a line standard lacks must be one
/// the rules leave to `full` (records.*, a Fetch rpc, an OffsetCommit record, a heartbeat
/// request with nothing new (a classic Heartbeat, a ConsumerGroupHeartbeat at a positive epoch
/// with no optional field: never a join or a leave) or a NONE answer, a lag line equal in lag and
/// owner to the last one written for its partition, an auto-commit's OffsetCommit request (the rpc
/// line right after its `commit` sent event of purpose auto-commit) or its NONE answer); every
/// other line must be there, in the same order. A `commit` completed line of an auto-commit
/// answered NONE, and a heartbeat's NONE answer (with or without a new epoch), are full's only;
/// a group.epoch line is written as its change after the group's first (group_epoch_differs).
LevelWalk walk_levels(const std::string& full, const std::string& standard) {
  LevelWalk w;
  const auto f = lines_of(full), s = lines_of(standard);
  std::map<std::pair<std::string, std::string>, std::pair<std::int64_t, std::string>>
      last;  // written lag, owner
  std::size_t j = 0;
  auto fail = [&](const std::string& why) {
    if (w.matched) w.first_problem = why;
    w.matched = false;
  };
  std::map<std::string, bool>
      auto_commit_next;  // consumer -> its next OffsetCommit is an auto-commit
  std::set<std::pair<std::string, std::int64_t>> auto_commits;  // (consumer, correlation id)
  std::map<std::string, Names> members;                         // group -> full's last members
  std::map<std::string, std::int64_t> member_epoch;             // consumer -> last member.epoch
  std::map<std::pair<std::string, std::int64_t>, std::int64_t>
      heartbeat_epoch;  // (consumer, id) -> the epoch its request carried
  for (std::size_t i = 0; i < f.size(); ++i) {
    const auto e = nlohmann::json::parse(f[i]);
    const std::string type = e.at("type");
    if (type == "commit" && e.value("phase", "") == "sent")
      auto_commit_next[e.at("consumer")] = e.value("purpose", "") == "auto-commit";
    const bool commit_rpc = type == "rpc" && e.value("api", "") == "OffsetCommit";
    if (commit_rpc && e.value("dir", "") == "send" &&
        std::exchange(auto_commit_next[e.at("from")], false))
      auto_commits.emplace(e.at("from"), e.at("id").get<std::int64_t>());
    if (type == "member.epoch")
      member_epoch[e.at("consumer").get<std::string>()] = e.at("epoch").get<std::int64_t>();
    if (type == "rpc" && e.value("api", "") == "ConsumerGroupHeartbeat" &&
        e.value("dir", "") == "send")
      heartbeat_epoch[{e.at("from").get<std::string>(), e.at("id").get<std::int64_t>()}] =
          e.value("member_epoch", std::int64_t{0});
    if (type == "group.epoch") {
      const std::string why = j < s.size()
                                  ? group_epoch_differs(e, nlohmann::json::parse(s[j]), members, w)
                                  : "missing";
      if (!why.empty()) fail("group.epoch: " + why + ": " + f[i]);
      ++j;
      continue;
    }
    if (type == "run.start") {
      auto a = e, b = nlohmann::json::parse(s.at(j++));
      if (a.value("trace_level", "") != "full" || b.value("trace_level", "") != "standard")
        fail("run.start level");
      a.erase("trace_level");
      b.erase("trace_level");
      if (a != b) fail("run.start");
      continue;
    }
    const bool same = j < s.size() && s[j] == f[i];
    if (type == "lag") {
      const auto key =
          std::make_pair(e.at("group").get<std::string>(), e.at("partition").get<std::string>());
      const std::string owner =
          e.at("owner").is_null() ? "<null>" : e.at("owner").get<std::string>();
      const auto it = last.find(key);
      const bool repeat =
          it != last.end() && it->second == std::make_pair(e.at("lag").get<std::int64_t>(), owner);
      if (repeat) {
        if (same) fail("a repeated lag line written: " + f[i]);
        ++w.lag_held;
        continue;
      }
      if (!same) {
        fail("a changed lag line missing: " + f[i]);
        continue;
      }
      if (it != last.end() && it->second.second != owner) ++w.lag_owner_changes;
      if (it != last.end() && it->second.first != e.at("lag").get<std::int64_t>())
        ++w.lag_value_changes;
      last[key] = {e.at("lag").get<std::int64_t>(), owner};
      ++w.lag_written;
      ++j;
      continue;
    }
    if (same) {
      ++j;
      continue;
    }
    if (type == "records.fetched" || type == "records.processed")
      ++w.records_dropped;
    else if (type == "record" && e.value("record", "") == "OffsetCommit")
      ++w.commit_records_dropped;
    else if (type == "rpc" && e.value("api", "") == "Fetch")
      ++w.fetch_dropped;
    else if (commit_rpc && e.value("dir", "") == "send" &&
             auto_commits.contains({e.at("from"), e.at("id").get<std::int64_t>()}))
      ++w.auto_commit_rpcs_dropped;
    else if (commit_rpc && e.value("dir", "") == "recv" && e.value("error", "") == "NONE" &&
             auto_commits.contains({e.at("to"), e.at("id").get<std::int64_t>()}))
      ++w.auto_commit_rpcs_dropped;
    else if (type == "rpc" && heartbeat_api(e.value("api", "")) && e.value("dir", "") == "send" &&
             (e.value("api", "") == "Heartbeat" ||
              (e.contains("fields") && e["fields"].empty() && e.value("member_epoch", 0) > 0)))
      ++w.heartbeats_dropped;
    else if (type == "rpc" && heartbeat_api(e.value("api", "")) && e.value("dir", "") == "recv" &&
             e.value("error", "") == "NONE") {
      ++w.heartbeats_dropped;
      // The answer to a request at an older epoch than the member's latest: a new epoch.
      const auto sent =
          heartbeat_epoch.find({e.at("to").get<std::string>(), e.at("id").get<std::int64_t>()});
      if (sent != heartbeat_epoch.end() && sent->second > 0 &&
          member_epoch[e.at("to").get<std::string>()] > sent->second)
        ++w.epoch_heartbeats_dropped;
    } else if (type == "commit" && e.value("phase", "") == "completed" &&
               e.value("purpose", "") == "auto-commit" && e.value("error", "") == "NONE")
      ++w.auto_commit_completions_dropped;
    else
      fail("a line only full writes that is not of a kind left to full: " + f[i]);
  }
  if (j != s.size()) fail("standard has lines full does not");
  return w;
}

/// A CSV's rows as cells (no quoted commas in the columns read here: time, group, partition, lag).
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : lines_of(text)) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream in(line);
    while (std::getline(in, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

using Steps =
    std::map<std::string, std::vector<std::pair<double, std::int64_t>>>;  // series -> (t, value)

/// Whether two step functions agree at every time either of them changes: what carrying the last
/// value forward gives. `missing` names a series one side lacks.
std::string steps_differ(const Steps& a, const Steps& b) {
  auto at = [](const std::vector<std::pair<double, std::int64_t>>& s,
               double t) -> std::optional<std::int64_t> {
    std::optional<std::int64_t> v;
    for (const auto& [x, y] : s)
      if (x <= t) v = y;
    return v;
  };
  for (const auto* side : {&a, &b})
    for (const auto& [name, points] : *side) {
      const auto oa = a.find(name), ob = b.find(name);
      if (oa == a.end() || ob == b.end()) return "series " + name + " on one side only";
      for (const auto& [t, v] : points)
        if (at(oa->second, t) != at(ob->second, t))
          return "series " + name + " at " + std::to_string(t);
    }
  return "";
}

Steps lag_csv_steps(const std::string& text) {
  Steps out;
  const auto rows = csv_rows(text);
  for (std::size_t i = 1; i < rows.size(); ++i)
    out[rows[i].at(1) + "|" + rows[i].at(2)].emplace_back(std::stod(rows[i].at(0)),
                                                          std::stoll(rows[i].at(3)));
  return out;
}

Steps perfetto_lag_steps(const std::string& text) {
  Steps out;
  const auto j = nlohmann::json::parse(text);
  const auto& events = j.is_array() ? j : j.at("traceEvents");
  for (const auto& e : events)
    if (e.value("ph", "") == "C" && e.value("name", "").find("lag") != std::string::npos)
      out[e.at("name")].emplace_back(e.at("ts").get<double>(),
                                     e.at("args").at("records").get<std::int64_t>());
  return out;
}

/// timeline.csv's rows at standard are full's rows in order, less rows of kinds only full writes.
std::string timeline_differs(const std::string& full, const std::string& standard) {
  const auto f = lines_of(full), s = lines_of(standard);
  std::size_t j = 0;
  for (const auto& row : f) {
    if (j < s.size() && (row == s[j] || row.find(",run.start,") != std::string::npos)) {
      ++j;
      continue;
    }
    const bool full_only = row.find(",records.fetched,") != std::string::npos ||
                           row.find(",records.processed,") != std::string::npos ||
                           row.find("\"\"record\"\":\"\"OffsetCommit\"\"") != std::string::npos ||
                           row.find("\"\"api\"\":\"\"Fetch\"\"") != std::string::npos ||
                           row.find("\"\"api\"\":\"\"OffsetCommit\"\"") != std::string::npos ||
                           row.find("Heartbeat\"\"") != std::string::npos ||
                           (row.find(",commit,") != std::string::npos &&
                            row.find("\"\"phase\"\":\"\"completed\"\"") != std::string::npos &&
                            row.find("\"\"purpose\"\":\"\"auto-commit\"\"") != std::string::npos &&
                            row.find("\"\"error\"\":\"\"NONE\"\"") != std::string::npos);
    if (!full_only) return "missing at standard: " + row;
  }
  return j == s.size() ? "" : "extra rows at standard";
}

// The summary without produced_by (the same) and expectations: every metric and rebalance.
std::string summary_body(const std::string& text) {
  const auto from = text.find("\"rebalances\"");
  return from == std::string::npos ? text : text.substr(from);
}

}  // namespace

TEST_CASE(
    "every trace level is deterministic and gives the same summary; standard drops only Fetch "
    "rpcs") {
  const auto d = temp_dir("levels");
  const std::string scenario = "scenarios/examples/two-consumers-kip848.json";
  std::map<std::string, std::string> trace, summary;
  for (const std::string level : {"full", "standard", "none"}) {
    for (const std::string copy : {"a", "b"}) {
      const auto out = d / (level + "-" + copy);
      const auto r = testing::run_cli(
          "run " + scenario + " --trace " + level + " --out " + out.string(), "levels");
      REQUIRE(r.code == 0);
      const auto dir = out / "consumer";
      CHECK(fs::exists(dir / "summary.json"));
      CHECK(fs::exists(dir / "trace.jsonl") == (level != "none"));
      const std::string t = level == "none" ? "" : testing::read_file(dir / "trace.jsonl");
      const std::string s = testing::read_file(dir / "summary.json");
      if (copy == "a") {
        trace[level] = t;
        summary[level] = s;
      } else {
        CHECK(t == trace[level]);  // byte-identical run to run
        CHECK(s == summary[level]);
      }
    }
  }
  CHECK(summary["full"] == summary["standard"]);
  CHECK(summary_body(summary["none"]) == summary_body(summary["full"]));
  CHECK(trace["full"].find("\"api\":\"Fetch\"") != std::string::npos);
  CHECK(trace["standard"].find("\"api\":\"Fetch\"") == std::string::npos);
  const LevelWalk w = walk_levels(trace["full"], trace["standard"]);
  CAPTURE(w.first_problem);
  CHECK(w.matched);
  fs::remove_all(d);
}

TEST_CASE(
    "standard: lag lines only on change, no records.* or OffsetCommit records or quiet heartbeats; "
    "every "
    "reader carries lag forward") {
  // Two consumers on orders-0/1 at 50 records/s; B stalls for 20 s from 20 s (its partition's
  // lag grows, then drains); a steady lag holds in between; under the consumer protocol a
  // partition changes owner (A holds both until B's assignment).
  const auto d = temp_dir("readers");
  const std::string scenario = "scenarios/library/lag-build-up-and-drain.json";
  for (const std::string level : {"full", "standard"}) {
    const auto r = testing::run_cli("run " + scenario + " --trace " + level +
                                        " --format csv --format perfetto --quiet --out " +
                                        (d / level).string(),
                                    "readers");
    REQUIRE(r.code == 0);
  }
  for (const std::string variant : {"classic-eager", "classic-cooperative", "consumer"}) {
    CAPTURE(variant);
    const auto file = [&](const std::string& level, const std::string& name) {
      return testing::read_file(d / level / variant / name);
    };
    CHECK(file("full", "summary.json") == file("standard", "summary.json"));
    const std::string full = file("full", "trace.jsonl"),
                      standard = file("standard", "trace.jsonl");
    CHECK(standard.size() * 20 <
          full.size());  // this scenario's trace is mostly per-batch and lag lines
    const LevelWalk w = walk_levels(full, standard);
    CAPTURE(w.first_problem);
    CHECK(w.matched);
    // The scenario exercises each rule: lag that changes, lag that holds, an owner change.
    CHECK(w.lag_value_changes > 0);
    CHECK(w.lag_held > w.lag_written);
    // Under the consumer protocol A owns both partitions before B's first heartbeat gives it one.
    if (variant == "consumer") CHECK(w.lag_owner_changes > 0);
    CHECK(w.records_dropped > 0);
    CHECK(w.commit_records_dropped > 0);
    CHECK(w.heartbeats_dropped > 0);
    CHECK(w.auto_commit_rpcs_dropped > 0);
    // The readers: lag.csv and perfetto.json's lag counters are the same step functions (each
    // partition's and the group's total); timeline.csv is full's less the rows only full writes.
    const Steps lf = lag_csv_steps(file("full", "lag.csv")),
                ls = lag_csv_steps(file("standard", "lag.csv"));
    CHECK(lf.size() == 3);  // orders-0, orders-1, (total)
    CHECK(steps_differ(lf, ls) == "");
    CHECK(lag_csv_steps(file("full", "lag.csv")).begin()->second.size() >
          ls.begin()->second.size());
    const Steps pf = perfetto_lag_steps(file("full", "perfetto.json"));
    CHECK(pf.size() == 3);  // total lag, lag orders-0, lag orders-1
    CHECK(steps_differ(pf, perfetto_lag_steps(file("standard", "perfetto.json"))) == "");
    CHECK(timeline_differs(file("full", "timeline.csv"), file("standard", "timeline.csv")) == "");
  }
  // explain tells the same story from both run directories (who learned of each rebalance by
  // which heartbeat, callbacks, leaves): a leave's heartbeat is never quiet.
  for (const std::string level : {"full", "standard"}) {
    const auto r =
        testing::run_cli("run scenarios/library/rolling-restart-dynamic.json --trace " + level +
                             " --quiet --out " + (d / ("rolling-" + level)).string(),
                         "readers-rolling");
    REQUIRE(r.code == 0);
  }
  const auto explain_full =
      testing::run_cli("explain " + (d / "rolling-full").string(), "readers-explain-full");
  const auto explain_standard =
      testing::run_cli("explain " + (d / "rolling-standard").string(), "readers-explain-std");
  REQUIRE(explain_full.code == 0);
  CHECK(explain_full.out.find("learned of it from its ConsumerGroupHeartbeat response") !=
        std::string::npos);
  CHECK(explain_full.out == explain_standard.out);
  // `report DIR` renders the same files from a standard run directory as `run` did.
  const auto before = testing::read_file(d / "standard" / "consumer" / "lag.csv");
  const auto again =
      testing::run_cli("report " + (d / "standard").string() + " --format csv", "readers-report");
  REQUIRE(again.code == 0);
  CHECK(testing::read_file(d / "standard" / "consumer" / "lag.csv") == before);
  fs::remove_all(d);
}

TEST_CASE(
    "standard: an auto-commit answered NONE has no rpc lines; a commit of a rebalance or with an "
    "error keeps them") {
  // A owns orders-0/1 (10 records/s each) from 0 s; B starts at 9.5 s; the coordinator (the one
  // broker) fails at 15.301 s for 1 s. auto.commit.interval.ms is 5000 (the default).
  // classic-eager: A auto-commits at 5.02 and 10.02 s; it learns of B's join at its heartbeat at
  // 12.0 s and commits before revocation; the rebalance restarts both members' interval: A and B
  // auto-commit at 17.04 s (the broker is back). 5 commits, 10 rpc lines at full; at standard only
  // the commit before revocation's 2.
  // consumer: A auto-commits at 5.1 and 10.1 s; B's join makes A revoke orders-1 with a commit
  // before revocation at 10.2 s; A's auto-commit at 15.3 s is in flight when the broker fails
  // (NETWORK_EXCEPTION at 15.301 s); B auto-commits at 19.8 s and A at 20.3 s. 6 commits, 12 rpc
  // lines at full; at standard 3: the commit before revocation's 2 and the failed answer (its
  // request, an auto-commit, is quiet like a steady heartbeat's).
  // The `commit` events (sent and completed: 10 and 12 at full) stay at standard, less the
  // completions of the auto-commits answered NONE (4 in each: 6 and 8 lines).
  const auto d = temp_dir("auto-commit");
  testing::write_file(d / "auto-commit.json", R"({
  "name": "auto-commit-quiet", "seed": 1, "duration_ms": 21000, "protocols": ["classic-eager", "consumer"],
  "cluster": {"brokers": 1, "config": {"group.initial.rebalance.delay.ms": 0}},
  "network": {"latency_ms": {"dist": "constant", "value": 1}},
  "topics": [{"name": "orders", "partitions": 2, "produce": {"records_per_sec": 10}}],
  "consumers": [{"name": "A", "group": "g", "topics": ["orders"]}, {"name": "B", "group": "g", "topics": ["orders"]}],
  "events": [{"at_ms": 0, "do": "start", "consumer": "A"}, {"at_ms": 9500, "do": "start", "consumer": "B"},
             {"at_ms": 15301, "do": "fail-coordinator", "group": "g", "down_ms": 1000}]
})");
  for (const std::string level : {"full", "standard"}) {
    const auto r =
        testing::run_cli("run " + (d / "auto-commit.json").string() + " --trace " + level +
                             " --format csv --quiet --out " + (d / level).string(),
                         "levels-auto-commit");
    REQUIRE(r.code == 0);
  }
  struct Expected {
    std::string variant;
    std::size_t full_rpcs, standard_rpcs, commits, standard_commits;
  };
  for (const Expected& x :
       {Expected{"classic-eager", 10, 2, 10, 6}, Expected{"consumer", 12, 3, 12, 8}}) {
    CAPTURE(x.variant);
    const auto file = [&](const std::string& level, const std::string& name) {
      return testing::read_file(d / level / x.variant / name);
    };
    std::map<std::string, std::vector<std::string>> rpcs, commits;
    for (const std::string level : {"full", "standard"})
      for (const auto& line : lines_of(file(level, "trace.jsonl"))) {
        if (line.find("\"api\":\"OffsetCommit\"") != std::string::npos) rpcs[level].push_back(line);
        if (line.find("\"type\":\"commit\"") != std::string::npos) commits[level].push_back(line);
      }
    CHECK(rpcs["full"].size() == x.full_rpcs);
    REQUIRE(rpcs["standard"].size() == x.standard_rpcs);
    CHECK(commits["full"].size() == x.commits);
    CHECK(commits["standard"].size() == x.standard_commits);
    std::vector<std::string> kept;
    for (const auto& line : commits["full"])
      if (line.find(R"("phase":"completed","purpose":"auto-commit","error":"NONE")") ==
          std::string::npos)
        kept.push_back(line);
    CHECK(commits["standard"] == kept);
    // The commit before revocation's round trip, at both levels.
    const auto revocation =
        std::find_if(commits["full"].begin(), commits["full"].end(), [](const std::string& l) {
          return l.find("\"purpose\":\"before revocation\"") != std::string::npos;
        });
    REQUIRE(revocation != commits["full"].end());
    CHECK(rpcs["standard"][0].find("\"dir\":\"send\"") != std::string::npos);
    CHECK(rpcs["standard"][1].find("\"dir\":\"recv\"") != std::string::npos);
    CHECK(rpcs["standard"][1].find("\"error\":\"NONE\"") != std::string::npos);
    if (x.variant == "consumer") {
      CHECK(
          rpcs["standard"][2] ==
          R"({"t_us":15301000,"type":"rpc","dir":"recv","from":"broker-0","to":"A","api":"OffsetCommit","id":163,"error":"NETWORK_EXCEPTION"})");
    }
    const LevelWalk w = walk_levels(file("full", "trace.jsonl"), file("standard", "trace.jsonl"));
    CAPTURE(w.first_problem);
    CHECK(w.matched);
    CHECK(static_cast<std::size_t>(w.auto_commit_rpcs_dropped) == x.full_rpcs - x.standard_rpcs);
    // The readers see the same run: the summary, lag.csv's step functions, timeline.csv less full's
    // rows.
    CHECK(file("full", "summary.json") == file("standard", "summary.json"));
    CHECK(steps_differ(lag_csv_steps(file("full", "lag.csv")),
                       lag_csv_steps(file("standard", "lag.csv"))) == "");
    CHECK(timeline_differs(file("full", "timeline.csv"), file("standard", "timeline.csv")) == "");
  }
  fs::remove_all(d);
}

/// report.html's group epoch labels ("group epoch 3, ..., 2 members: A, B (member B joined)"), in
/// order.
std::vector<std::string> epoch_labels(const std::string& html) {
  std::vector<std::string> out;
  for (const std::string start : {"group epoch ", "generation "}) {
    for (std::size_t at = html.find(start); at != std::string::npos;
         at = html.find(start, at + 1)) {
      const std::size_t end = html.find_first_of("\"<", at);
      const std::string label = html.substr(at, end - at);
      if (label.find(" member: ") != std::string::npos ||
          label.find(" members: ") != std::string::npos)
        out.push_back(label);
    }
  }
  return out;
}

TEST_CASE(
    "standard: group.epoch lines carry joined / left, auto-commit completions and epoch-only "
    "heartbeat answers are full's only; every reader sees the same members") {
  // One broker, 1 ms links, orders with 4 partitions (10 records/s each); A starts at 0, B at 3 s,
  // C at 6 s; B stops (a graceful leave) at 9 s; 16 s in all. Every join and the leave make a
  // group.epoch line:
  // - classic-eager: generations 1 to 4 ([A], +B, +C, -B); commits: before revocation at each
  //   of the 3 rebalances (A; A and B; C and A), B's close at 9 s, and A's and C's auto-commits
  //   at 14.07 s (5 s after the last rebalance restarted their interval): 8 commits, 16 lines at
  //   full; the two auto-commits' completions (NONE) are full's only: 14 at standard.
  // - consumer: group epochs 2 to 5 ([A], +B, +C, -B at 9.008 s) and a fifth line at 10.303 s
  //   when A's heartbeat computes the target of epoch 5 (no change of members: both lists
  //   empty). Commits: A's auto-commits at 5.1, 10.3 and 15.3 s, C's at 11.1 s, A's before
  //   revocation (B's join) at 5.2 s, C's before revocation at 11.2 s, B's close at 9 s: 7
  //   commits, 14 lines at full, 10 at standard (the 4 auto-commit completions). A's heartbeat
  //   at 10.3 s (sent at epoch 3) is answered NONE with epoch 5 and no assignment (A keeps its
  //   2 partitions when B's go to C): an epoch-only answer, full's only now (its request too).
  // - share: group epochs 2 to 5 and the target of epoch 5, as for the consumer protocol; B's
  //   heartbeat at 8.0 s is answered with epoch 4 (C's join) and no assignment (a share group
  //   gives every member every partition): full's only; 30 heartbeat lines at full (a first
  //   assignment, even an empty one, is acknowledged at once), 11 at standard.
  const auto d = temp_dir("members");
  testing::write_file(d / "members.json", R"({
  "name": "members-change", "seed": 1, "duration_ms": 16000, "protocols": ["classic-eager", "consumer", "share"],
  "cluster": {"brokers": 1, "config": {"group.initial.rebalance.delay.ms": 0}},
  "network": {"latency_ms": {"dist": "constant", "value": 1}},
  "topics": [{"name": "orders", "partitions": 4, "produce": {"records_per_sec": 10}}],
  "consumers": [{"name": "A", "group": "g", "topics": ["orders"]}, {"name": "B", "group": "g", "topics": ["orders"]},
                {"name": "C", "group": "g", "topics": ["orders"]}],
  "events": [{"at_ms": 0, "do": "start", "consumer": "A"}, {"at_ms": 3000, "do": "start", "consumer": "B"},
             {"at_ms": 6000, "do": "start", "consumer": "C"}, {"at_ms": 9000, "do": "stop", "consumer": "B"}]
})");
  for (const std::string level : {"full", "standard"}) {
    const auto r = testing::run_cli("run " + (d / "members.json").string() + " --trace " + level +
                                        " --format csv --quiet --out " + (d / level).string(),
                                    "levels-members");
    REQUIRE(r.code == 0);
  }
  struct Expected {
    std::string variant;
    std::vector<std::string> epochs;  // standard's group.epoch lines: members or joined / left
    std::size_t full_commits, standard_commits, full_heartbeats, standard_heartbeats;
    int epoch_answers;  // epoch-only heartbeat answers left to full
  };
  const std::string first = R"("members":["A"])", plus_b = R"("joined":["B"],"left":[])",
                    plus_c = R"("joined":["C"],"left":[])", minus_b = R"("joined":[],"left":["B"])",
                    none = R"("joined":[],"left":[])";
  for (const Expected& x :
       {Expected{"classic-eager", {first, plus_b, plus_c, minus_b}, 16, 14, 18, 5, 0},
        Expected{"consumer", {first, plus_b, plus_c, minus_b, none}, 14, 10, 30, 21, 1},
        Expected{"share", {first, plus_b, plus_c, minus_b, none}, 0, 0, 30, 11, 1}}) {
    CAPTURE(x.variant);
    const auto file = [&](const std::string& level, const std::string& name) {
      return testing::read_file(d / level / x.variant / name);
    };
    std::map<std::string, std::vector<std::string>> epochs, commits, heartbeats;
    for (const std::string level : {"full", "standard"})
      for (const auto& line : lines_of(file(level, "trace.jsonl"))) {
        if (line.find(R"("type":"group.epoch")") != std::string::npos)
          epochs[level].push_back(line);
        if (line.find(R"("type":"commit")") != std::string::npos) commits[level].push_back(line);
        if (line.find(R"(Heartbeat")") != std::string::npos) heartbeats[level].push_back(line);
      }
    REQUIRE(epochs["standard"].size() == x.epochs.size());
    CHECK(epochs["full"].size() == x.epochs.size());
    for (std::size_t i = 0; i < x.epochs.size(); ++i) {
      CAPTURE(epochs["standard"][i]);
      CHECK(epochs["standard"][i].find(x.epochs[i]) != std::string::npos);
      CHECK((epochs["standard"][i].find(R"("members")") != std::string::npos) == (i == 0));
      CHECK(epochs["full"][i].find(R"("joined")") == std::string::npos);  // full: as before
    }
    CHECK(commits["full"].size() == x.full_commits);
    CHECK(commits["standard"].size() == x.standard_commits);
    for (const auto& line : commits["full"]) {
      const bool dropped =
          line.find(R"("phase":"completed","purpose":"auto-commit","error":"NONE")") !=
          std::string::npos;
      CHECK((std::find(commits["standard"].begin(), commits["standard"].end(), line) ==
             commits["standard"].end()) == dropped);
    }
    CHECK(heartbeats["full"].size() == x.full_heartbeats);
    CHECK(heartbeats["standard"].size() == x.standard_heartbeats);
    if (x.variant != "share") {  // a share heartbeat's request line does not say its epoch
      const LevelWalk w = walk_levels(file("full", "trace.jsonl"), file("standard", "trace.jsonl"));
      CAPTURE(w.first_problem);
      CHECK(w.matched);
      CHECK(w.group_epoch_changes == static_cast<int>(x.epochs.size()) - 1);
      CHECK(w.group_epoch_joined == 2);
      CHECK(w.group_epoch_left == 1);
      CHECK(static_cast<std::size_t>(w.auto_commit_completions_dropped) ==
            x.full_commits - x.standard_commits);
      CHECK(w.epoch_heartbeats_dropped == x.epoch_answers);
    }
    // The readers: the summary, timeline.csv (its group.epoch rows with the same members,
    // sorted), lag.csv, and report.html's epoch labels.
    CHECK(file("full", "summary.json") == file("standard", "summary.json"));
    CHECK(timeline_differs(file("full", "timeline.csv"), file("standard", "timeline.csv")) == "");
    CHECK(steps_differ(lag_csv_steps(file("full", "lag.csv")),
                       lag_csv_steps(file("standard", "lag.csv"))) == "");
  }
  const auto labels = epoch_labels(testing::read_file(d / "full" / "report.html"));
  CHECK(labels.size() == 14);  // 4 classic generations, 5 epochs of each of the other two
  CHECK(labels == epoch_labels(testing::read_file(d / "standard" / "report.html")));
  CHECK(
      std::find(labels.begin(), labels.end(),
                "group epoch 4, target assignment epoch 4, 3 members: A, B, C (member C joined)") !=
      labels.end());
  fs::remove_all(d);
}

TEST_CASE("standard: a share group's steady ShareGroupHeartbeats are written at full only") {
  // One share consumer on one partition for 60 s (group.share.heartbeat.interval.ms 5000). Its
  // join (epoch 0, with its subscription) and the answer are news. It acknowledges the join's
  // empty assignment at once (a quiet request, and a NONE answer at the same epoch without an
  // assignment). One interval after that answer it heartbeats with nothing new (a quiet request)
  // and the answer brings its assignment (not quiet); it heartbeats again at once and then every
  // 5 s until 60 s: 11 steady heartbeats, each a quiet request and a quiet answer.
  // full: 14 heartbeats, 28 lines; standard: the join's 2 and the assignment's answer.
  const auto d = temp_dir("share");
  testing::write_file(d / "share-one.json", R"({
  "name": "share-one-steady", "seed": 1, "duration_ms": 60000, "protocols": ["share"],
  "cluster": {"brokers": 1, "config": {}},
  "network": {"latency_ms": {"dist": "constant", "value": 1}},
  "topics": [{"name": "jobs", "partitions": 1, "produce": {"records_per_sec": 10}}],
  "consumers": [{"name": "C1", "group": "queue", "topics": ["jobs"]}],
  "events": [{"at_ms": 0, "do": "start", "consumer": "C1"}]
})");
  std::map<std::string, std::vector<std::string>> heartbeats;
  std::map<std::string, std::string> summary;
  for (const std::string level : {"full", "standard"}) {
    const auto r = testing::run_cli("run " + (d / "share-one.json").string() + " --trace " + level +
                                        " --quiet --out " + (d / level).string(),
                                    "levels-share");
    REQUIRE(r.code == 0);
    for (const auto& line : lines_of(testing::read_file(d / level / "share" / "trace.jsonl")))
      if (line.find("\"api\":\"ShareGroupHeartbeat\"") != std::string::npos)
        heartbeats[level].push_back(line);
    summary[level] = testing::read_file(d / level / "share" / "summary.json");
  }
  CHECK(summary["full"] == summary["standard"]);
  CHECK(heartbeats["full"].size() == 28);
  REQUIRE(heartbeats["standard"].size() == 3);
  CHECK(heartbeats["standard"][0] == heartbeats["full"][0]);  // the join
  CHECK(heartbeats["standard"][1] == heartbeats["full"][1]);  // its answer: the member epoch
  CHECK(heartbeats["standard"][2] == heartbeats["full"][5]);  // the answer bringing the assignment
  CHECK(heartbeats["standard"][2].find("\"dir\":\"recv\"") != std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("a bad --trace level is a usage error (exit 2) and writes nothing") {
  const auto d = temp_dir("bad");
  const auto r = testing::run_cli(
      "run scenarios/examples/two-consumers.json --trace verbose --out " + (d / "out").string(),
      "levels-bad", true);
  CHECK(r.code == 2);
  CHECK_FALSE(fs::exists(d / "out"));
  fs::remove_all(d);
}

TEST_CASE("--quiet prints nothing on success and still exits 1 on a failed expectation") {
  const auto d = temp_dir("quiet");
  const auto r = testing::run_cli(
      "run scenarios/examples/two-consumers.json --quiet --out " + (d / "out").string(),
      "levels-quiet");
  CHECK(r.code == 0);
  CHECK(r.out.empty());
  CHECK(r.err.empty());  // stderr is not a terminal here: no progress line either
  CHECK(fs::exists(d / "out" / "classic-eager" / "summary.json"));
  fs::remove_all(d);
}

TEST_CASE(
    "bench scale --trace: none writes no trace, standard does; a bad level is a usage error") {
  // 20 consumers x 200 partitions for 10 virtual s: the same events at both levels (the trace
  // level changes what is written, never what happens), trace bytes only at standard.
  const auto row = [](const std::string& out) {
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line))
      if (line.find("20 x 200") != std::string::npos) return line;
    return std::string();
  };
  const auto none =
      testing::run_cli("bench scale --sizes 20x200 --virtual-ms 10000 --trace none", "bench-none");
  const auto standard =
      testing::run_cli("bench scale --sizes 20x200 --virtual-ms 10000", "bench-standard");
  REQUIRE(none.code == 0);
  REQUIRE(standard.code == 0);
  CHECK(none.out.find("trace none (summary only)") != std::string::npos);
  CHECK(standard.out.find("trace at standard detail") != std::string::npos);
  std::istringstream a(row(none.out)), b(row(standard.out));
  std::string a_label, x, b_label, y, a_events, b_events;
  a >> a_label >> x >> y >> a_events;
  b >> b_label >> x >> y >> b_events;
  CHECK(!a_events.empty());
  CHECK(a_events == b_events);
  // The trace column: "-" without a trace, a size with one.
  CHECK(row(none.out).find(" - ") != std::string::npos);
  CHECK((row(standard.out).find("KiB") != std::string::npos ||
         row(standard.out).find("MiB") != std::string::npos));
  const auto bad =
      testing::run_cli("bench scale --sizes 20x200 --trace verbose", "bench-bad", true);
  CHECK(bad.code == 2);
}

TEST_CASE("bench scale --print-scenario: the bench's scenario of one size, runnable by `run`") {
  // 20 consumers x 200 partitions for 10 virtual s (tools/bench/scale_bench.cpp's shape): starts
  // 100 + i * 900 / 20 ms; 1 % crash (at least one): c0 at a quarter of the run, 2,500 ms, back
  // 10 s later; 10 % (two) restart gracefully from four fifths, 8,000 ms, 200 ms apart: c19, then
  // c(19 - 7) = c12.
  const auto printed = testing::run_cli(
      "bench scale --print-scenario --sizes 20x200 --virtual-ms 10000 --protocol classic-eager "
      "--protocol consumer",
      "bench-print");
  REQUIRE(printed.code == 0);
  const auto doc = nlohmann::json::parse(printed.out);
  CHECK(doc["protocols"] == nlohmann::json({"classic-eager", "consumer"}));
  CHECK(doc["duration_ms"] == 10000);
  CHECK(doc["topics"][0]["partitions"] == 200);
  REQUIRE(doc["consumers"].size() == 20);
  const auto& events = doc["events"];
  REQUIRE(events.size() == 23);
  CHECK(events[0]["at_ms"] == 100);
  CHECK(events[19]["at_ms"] == 955);
  CHECK(events[20] == nlohmann::json({{"at_ms", 2500},
                                      {"do", "restart"},
                                      {"consumer", "c0"},
                                      {"after_ms", 10000},
                                      {"graceful", false}}));
  CHECK(events[21]["at_ms"] == 8000);
  CHECK(events[21]["consumer"] == "c19");
  CHECK(events[22]["at_ms"] == 8200);
  CHECK(events[22]["consumer"] == "c12");
  CHECK(events[22]["graceful"] == true);
  // What it prints runs as a scenario file, every protocol it names.
  const fs::path d = temp_dir("print-scenario");
  fs::create_directories(d);
  { std::ofstream(d / "scale.json") << printed.out; }
  const auto run = testing::run_cli(
      "run " + (d / "scale.json").string() + " --trace none --quiet --out " + (d / "out").string(),
      "bench-print-run");
  CHECK(run.code == 0);
  CHECK(fs::exists(d / "out" / "classic-eager" / "summary.json"));
  CHECK(fs::exists(d / "out" / "consumer" / "summary.json"));
  fs::remove_all(d);
  // One size only; more than one protocol only when printing.
  CHECK(
      testing::run_cli("bench scale --print-scenario --sizes 20x200,40x400", "bench-print-2", true)
          .code == 2);
  CHECK(testing::run_cli(
            "bench scale --sizes 20x200 --virtual-ms 10000 --protocol consumer --protocol "
            "classic-eager",
            "bench-two-protocols", true)
            .code == 2);
}
