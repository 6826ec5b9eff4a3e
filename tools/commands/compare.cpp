#include "tools/commands/compare.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <openssl/evp.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "models/scenario/scenario.hpp"
#include "models/spec/kafka_config.hpp"
#include "reports/compare_report.hpp"
#include "reports/timeline.hpp"
#include "tools/exit_codes.hpp"
#include "tools/runner.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;

namespace {

/// The scenario's members for compare::simultaneous_starts: each one's first start and its
/// consumer object as written, without its name and client.id.
std::vector<compare::StartedMember> started_members(const ScenarioSpec& spec,
                                                    const std::string& scenario_text) {
  std::vector<compare::StartedMember> out;
  const auto doc = nlohmann::json::parse(scenario_text, nullptr, false, true);
  for (const auto& c : spec.consumers) {
    compare::StartedMember m{.name = c.name};
    for (const auto& e : spec.events)
      if (const auto* start = e.as<verb::Start>(); start != nullptr && start->consumer == c.name) {
        m.first_start_us = e.at.count();
        break;
      }
    if (doc.is_object() && doc.contains("consumers") && doc["consumers"].is_array())
      for (auto written : doc["consumers"])
        if (written.is_object() && written.value("name", "") == c.name) {
          written.erase("name");
          if (written.contains("config") && written["config"].is_object())
            written["config"].erase("client.id");
          m.spec = written.dump();
        }
    out.push_back(std::move(m));
  }
  return out;
}

/// The scenario's simultaneous stops (compare::SimultaneousStop): the members whose `stop` events
/// are at one instant, two or more. Each one's leave waits at most for its parked ShareFetch
/// (fetch.max.wait.ms: the consumer's share config, else its config, else Kafka's 500) and the
/// close's two round trips, which like every record time are allowed the share tolerance.
std::vector<compare::SimultaneousStop> simultaneous_stops(const ScenarioSpec& spec,
                                                          std::int64_t tolerance_ms) {
  const auto fetch_max_wait_ms = [&](const std::string& name) {
    std::int64_t ms = ConsumerConfig{}.fetch_max_wait_ms;
    for (const auto& c : spec.consumers) {
      if (c.name != name) continue;
      std::vector<const ConfigMap*> maps{&c.config};
      if (const auto it = c.config_by_protocol.find("share"); it != c.config_by_protocol.end())
        maps.push_back(&it->second);
      for (const ConfigMap* m : maps)
        if (const auto v = m->find("fetch.max.wait.ms"); v != m->end() && v->second.is_integer())
          ms = v->second.get<std::int64_t>();
    }
    return ms;
  };
  std::map<std::int64_t, compare::SimultaneousStop> by_instant;
  for (const auto& e : spec.events)
    if (const auto* stop = e.as<verb::Stop>(); stop != nullptr) {
      auto& g = by_instant[e.at.count()];
      g.at_us = e.at.count();
      g.members.push_back(stop->consumer);
      g.bound_us = std::max(g.bound_us, (fetch_max_wait_ms(stop->consumer) + tolerance_ms) * 1000);
    }
  std::vector<compare::SimultaneousStop> out;
  for (auto& [at, g] : by_instant)
    if (g.members.size() > 1) out.push_back(std::move(g));
  return out;
}

/// The most records the scenario's producers write per second over all partitions: each topic at
/// the highest rate it is given (its own `produce`, or a `produce` event's), times its partitions.
double produced_per_sec(const ScenarioSpec& spec) {
  const auto rate = [](const std::optional<sim::Distribution>& gap) {
    if (!gap) return 0.0;
    const double ms = gap->expected_ms();
    return ms > 0 ? 1000.0 / ms : 0.0;
  };
  double total = 0;
  for (const auto& t : spec.topics) {
    double most = rate(t.produce_gap);
    for (const auto& e : spec.events)
      if (const auto* p = e.as<verb::Produce>(); p != nullptr && p->topic == t.name)
        most = std::max(most, rate(p->produce_gap));
    total += most * t.partitions;
  }
  return total;
}

// An istream over text held elsewhere (std::istringstream would copy a whole trace).
struct TextStream {
  struct Buffer : std::streambuf {
    explicit Buffer(const std::string& text) {
      char* begin = const_cast<char*>(text.data());  // read only: the get area is never written
      setg(begin, begin, begin + text.size());
    }
  };
  explicit TextStream(const std::string& text) : buffer(text), stream(&buffer) {}
  Buffer buffer;
  std::istream stream;
};

// Never throws: a path that cannot be looked at is no file.
bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string sha256_hex(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  std::string out;
  for (unsigned int i = 0; i < len; ++i) out += fmt::format("{:02x}", md[i]);
  return out;
}

/// A recorded trace's facts, streamed (never held whole); a malformed line, a wrongly typed field
/// or a trace cut short (no run.end line last) is bad input (exit 2), named by file and line.
compare::TraceFacts read_trace_facts(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ScenarioError(file.string(), {"cannot read the file"});
  try {
    return compare::facts_of_stream(in, file.string());
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    // "FILE: line N: ..." -> "line N: ..." (the error names the file once).
    if (what.rfind(file.string() + ": ", 0) == 0) what = what.substr(file.string().size() + 2);
    throw ScenarioError(file.string(), {what});
  }
}

reports::Timeline timeline_of(std::istream& trace_jsonl, const nlohmann::ordered_json& summary,
                              const std::string& source) {
  try {
    return reports::build_timeline(trace_jsonl, summary);
  } catch (const std::runtime_error& e) {
    throw ScenarioError(source, {e.what()});
  } catch (const nlohmann::json::exception& e) {
    throw ScenarioError(source, {fmt::format("a field of an unexpected type: {}", e.what())});
  }
}

/// The scenario_sha256 a recording's meta.json names ("" when it names none); a meta.json that
/// is not JSON, or not the object the oracle writes, is bad input.
std::string recorded_sha256(const fs::path& meta) {
  const std::string text = read_file(meta);
  const auto m = nlohmann::json::parse(text, nullptr, false);
  if (m.is_discarded())
    throw ScenarioError(meta.string(),
                        {"not valid json (the oracle writes an object; record the run again)"});
  if (!m.is_object())
    throw ScenarioError(meta.string(),
                        {fmt::format("must be a JSON object (as the oracle writes it), got {}",
                                     one_line(m.dump().substr(0, 40)))});
  const auto it = m.find("scenario_sha256");
  if (it == m.end()) return "";
  if (!it->is_string())
    throw ScenarioError(
        meta.string(),
        {fmt::format("/scenario_sha256: must be a string (the sha256 of the scenario file), got {}",
                     one_line(it->dump().substr(0, 40)))});
  return it->get<std::string>();
}

}  // namespace

