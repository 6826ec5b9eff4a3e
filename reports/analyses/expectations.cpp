#include "reports/analyses/expectations.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/scenario/spec_json.hpp"
#include "models/trace/trace_jsonl.hpp"
#include "reports/analyses/baseline.hpp"
#include "reports/critical_path.hpp"
#include "reports/summary.hpp"

namespace rsim::cli {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::string cur;
  for (std::size_t i = path.front() == '/' ? 1 : 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      // JSON Pointer escapes: ~1 is '/', ~0 is '~'.
      std::string seg;
      for (std::size_t j = 0; j < cur.size(); ++j) {
        if (cur[j] == '~' && j + 1 < cur.size() && (cur[j + 1] == '0' || cur[j + 1] == '1')) {
          seg += cur[j + 1] == '0' ? '~' : '/';
          ++j;
        } else {
          seg += cur[j];
        }
      }
      out.push_back(seg);
      cur.clear();
    } else {
      cur += path[i];
    }
  }
  return out;
}

std::optional<long> as_index(const std::string& s) {
  if (s.empty()) return std::nullopt;
  std::size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  for (std::size_t j = i; j < s.size(); ++j)
    if (s[j] < '0' || s[j] > '9') return std::nullopt;
  return std::stol(s);
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string suggest(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string guess = closest_match(word, candidates);
  return guess.empty() ? std::string() : fmt::format("; did you mean \"{}\"?", guess);
}

/// The metric a selector turns a scalar metric into: records_processed + consumer is
/// records_processed_by_consumer/<consumer>.
std::string by_consumer_of(const std::string& metric) {
  if (contains(reports::metrics_by_consumer(), metric)) return metric;
  if (metric == "records_processed") return "records_processed_by_consumer";
  if (metric == "paused_ms") return "paused_ms_by_consumer";
  if (metric == "not_processed_partition_ms") return "not_processed_ms_by_consumer";
  return "";
}
std::string by_partition_of(const std::string& metric) {
  if (contains(reports::metrics_by_partition(), metric)) return metric;
  if (metric == "unavailable_partition_ms") return "unavailable_ms_by_partition";
  if (metric == "max_unavailable_ms") return "max_unavailable_ms_by_partition";
  if (metric == "not_processed_partition_ms") return "not_processed_ms_by_partition";
  return "";
}

/// The path an entry evaluates: its metric with the selectors applied.
std::string effective_path(const ExpectSpec& x) {
  std::string path = x.metric;
  if (!path.empty() && path.front() == '/') path = path.substr(1);
  const bool plain = path.find('/') == std::string::npos;
  if (x.consumer) {
    const std::string m = plain ? by_consumer_of(path) : path;
    path = (m.empty() ? path : m) + "/" + *x.consumer;
  }
  if (x.partition) {
    const std::string m = plain ? by_partition_of(path) : path;
    path = (m.empty() ? path : m) + "/" + *x.partition;
  }
  return path;
}

std::string ms_text(std::int64_t ms) {
  return fmt::format("{}", ms);
}

std::string window_text(const ExpectSpec& x) {
  if (x.steady) return " over the steady window";
  if (!x.from_ms && !x.to_ms) return "";
  return fmt::format(" over [{}, {}) ms", x.from_ms ? ms_text(*x.from_ms) : "0",
                     x.to_ms ? ms_text(*x.to_ms) : "end");
}

std::string what_of(const ExpectSpec& x) {
  if (x.order)
    return fmt::format("order: {} before {}{}", json(x.first).dump(), json(x.then).dump(),
                       window_text(x));
  std::string sel;
  if (x.consumer) sel += fmt::format(" consumer={}", *x.consumer);
  if (x.partition) sel += fmt::format(" partition={}", *x.partition);
  const std::string value = json(x.value).dump();
  std::string cmp = fmt::format("{} {}", x.op, value);
  if (x.op == "within")
    cmp = fmt::format("within {} ± {}", value, fmt::format("{}", x.tolerance.value_or(0)));
  if (x.op == "between") cmp = fmt::format("between {}", value);
  return fmt::format("{}{} {}{}", x.metric, sel, cmp, window_text(x));
}

/// The partitions a scenario can have: every topic's largest partition count over its script.
std::map<std::string, std::int32_t> max_partitions(const ScenarioSpec& spec) {
  std::map<std::string, std::int32_t> out;
  for (const auto& t : spec.topics) out[t.name] = t.partitions;
  for (const auto& e : spec.events)
    if (const auto* add = e.as<verb::AddPartitions>())
      out[add->topic] = std::max(out[add->topic], add->partitions);
  return out;
}

class PathChecker {
 public:
  PathChecker(const ScenarioSpec& spec, std::string ptr, std::vector<std::string>& problems)
      : ptr_(std::move(ptr)), problems_(problems), partitions_(max_partitions(spec)) {
    for (const auto& c : spec.consumers) consumers_.push_back(c.name);
  }

  void check(const std::string& path) {
    if (path.empty()) return problem("must not be empty");
    const auto segs = split_path(path);
    const std::string& head = segs[0];
    if (contains(reports::metric_names(), head)) return check_metric(segs, 0);
    if (head == "metrics") {
      if (segs.size() < 2)
        return problem("\"metrics\" alone is not a value; name one, e.g. metrics/rebalance_count");
      if (!contains(reports::metric_names(), segs[1]))
        return problem(fmt::format("unknown metric \"{}\"", segs[1]) +
                       suggest(segs[1], reports::metric_names()));
      return check_metric(segs, 1);
    }
    if (head == "rebalances") return check_rebalances(segs);
    if (head == "overlaps") {
      if (segs.size() >= 2 && !as_index(segs[1]))
        return problem(fmt::format("\"{}\" is not an index of overlaps", segs[1]));
      if (segs.size() >= 3 &&
          !contains({"group", "partition", "consumers", "start_us", "end_us"}, segs[2]))
        return problem(fmt::format("overlaps have no field \"{}\"", segs[2]) +
                       suggest(segs[2], {"group", "partition", "consumers", "start_us", "end_us"}));
      return;
    }
    if (contains(reports::summary_keys(), head)) return;
    std::vector<std::string> all = reports::metric_names();
    for (const auto& k : reports::summary_keys()) all.push_back(k);
    problem(fmt::format("unknown metric \"{}\"", head) + suggest(head, all));
  }

 private:
  void problem(const std::string& what) {
    problems_.push_back(fmt::format("{}/metric: {}", ptr_, what));
  }

  void check_metric(const std::vector<std::string>& segs, std::size_t at) {
    const std::string& m = segs[at];
    const bool by_consumer = contains(reports::metrics_by_consumer(), m);
    const bool by_partition = contains(reports::metrics_by_partition(), m);
    if (segs.size() == at + 1) return;
    const std::string& key = segs[at + 1];
    if (by_consumer) {
      if (!contains(consumers_, key))
        return problem(fmt::format("\"{}\" is not a consumer of the scenario", key) +
                       suggest(key, consumers_));
      if (segs.size() > at + 2 &&
          (m != "final_assignment" || !as_index(segs[at + 2]) || segs.size() > at + 3))
        return problem(fmt::format("{}/{} has nothing under it", m, key));
      return;
    }
    if (by_partition) {
      check_partition(key);
      if (segs.size() > at + 2) return problem(fmt::format("{}/{} has nothing under it", m, key));
      return;
    }
    problem(fmt::format("metric \"{}\" is a number; nothing is under it", m));
  }

  void check_partition(const std::string& name) {
    const auto dash = name.rfind('-');
    const auto number = dash == std::string::npos ? std::nullopt : as_index(name.substr(dash + 1));
    if (!number || *number < 0)
      return problem(fmt::format("\"{}\" is not a partition (topic-N, as Kafka prints it)", name));
    const std::string topic = name.substr(0, dash);
    const auto it = partitions_.find(topic);
    if (it == partitions_.end()) {
      std::vector<std::string> topics;
      for (const auto& [t, n] : partitions_) topics.push_back(t);
      return problem(fmt::format("no topic \"{}\" in the scenario", topic) +
                     suggest(topic, topics));
    }
    if (*number >= it->second)
      problem(fmt::format("topic \"{}\" has {} partitions (0..{}), not {}", topic, it->second,
                          it->second - 1, *number));
  }

  void check_rebalances(const std::vector<std::string>& segs) {
    if (segs.size() < 2) return;
    if (!as_index(segs[1]))
      return problem(fmt::format(
          "\"{}\" is not an index of rebalances (0 is the first, -1 the last)", segs[1]));
    if (segs.size() < 3) return;
    const std::string& field = segs[2];
    if (!contains(reports::rebalance_fields(), field))
      return problem(fmt::format("a rebalance has no field \"{}\"", field) +
                     suggest(field, reports::rebalance_fields()));
    if (segs.size() < 4) return;
    if (field == "revoked" || field == "assigned" || field == "lost") {
      if (!contains(consumers_, segs[3]))
        problem(fmt::format("\"{}\" is not a consumer of the scenario", segs[3]) +
                suggest(segs[3], consumers_));
      return;
    }
    if (field == "causes" && as_index(segs[3]) && segs.size() == 4) return;
    if (field == "critical_path") return check_critical_path(segs);
    problem(fmt::format("rebalances/{}/{} has nothing under it", segs[1], field));
  }

  /// rebalances/N/critical_path/causes/<cause> (a number, ms), .../dominant (a cause's name) or
  /// .../steps/<i>[/<field>].
  void check_critical_path(const std::vector<std::string>& segs) {
    static const std::vector<std::string> parts{"causes", "dominant", "steps"};
    if (!contains(parts, segs[3]))
      return problem(fmt::format("a critical_path has no \"{}\"", segs[3]) +
                     suggest(segs[3], parts));
    if (segs.size() < 5) return;
    if (segs[3] == "dominant") return problem("critical_path/dominant has nothing under it");
    if (segs[3] == "causes") {
      std::vector<std::string> names;
      for (const auto n : reports::cause_names()) names.emplace_back(n);
      if (!contains(names, segs[4])) {
        const std::string guess = suggest(segs[4], names);
        return problem(
            fmt::format("\"{}\" is not a cause of a critical path", segs[4]) +
            (guess.empty() ? fmt::format(" (causes: {})", fmt::join(names, ", ")) : guess));
      }
      if (segs.size() > 5)
        problem(fmt::format("critical_path/causes/{} has nothing under it", segs[4]));
      return;
    }
    if (!as_index(segs[4]))
      return problem(fmt::format(
          "\"{}\" is not an index of critical_path/steps (0 is the first, -1 the last)", segs[4]));
    static const std::vector<std::string> step_fields{"actor", "causes",     "event",
                                                      "t_us",  "waited_for", "what"};
    if (segs.size() > 5 && !contains(step_fields, segs[5]))
      problem(fmt::format("a critical_path step has no field \"{}\"", segs[5]) +
              suggest(segs[5], step_fields));
  }

  std::string ptr_;
  std::vector<std::string>& problems_;
  std::map<std::string, std::int32_t> partitions_;
  std::vector<std::string> consumers_;
};

bool matches(const json& event, const json& matcher) {
  for (const auto& [k, v] : matcher.items()) {
    const auto it = event.find(k);
    if (it == event.end() || *it != v) return false;
  }
  return true;
}

double ms_of_us(std::int64_t us) {
  return static_cast<double>(us) / 1000.0;
}

/// A difference as people write it: rounded to the microsecond, shortest form (17.188, 10).
std::string num(double d) {
  return fmt::format("{}", std::round(d * 1e6) / 1e6);
}

}  // namespace

