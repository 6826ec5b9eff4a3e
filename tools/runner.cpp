#include "tools/runner.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "build_info.hpp"
#include "models/protocol/config.hpp"
#include "models/protocol/variant.hpp"
#include "models/scenario/world.hpp"
#include "models/trace/trace_jsonl.hpp"
#include "reports/share_summary.hpp"
#include "reports/summary.hpp"
#include "tools/progress.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;

std::optional<TraceLevel> parse_trace_level(const std::string& s) {
  if (s == "full") return TraceLevel::Full;
  if (s == "standard") return TraceLevel::Standard;
  if (s == "none") return TraceLevel::None;
  return std::nullopt;
}

std::vector<std::string> steady_consumers_of(const ScenarioSpec& spec) {
  return start_up_consumers(spec);
}

namespace {

/// The consumer configs the critical paths' causes name, of one incarnation: `spec`'s configs
/// (with its event configs merged over them) under `variant`, Kafka's defaults applied.
std::vector<std::pair<std::string, std::int64_t>> cause_configs(const ConsumerSpec& spec,
                                                                const std::string& variant) {
  const ConsumerConfig c = resolve_consumer_config(spec, variant, 1);
  return {{"heartbeat.interval.ms", c.heartbeat_interval_ms},
          {"max.poll.interval.ms", c.max_poll_interval_ms},
          {"session.timeout.ms", c.session_timeout_ms}};
}

/// The variant an incarnation whose configs say `group.protocol` runs (as the world picks it).
std::string incarnation_variant(const std::string& variant, const ConfigMap& config) {
  const auto gp = config.find("group.protocol");
  if (gp == config.end() || !gp->second.is_string()) return variant;
  const auto v = variant_named(variant);
  const std::string p = gp->second.get<std::string>();
  if (!v || p == group_protocol_name(group_protocol(*v))) return variant;
  return p == group_protocol_name(GroupProtocol::Consumer) ? variant_name(Variant::Consumer)
                                                           : variant_name(Variant::ClassicEager);
}

/// `spec` with `config` merged over its configs (a start/restart's or a rollout's), as the
/// world builds the next incarnation: `group.protocol` picks the variant and is not a config.
void merge_event_config(ConsumerSpec& spec, std::string& variant, const ConfigMap& config) {
  variant = incarnation_variant(variant, config);
  for (const auto& [k, v] : config) {
    if (k == "group.protocol") continue;
    spec.config[k] = v;
    for (auto& [gp, cfg] : spec.config_by_protocol) cfg.erase(k);
  }
}

}  // namespace

nlohmann::ordered_json effective_config(const ScenarioSpec& spec, const std::string& variant) {
  using ojson = nlohmann::ordered_json;
  if (!variant_named(variant)) return nullptr;
  // Per consumer (and deployment pod template), each key's value over all its incarnations;
  // nullopt where they disagree.
  using Values = std::map<std::string, std::optional<std::int64_t>>;
  std::map<std::string, Values> consumers;
  std::vector<Values> templates;
  const auto fold = [](Values& into,
                       const std::vector<std::pair<std::string, std::int64_t>>& values) {
    for (const auto& [k, v] : values) {
      const auto [it, fresh] = into.try_emplace(k, v);
      if (!fresh && it->second != v) it->second.reset();
    }
  };
  for (const auto& c : spec.consumers) {
    ConsumerSpec s = c;
    std::string v = variant;
    fold(consumers[c.name], cause_configs(s, v));
    for (const auto& e : spec.events) {
      const ConfigMap* config = nullptr;
      if (const auto* start = e.as<verb::Start>();
          start != nullptr && start->consumer == c.name && start->has_config)
        config = &start->config;
      if (const auto* restart = e.as<verb::Restart>();
          restart != nullptr && restart->consumer == c.name && restart->has_config)
        config = &restart->config;
      if (config == nullptr) continue;
      merge_event_config(s, v, *config);
      fold(consumers[c.name], cause_configs(s, v));
    }
  }
  for (const auto& d : spec.deployments) {
    if (!d.consumer) continue;
    ConsumerSpec s = *d.consumer;
    std::string v = incarnation_variant(variant, s.config);
    s.config.erase("group.protocol");
    Values& t = templates.emplace_back();
    fold(t, cause_configs(s, v));
    for (const auto& e : spec.events)
      if (const auto* r = e.as<verb::Rollout>();
          r != nullptr && r->deployment == d.name && r->has_config) {
        merge_event_config(s, v, r->config);
        fold(t, cause_configs(s, v));
      }
  }
  ojson out;
  const BrokerConfig b = resolve_broker_config(spec.cluster);
  out["cluster"] = {
      {"group.consumer.assignment.interval.ms", b.group_consumer_assignment_interval_ms},
      {"group.consumer.heartbeat.interval.ms", b.group_consumer_heartbeat_interval_ms},
      {"group.consumer.session.timeout.ms", b.group_consumer_session_timeout_ms},
      {"group.initial.rebalance.delay.ms", b.group_initial_rebalance_delay_ms}};
  // A key's value every consumer and pod template has in every incarnation goes under
  // `consumer`; the others under `consumers`, per consumer (null: its incarnations disagree).
  ojson common = ojson::object(), each = ojson::object();
  std::map<std::string, std::optional<std::int64_t>> shared;  // key -> the one value, if any
  std::map<std::string, bool> same;
  const auto look = [&](const Values& values) {
    for (const auto& [k, v] : values) {
      const auto [it, fresh] = shared.try_emplace(k, v);
      auto& s = same.try_emplace(k, true).first->second;
      if (!v || (!fresh && it->second != v)) s = false;
    }
  };
  for (const auto& [name, values] : consumers) look(values);
  for (const auto& t : templates) look(t);
  for (const auto& [k, s] : same)
    if (s) common[k] = *shared[k];
  for (const auto& [name, values] : consumers)
    for (const auto& [k, v] : values)
      if (!same[k]) each[name][k] = v ? ojson(*v) : ojson(nullptr);
  out["consumer"] = std::move(common);
  out["consumers"] = std::move(each);
  return out;
}