reports::SideBySideVariant side_by_side(const compare::VariantComparison& c, reports::Timeline sim,
                                        std::vector<reports::Timeline> real) {
  reports::SideBySideVariant v;
  v.variant = c.variant;
  v.tolerance_ms = c.tolerance_ms;
  v.sim = std::move(sim);
  v.real = std::move(real);
  v.real_names = c.real_dirs;
  for (const auto& row : c.callbacks)
    v.callbacks.push_back({row.callback.consumer, row.callback.kind,
                           compare::compact_partitions(row.callback.partitions), row.sim_us,
                           row.real_us, row.within, row.race});
  v.summary = compare::summary_lines(c);
  v.passed = c.passed();
  return v;
}

ScenarioSpec with_recorded_member_ids(const ScenarioSpec& spec, const compare::TraceFacts& run) {
  ScenarioSpec out = spec;
  for (auto& c : out.consumers) {
    const auto it = run.member_ids.find(c.name);
    c.member_ids = it == run.member_ids.end() ? std::vector<std::string>{} : it->second;
  }
  return out;
}

RecordedStarts recorded_starts(std::istream& trace_jsonl) {
  RecordedStarts out;
  std::string line;
  while (std::getline(trace_jsonl, line)) {
    const bool subscribed = line.find("\"consumer.subscribed\"") != std::string::npos;
    if (!subscribed && line.find("\"consumer.start\"") == std::string::npos) continue;
    const auto e = nlohmann::json::parse(line, nullptr, false);
    if (!e.is_object() || !e.contains("t_us") || !e["t_us"].is_number() ||
        !e.contains("consumer") || !e["consumer"].is_string())
      continue;  // facts_of_stream names a malformed line; nothing to replay from it
    const std::string type = e.value("type", "");
    if (type != "consumer.subscribed" && type != "consumer.start") continue;
    const std::int64_t incarnation =
        e.contains("incarnation") && e["incarnation"].is_number_integer()
            ? e["incarnation"].get<std::int64_t>()
            : 0;
    auto& at = out.first_poll_us[e["consumer"].get<std::string>()];
    const auto t = static_cast<std::int64_t>(e["t_us"].get<double>());
    // subscribe() returned: the first poll() follows. A consumer.start only until then.
    if (type == "consumer.subscribed") {
      at[incarnation] = t;
      out.subscribed = true;
    } else {
      at.try_emplace(incarnation, t);
    }
  }
  return out;
}