/// An order check followed event by event: the first event matching `first` in the window, then
/// the first matching `then` after it.
struct OrderState {
  const ExpectSpec* x = nullptr;
  json first, then;  // x's matchers as the JSON the events are compared with
  std::int64_t from = 0, to = INT64_MAX;
  std::optional<std::int64_t> first_at, then_at, then_before;
  bool done = false;

  explicit OrderState(const ExpectSpec& spec)
      : x(&spec),
        first(spec.first),
        then(spec.then),
        from(spec.from_ms.value_or(0) * 1000),
        to(spec.to_ms ? *spec.to_ms * 1000 : INT64_MAX) {}

  /// Whether the event at `t` of kind `type` can matter (before building its JSON).
  bool wants(std::int64_t t, std::string_view type) {
    if (done || t < from) return false;
    if (t >= to) {
      done = true;
      return false;
    }
    const json& next = first_at ? then : first;
    const auto want_type = [&](const json& m) {
      const auto it = m.find("type");
      return it == m.end() || !it->is_string() || it->get_ref<const std::string&>() == type;
    };
    return want_type(next) || (!first_at && !then_before && want_type(then));
  }
  void on(std::int64_t t, const json& e) {
    if (!first_at) {
      if (matches(e, first))
        first_at = t;
      else if (!then_before && matches(e, then))
        then_before = t;
      return;
    }
    if (matches(e, then)) {
      then_at = t;
      done = true;
    }
  }
  ExpectResult result() const {
    ExpectResult r;
    r.metric = "order";
    r.op = "order";
    r.expected = {{"first", first}, {"then", then}};
    r.at_us = then_at.value_or(first_at.value_or(0));
    if (!first_at) {
      r.actual = nullptr;
      r.detail = "no event matches `first`";
    } else if (!then_at) {
      r.actual = {{"first_ms", ms_of_us(*first_at)}, {"then_ms", nullptr}};
      r.detail = then_before ? fmt::format("`then` happened only before `first` (at {} ms)",
                                           ms_of_us(*then_before))
                             : "no event matching `then` follows `first`";
    } else {
      r.actual = {{"first_ms", ms_of_us(*first_at)}, {"then_ms", ms_of_us(*then_at)}};
      r.passed = true;
    }
    return r;
  }
};