namespace {

reports::SummaryInputs summary_inputs(const ScenarioSpec& spec, const std::string& variant,
                                      std::uint64_t seed) {
  reports::SummaryInputs in;
  in.scenario = spec.name;
  in.protocol = variant;
  in.seed = seed;
  in.produced_by = {{"simulator", "rebalance-sim"},
                    {"version", build::kVersion},
                    {"commit", build::kCommit},
                    {"scenario_file", spec.source_path},
                    {"scenario_sha256", spec.sha256}};
  // The lesson report.html shows at its top (issue 35); only when the scenario has one.
  if (!spec.description.empty()) in.produced_by["scenario_description"] = spec.description;
  // The rebalance the lesson is about: report.html's step control opens it (issue 35).
  if (spec.lesson_rebalance_from_ms)
    in.produced_by["lesson_rebalance_from_ms"] = *spec.lesson_rebalance_from_ms;
  in.steady_consumers = steady_consumers_of(spec);
  in.config = effective_config(spec, variant);
  return in;
}

/// trace.jsonl streamed into the staging folder through a bounded buffer (fsynced on close).
class StagedTraceSink final : public TraceSink {
 public:
  static constexpr std::size_t kBuffer = 1 << 16;
  StagedTraceSink(const fs::path& path, std::uint64_t max_bytes, trace::Detail level)
      : file_(path), bound_(max_bytes), level_(level) {
    buffer_.reserve(kBuffer + 4096);
  }
  void on_event(sim::SimTime t, const trace::Event& e) override {
    const std::size_t start = buffer_.size();
    if (!trace::append_jsonl_at(buffer_, t, e, level_)) return;
    buffer_ += '\n';
    bound_.add(t, std::string_view(buffer_).substr(start));
    if (buffer_.size() >= kBuffer) flush();
  }
  void close() {
    flush();
    file_.close();
  }
  std::uint64_t bytes() const { return bound_.bytes(); }

 private:
  void flush() {
    file_.append(buffer_);
    buffer_.clear();
  }
  OutputFile file_;
  trace::TraceByteBound bound_;
  trace::LevelFilter level_;
  std::string buffer_;
};

}  // namespace