ScenarioSpec with_recorded_starts(const ScenarioSpec& spec, const RecordedStarts& run) {
  ScenarioSpec out = spec;
  if (!run.subscribed) return out;
  for (auto& c : out.consumers) {
    c.start_latencies.clear();
    const auto rec = run.first_poll_us.find(c.name);
    if (rec == run.first_poll_us.end()) continue;
    std::vector<std::int64_t> scripted;  // its process starts' instants, µs, in script order
    for (const auto& e : spec.events)
      if (const auto* start = e.as<verb::Start>(); start != nullptr && start->consumer == c.name)
        scripted.push_back(e.at.count());
      else if (const auto* r = e.as<verb::Restart>(); r != nullptr && r->consumer == c.name)
        scripted.push_back((e.at + r->after).count());
    for (std::size_t k = 0; k < scripted.size(); ++k) {
      const auto it = rec->second.find(static_cast<std::int64_t>(k));
      if (it == rec->second.end()) break;  // no such process recorded: the draws from here
      c.start_latencies.push_back(
          sim::SimTime(std::max<std::int64_t>(0, it->second - scripted[k])));
    }
  }
  return out;
}

CLI::App* add_compare_subcommand(CLI::App& app, CompareArgs& args) {
  auto* c = app.add_subcommand("compare",
                               "run the simulator on a scenario and compare it with recorded "
                               "real-Kafka runs (exit 1 beyond the tolerances)");
  c->add_option("scenario", args.scenario, "scenario file (JSON)")->required();
  c->add_option("--real", args.real,
                "directory of a real run, holding <variant>/trace.jsonl and meta.json (repeatable: "
                "the spread "
                "between runs is shown)")
      ->required();
  c->add_option("--protocol", args.protocols,
                "variant to compare (repeatable; default: every recorded variant)");
  c->add_option("--tolerance-classic-ms", args.tolerances.classic_ms,
                "allowed |real - sim| per callback under classic-eager and classic-cooperative "
                "(default 150)");
  c->add_option("--tolerance-consumer-ms", args.tolerances.consumer_ms,
                "allowed |real - sim| per callback under consumer (default 400)");
  c->add_option(
      "--tolerance-share-ms", args.tolerances.share_ms,
      "allowed |real - sim| per redelivered or archived record under share (default 400)");
  c->add_option("--tolerance-share-count-pct", args.tolerances.share_count_pct,
                "allowed |real - sim| of a share count (acquired, released, ...) in % of the real "
                "run's, at least 2 "
                "(default 10)");
  c->add_option(
      "--match-window-ms", args.tolerances.match_window_ms,
      "callbacks further apart than this are never matched with each other (default 10000)");
  c->add_option("--json", args.json_out, "also write the comparison as JSON to FILE");
  c->add_option("--out", args.out_dir,
                "also write OUT/report.html (per consumer the simulator's lane beside each real "
                "run's, matched "
                "callbacks linked, deviations beyond the tolerance in red, and this table) and "
                "OUT/compare.json");
  c->add_flag("--seeded-member-ids", args.seeded_member_ids,
              "let the simulator draw its own member ids; by default it is given run 1's (the "
              "first --real), consumer by consumer in the order they were drawn, because which "
              "member gets which partitions follows the order of the ids (docs/fidelity.md, "
              "finding 21)");
  c->add_flag("--force", args.force,
              "write --out into a non-empty folder that is not an output folder of "
              "rebalance-sim (no .rebalance-sim-manifest.json): what it holds is kept, except "
              "entries named as the outputs");
  c->footer(
      "Example: rebalance-sim compare scenarios/examples/two-consumers.json --real "
      "fidelity/real/two-consumers "
      "--real fidelity/real/two-consumers/run-2 --out out/two-consumers-vs-kafka");
  return c;
}