namespace {

bool compare(const std::string& op, const json& a, const json& v, std::optional<double> tolerance,
             std::string& detail) {
  if (op == "==")
    return a.is_number() && v.is_number() ? a.get<double>() == v.get<double>() : a == v;
  if (op == "!=")
    return a.is_number() && v.is_number() ? a.get<double>() != v.get<double>() : a != v;
  if (!a.is_number()) {
    detail = fmt::format("op \"{}\" needs a number, the value is {}", op, a.dump());
    return false;
  }
  const double av = a.get<double>();
  if (op == "within") {
    const double off = av - v.get<double>();
    const bool ok = std::fabs(off) <= tolerance.value_or(0) + 1e-9;
    if (!ok) detail = fmt::format("off by {}{}", off > 0 ? "+" : "", num(off));
    return ok;
  }
  if (op == "between") {
    const double lo = v[0].get<double>(), hi = v[1].get<double>();
    const bool ok = av >= lo && av <= hi;
    if (!ok)
      detail = av < lo ? fmt::format("{} below the range", num(lo - av))
                       : fmt::format("{} above the range", num(av - hi));
    return ok;
  }
  const double vv = v.get<double>();
  return op == "<" ? av < vv : op == "<=" ? av <= vv : op == ">" ? av > vv : av >= vv;
}

}  // namespace