std::vector<VariantOutput> run_variants(const ScenarioSpec& spec,
                                        const std::vector<std::string>& protocols,
                                        std::optional<std::uint64_t> seed,
                                        const RunOptions& options) {
  const TraceLevel level = options.level;
  const std::vector<std::string>& variants = protocols.empty() ? spec.protocols : protocols;
  std::vector<std::string> problems;
  for (const auto& v : variants)
    for (auto& p : unsupported_features(spec, v)) problems.push_back(std::move(p));
  if (!problems.empty()) {
    std::sort(problems.begin(), problems.end());
    problems.erase(std::unique(problems.begin(), problems.end()), problems.end());
    throw ScenarioError(spec.source_path, problems);
  }
  std::vector<VariantOutput> out;
  if (options.staged != nullptr) {
    // The manifest names the folders of the run: <protocol>, or <settings variant> (a caller that
    // runs several settings variants sets the whole list after them).
    // A settings variant's run is one folder, DIR/<variant>/, holding its protocols' folders.
    options.staged->set_variants(
        options.variant.empty() ? variants : std::vector<std::string>{options.variant});
  }
  const std::uint64_t s = seed.value_or(spec.seed);
  for (const auto& v : variants) {
    VariantOutput o;
    o.protocol = v;
    o.variant = options.variant;
    // Where the variant's files go: <protocol>, or <settings variant>/<protocol>.
    std::string rel = options.variant.empty() ? v : options.variant + "/" + v;
    if (!options.prefix.empty()) rel = options.prefix + "/" + rel;
    reports::SummaryInputs inputs = summary_inputs(spec, v, s);
    inputs.not_processed_gaps = options.not_processed_gaps;
    reports::SummarySink summary(inputs);
    const bool streamed =
        options.stream_summary && options.staged != nullptr && v != "share" &&
        std::none_of(spec.expect.begin(), spec.expect.end(), [](const ExpectSpec& e) {
          return e.metric == "rebalances" || e.metric.starts_with("rebalances/");
        });
    if (streamed)
      summary.spool_rebalances(options.staged->staged(fs::path(rel) / "summary.rebalances.spool"));
    std::vector<TraceSink*> sinks{&summary};
    std::optional<reports::ShareSummarySink> share;
    if (v == "share") {
      share.emplace();
      sinks.push_back(&*share);
    }
    ExpectationSinks expect(spec, v, inputs);
    for (auto* sink : expect.sinks()) sinks.push_back(sink);
    std::optional<StagedTraceSink> jsonl;
    // The level trace.jsonl is written at (`none` keeps in memory what `standard` writes).
    const trace::Detail written =
        level == TraceLevel::Full ? trace::Detail::Full : trace::Detail::Standard;
    std::optional<trace::JsonlLinesSink> kept;
    std::optional<reports::InvariantSink> invariants;
    if (options.keep_trace) {
      kept.emplace();
      kept->set_level(written);
      kept->set_max_bytes(options.limits.max_trace_bytes);
      sinks.push_back(&*kept);
    }
    if (options.invariants) {
      std::optional<trace::Detail> lines;
      if (level == TraceLevel::Full) lines = written;
      invariants.emplace(options.invariants(v), lines, options.limits.max_trace_bytes);
      sinks.push_back(&*invariants);
    }
    std::optional<ProgressSink> progress_line;
    if (options.progress) {
      progress_line.emplace(fmt::format("{} [{}]", spec.name,
                                        options.variant.empty() ? v : options.variant + "/" + v),
                            spec.duration);
      sinks.push_back(&*progress_line);
    }
    if (options.staged != nullptr && level != TraceLevel::None) {
      jsonl.emplace(staged_trace_path(*options.staged, rel), options.limits.max_trace_bytes,
                    written);
      sinks.push_back(&*jsonl);
    }
    o.events_fired = run_scenario(spec, v, s, sinks, written, options.limits, options.model);
    if (progress_line) progress_line->finish();
    if (kept)
      for (const auto& line : kept->lines()) {
        o.trace_jsonl += line;
        o.trace_jsonl += '\n';
      }
    if (invariants) o.violations = invariants->finish();
    if (jsonl) {
      jsonl->close();
      o.trace_bytes = jsonl->bytes();
    }
    o.summary = streamed ? summary.finish_streamed() : summary.finish();
    if (options.not_processed_gaps) o.not_processed = summary.not_processed_gaps();
    if (!options.variant.empty()) {
      // The settings variant, right after the protocol.
      nlohmann::ordered_json named;
      for (auto it = o.summary.begin(); it != o.summary.end(); ++it) {
        named[it.key()] = std::move(it.value());
        if (it.key() == "protocol") named["variant"] = options.variant;
      }
      if (!named.contains("variant")) named["variant"] = options.variant;
      o.summary = std::move(named);
    }
    if (share) share->finish(o.summary);
    o.expectations = expect.results(o.summary);
    nlohmann::ordered_json checks = nlohmann::ordered_json::array();
    for (const auto& e : o.expectations) {
      nlohmann::ordered_json c{{"index", e.index},  {"assertion", e.what}, {"metric", e.metric},
                               {"op", e.op},        {"value", e.expected}, {"actual", e.actual},
                               {"passed", e.passed}};
      if (!e.detail.empty()) c["detail"] = e.detail;
      if (!e.message.empty()) c["message"] = e.message;
      checks.push_back(std::move(c));
    }
    o.summary["expectations"] = checks;
    if (streamed) {
      try {
        OutputFile file(options.staged->staged(fs::path(rel) / "summary.json"));
        summary.write_json([&](std::string_view bytes) { file.append(bytes); }, o.summary);
        file.append("\n");
        file.close();
      } catch (const OutputError& e) {
        throw options.staged->retold(e);  // named by the path it was going to have
      }
    } else if (options.staged != nullptr) {
      options.staged->write_file(fs::path(rel) / "summary.json", o.summary.dump(2) + "\n");
    }
    out.push_back(std::move(o));
  }
  return out;
}

fs::path staged_trace_path(StagedOutput& out, const std::string& protocol) {
  return out.staged(fs::path(protocol) / "trace.jsonl");
}

}  // namespace rsim::cli