int cmd_compare(const CompareArgs& args) {
  const ScenarioSpec spec = load_scenario_file(args.scenario);
  const std::string scenario_text = read_file(args.scenario);
  const std::string sha = sha256_hex(scenario_text);
  const auto simultaneous = compare::simultaneous_starts(started_members(spec, scenario_text));
  std::vector<std::string> variants = args.protocols.empty() ? spec.protocols : args.protocols;
  std::vector<std::string> recorded;
  for (const auto& v : variants) {
    std::size_t present = 0;
    for (const auto& d : args.real) present += is_file(fs::path(d) / v / "trace.jsonl") ? 1 : 0;
    if (present == args.real.size()) {
      recorded.push_back(v);
    } else if (present > 0 || !args.protocols.empty()) {
      std::string message;
      for (const auto& d : args.real)
        if (!is_file(fs::path(d) / v / "trace.jsonl"))
          message += fmt::format(
              "{}{}: no {}/trace.jsonl (record it with `make oracle SCENARIO={} VARIANTS={}`)",
              message.empty() ? "" : "\n", d, v, args.scenario, v);
      throw BadInput(message);
    }
  }
  if (recorded.empty()) {
    throw BadInput(fmt::format("{}: no recorded variant of {} ({}) in it", args.real.front(),
                               args.scenario, fmt::join(variants, ", ")));
  }
  std::error_code ec;
  if (!args.out_dir.empty() && fs::exists(args.out_dir, ec) && !fs::is_directory(args.out_dir, ec))
    throw ScenarioError(args.out_dir,
                        {"--out must name a directory (it is created when missing), not a file"});
  // --out is an owned folder committed whole (tools/staged_output.hpp), claimed before the runs:
  // a folder that is not rebalance-sim's is refused (exit 2) at no cost.
  std::optional<StagedOutput> staged;
  if (!args.out_dir.empty()) {
    staged.emplace(fs::path(args.out_dir), OutputOwner{spec.name, args.scenario, args.force});
    staged->claim({"report.html", "compare.json"});
  }
  bool all_passed = true;
  nlohmann::ordered_json report = nlohmann::ordered_json::array();
  std::vector<reports::SideBySideVariant> pages;
  for (const auto& v : recorded) {
    std::vector<compare::TraceFacts> real;
    std::vector<std::string> dirs;
    for (const auto& d : args.real) {
      const fs::path dir = fs::path(d) / v;
      const fs::path meta = dir / "meta.json";
      if (is_file(meta)) {
        const std::string recorded_sha = recorded_sha256(meta);
        if (!recorded_sha.empty() && recorded_sha != sha)
          std::cerr << fmt::format("note: {} was recorded from another version of {} (sha256 {})\n",
                                   one_line(dir.string()), one_line(args.scenario),
                                   one_line(recorded_sha));
      }
      real.push_back(read_trace_facts(dir / "trace.jsonl"));
      dirs.push_back(dir.string());
    }
    RunOptions keep;  // the whole trace, in memory, as the simulator writes it at full detail
    keep.level = TraceLevel::Full;
    keep.keep_trace = true;
    // Run 1's member ids are the simulator's (finding 21): the same draws give the same order.
    // Its starts too (finding 34): each consumer's first poll() when run 1's began.
    RecordedStarts starts;
    {
      std::ifstream in(fs::path(args.real.front()) / v / "trace.jsonl", std::ios::binary);
      starts = recorded_starts(in);
    }
    const auto outputs = run_variants(
        with_recorded_starts(
            args.seeded_member_ids ? spec : with_recorded_member_ids(spec, real.front()), starts),
        {v}, std::nullopt, keep);
    compare::TraceFacts sim_facts;
    {
      TextStream sim_in(outputs.at(0).trace_jsonl);  // read in place, not copied
      sim_facts = compare::facts_of_stream(sim_in.stream, "simulator trace");
    }
    sim_facts.simultaneous = simultaneous;
    if (v == "share")
      sim_facts.simultaneous_stops = simultaneous_stops(spec, args.tolerances.share_ms);
    sim_facts.produced_per_sec = produced_per_sec(spec);
    const auto c = compare::compare_variant(v, sim_facts, real, dirs, args.tolerances);
    const std::string table = compare::render_table(spec.name, c);
    std::cout << escaped_lines(table) << "\n";  // names from the traces: control characters escaped
    report.push_back(compare::to_json(spec.name, c));
    all_passed = all_passed && c.passed();
    if (!args.out_dir.empty()) {
      std::vector<reports::Timeline> real_timelines;
      for (const auto& d : dirs) {
        const fs::path file = fs::path(d) / "trace.jsonl";
        std::ifstream in(file, std::ios::binary);
        if (!in) throw ScenarioError(file.string(), {"cannot read the file"});
        real_timelines.push_back(timeline_of(
            in, nlohmann::ordered_json{{"scenario", spec.name}, {"protocol", v}}, file.string()));
      }
      TextStream sim_in(outputs.at(0).trace_jsonl);
      pages.push_back(
          side_by_side(c, timeline_of(sim_in.stream, outputs.at(0).summary, "simulator trace"),
                       std::move(real_timelines)));
      pages.back().table_text = table;
    }
  }
  if (!args.json_out.empty()) {
    write_file_atomically(args.json_out, report.dump(2) + "\n");
  }
  if (!args.out_dir.empty()) {
    // Staged, checked writes fsynced, then one swap: a full disk or an unwritable folder is an
    // OutputError (exit 2) and leaves the old folder as it was, with no staging folder behind.
    const fs::path html = fs::path(args.out_dir) / "report.html",
                   json = fs::path(args.out_dir) / "compare.json";
    staged->write_file("report.html", reports::render_side_by_side(spec.name, pages));
    staged->write_file("compare.json", report.dump(2) + "\n");
    staged->commit();
    std::cout << fmt::format("wrote {}\nwrote {}\n", one_line(html.string()),
                             one_line(json.string()));
  }
  return all_passed ? kOk : kExpectationFailed;
}

}  // namespace rsim::cli