std::string ExpectResult::describe(bool with_protocol) const {
  std::string line = with_protocol
                         ? fmt::format("expect[{}] {} {}: expected ", index, protocol, what)
                         : fmt::format("expect[{}] {}: expected ", index, what);
  if (op == "order")
    line += "`first` then `then`";
  else if (op == "within")
    line += fmt::format("{}", what.substr(what.find("within ") + 7));
  else if (op == "between")
    line += fmt::format("in {}", expected.dump());
  else
    line += fmt::format("{} {}", op, expected.dump());
  line +=
      fmt::format(", actual {}", actual.is_null() && op != "order" ? "(missing from summary.json)"
                                                                   : actual.dump());
  if (!detail.empty()) line += fmt::format(" ({})", detail);
  if (!message.empty()) line += fmt::format(" — {}", message);
  return line;
}

json resolve_path(const ojson& summary, const std::string& path) {
  if (path.empty()) return nullptr;
  const auto segs = split_path(path);
  const ojson* at = nullptr;
  std::size_t i = 0;
  if (summary.contains("metrics") && summary.at("metrics").contains(segs[0])) {
    at = &summary.at("metrics").at(segs[0]);
    i = 1;
  } else if (summary.contains(segs[0])) {
    at = &summary.at(segs[0]);
    i = 1;
  } else {
    return nullptr;
  }
  for (; i < segs.size(); ++i) {
    const std::string& s = segs[i];
    if (at->is_array()) {
      const auto idx = as_index(s);
      if (!idx) return nullptr;
      const long n = static_cast<long>(at->size());
      const long k = *idx < 0 ? n + *idx : *idx;
      if (k < 0 || k >= n) return nullptr;
      at = &(*at)[static_cast<std::size_t>(k)];
    } else if (at->is_object()) {
      if (!at->contains(s)) return nullptr;
      at = &at->at(s);
    } else {
      return nullptr;
    }
  }
  return json::parse(at->dump());
}

std::vector<std::string> expectation_problems(const ScenarioSpec& spec) {
  std::vector<std::string> regression_problems;
  for (const auto& [metric, text] : spec.regression)
    if (const auto why = tolerance_metric_problem(metric); !why.empty())
      regression_problems.push_back(fmt::format("/regression/{}: {}", metric, why));
  std::vector<std::string> problems;
  for (const auto& x : spec.expect) {
    if (x.order) continue;
    const std::string ptr = fmt::format("/expect/{}", x.index);
    PathChecker checker(spec, ptr, problems);
    const std::size_t before = problems.size();
    checker.check(x.metric);
    if (problems.size() != before) continue;
    if (x.steady) {
      const std::string head = split_path(x.metric).front();
      if (!contains(reports::metric_names(), head) && head != "metrics")
        problems.push_back(fmt::format(
            "{}/window: \"steady\" computes metrics only; \"{}\" is not a metric", ptr, head));
    }
    const std::string plain = x.metric.front() == '/' ? x.metric.substr(1) : x.metric;
    const bool is_plain = plain.find('/') == std::string::npos;
    if (x.consumer && is_plain && by_consumer_of(plain).empty())
      problems.push_back(
          fmt::format("{}/consumer: metric \"{}\" is not per consumer (per consumer: {})", ptr,
                      plain, fmt::format("{}", fmt::join(reports::metrics_by_consumer(), ", "))));
    if (x.partition && is_plain && by_partition_of(plain).empty())
      problems.push_back(
          fmt::format("{}/partition: metric \"{}\" is not per partition (per partition: {})", ptr,
                      plain, fmt::format("{}", fmt::join(reports::metrics_by_partition(), ", "))));
    if (x.partition && is_plain && !by_partition_of(plain).empty()) {
      PathChecker(spec, ptr, problems).check(by_partition_of(plain) + "/" + *x.partition);
      if (problems.size() != before)
        problems.back().replace(problems.back().find("/metric:"), 8, "/partition:");
    }
  }
  problems.insert(problems.end(), regression_problems.begin(), regression_problems.end());
  return problems;
}

ScenarioSpec load_checked_scenario(const std::string& path) {
  // The expectations' paths are checked in the loader's pass: every problem of the file at once.
  return load_scenario_file(path, [](const ScenarioSpec& spec, bool clean) {
    auto problems = expectation_problems(spec);
    if (!clean) {
      // A consumer or topic entry with a problem of its own is left out of what parsed: an
      // expectation naming it is not wrong for that.
      std::erase_if(problems, [](const std::string& p) {
        return p.find("is not a consumer of the scenario") != std::string::npos ||
               p.find("unknown consumer") != std::string::npos ||
               p.find("no topic \"") != std::string::npos ||
               p.find("partitions (0..") != std::string::npos;
      });
    }
    return problems;
  });
}

/// Follows every order check of the run.
class ExpectationSinks::OrderSink final : public TraceSink {
 public:
  explicit OrderSink(std::vector<OrderState>& orders) : orders_(orders) {}
  void on_event(sim::SimTime t, const trace::Event& e) override {
    const std::string_view type = trace::type_of(e);
    std::optional<json> line;
    for (auto& o : orders_) {
      if (!o.wants(t.count(), type)) continue;
      if (!line) line = json(trace::to_json(t, e));
      o.on(t.count(), *line);
    }
  }

 private:
  std::vector<OrderState>& orders_;
};

ExpectationSinks::ExpectationSinks(const ScenarioSpec& spec, const std::string& protocol,
                                   const reports::SummaryInputs& inputs)
    : spec_(spec), protocol_(protocol) {
  for (const auto& x : spec.expect) {
    if (x.protocol && *x.protocol != protocol) continue;
    if (x.order) {
      orders_.emplace_back(x);
      continue;
    }
    if (!x.from_ms && !x.to_ms) continue;
    const std::pair<std::int64_t, std::int64_t> key{x.from_ms.value_or(0), x.to_ms.value_or(-1)};
    if (windows_.count(key) > 0) continue;
    reports::SummaryInputs in;
    in.scenario = inputs.scenario;
    in.protocol = protocol;
    in.seed = inputs.seed;
    if (x.from_ms) in.from_us = *x.from_ms * 1000;
    if (x.to_ms) in.to_us = *x.to_ms * 1000;
    windows_.emplace(key, std::make_unique<reports::SummarySink>(in));
  }
  if (!orders_.empty()) order_sink_ = std::make_unique<OrderSink>(orders_);
}

ExpectationSinks::~ExpectationSinks() = default;

std::vector<TraceSink*> ExpectationSinks::sinks() {
  std::vector<TraceSink*> out;
  for (auto& [key, s] : windows_) out.push_back(s.get());
  if (order_sink_) out.push_back(order_sink_.get());
  return out;
}

std::vector<ExpectResult> ExpectationSinks::results(const ojson& summary) {
  std::vector<ExpectResult> out;
  std::map<std::pair<std::int64_t, std::int64_t>, ojson> windows;
  for (auto& [key, s] : windows_) windows.emplace(key, s->finish());
  const std::int64_t run_end_us = spec_.duration.count();
  std::size_t order = 0;
  for (const auto& x : spec_.expect) {
    if (x.protocol && *x.protocol != protocol_) continue;
    ExpectResult r;
    if (x.order) {
      r = orders_.at(order++).result();
    } else {
      const ojson* s = &summary;
      if (x.from_ms || x.to_ms) s = &windows.at({x.from_ms.value_or(0), x.to_ms.value_or(-1)});
      ojson steady_view;
      if (x.steady) {
        // Only the steady window's metrics: null (a failure) when the run never became steady.
        const auto st = summary.find("steady");
        steady_view["metrics"] = st != summary.end() && st->is_object()
                                     ? st->value("metrics", ojson(nullptr))
                                     : ojson(nullptr);
        s = &steady_view;
      }
      r.metric = effective_path(x);
      r.op = x.op;
      r.expected = x.value;  // the literal as the JSON the file wrote
      r.actual = resolve_path(*s, r.metric);
      // A partition that was never unavailable has no entry: it was unavailable 0 ms.
      if (r.actual.is_null() && x.partition) {
        const auto segs = split_path(r.metric);
        if (contains(reports::metrics_by_partition(), segs[0]) && segs.size() == 2) r.actual = 0.0;
      }
      // A consumer whose partitions were always processed has no entry: 0 ms.
      if (r.actual.is_null() && x.consumer) {
        const auto segs = split_path(r.metric);
        if (segs.size() == 2 && segs[0] == "not_processed_ms_by_consumer" &&
            s->contains("metrics") && s->at("metrics").is_object())
          r.actual = 0.0;
      }
      if (!r.actual.is_null())
        r.passed = compare(x.op, r.actual, r.expected, x.tolerance, r.detail);
      else if (x.steady && steady_view.at("metrics").is_null())
        r.detail =
            "the run has no steady window: the consumers started first never all held a stable "
            "assignment";
      r.at_us = x.to_ms ? *x.to_ms * 1000 : run_end_us;
    }
    r.index = x.index;
    r.protocol = protocol_;
    r.what = what_of(x);
    r.message = x.message;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ExpectResult> check_expectations(const ScenarioSpec& spec, const std::string& protocol,
                                             const ojson& summary,
                                             const std::vector<std::string>& trace_lines) {
  reports::SummaryInputs in;
  in.scenario = summary.value("scenario", "");
  in.protocol = protocol;
  in.seed = summary.value("seed", std::uint64_t{0});
  ExpectationSinks sinks(spec, protocol, in);
  const auto all = sinks.sinks();
  if (!all.empty()) {
    trace::ReadStorage st;
    sim::SimTime t{0};
    for (const auto& line : trace_lines) {
      const trace::Event e = trace::parse_jsonl(line, st, t);
      for (auto* s : all) s->on_event(t, e);
    }
  }
  return sinks.results(summary);
}

}  // namespace rsim::cli
