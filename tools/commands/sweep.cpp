#include "tools/commands/sweep.hpp"

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "models/scenario/variants.hpp"
#include "models/scenario/world.hpp"
#include "reports/analyses/expectations.hpp"
#include "reports/escape.hpp"
#include "tools/cli_args.hpp"
#include "tools/commands/explore.hpp"
#include "tools/commands/report.hpp"
#include "tools/commands/sweep_html.hpp"
#include "tools/runner.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

constexpr const char* kShardKind = "rebalance-sim sweep shard";
constexpr std::size_t kMaxRuns = 10'000'000;

/// The headline metrics of summary.json, in the order the outputs show them; a sweep reports
/// those that every run's summary has.
const std::vector<std::string>& headline_candidates() {
  static const std::vector<std::string> names{"rebalance_count",      "max_rebalance_ms",
                                              "total_rebalance_ms",   "unavailable_partition_ms",
                                              "max_unavailable_ms",   "not_processed_partition_ms",
                                              "max_not_processed_ms", "stop_the_world_ms",
                                              "duplicates",           "lost",
                                              "fatal_errors"};
  return names;
}

std::string decimals_trimmed(double v, int decimals) {
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

int decimals_of(const std::string& s) {
  const auto dot = s.find('.');
  return dot == std::string::npos ? 0 : static_cast<int>(s.size() - dot - 1);
}

std::optional<double> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string value_text(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

/// Progress with an estimate of the time left, on a terminal only (stderr), at most once a second.
class SweepProgress {
 public:
  SweepProgress(bool on, std::size_t total)
      : on_(on), total_(total), start_(Clock::now()), last_(start_) {}
  void done_one() {
    const std::size_t done = ++done_;
    if (!on_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    const auto now = Clock::now();
    if (now - last_ < std::chrono::seconds(1) && done != total_) return;
    last_ = now;
    const double wall = std::chrono::duration<double>(now - start_).count();
    const double left =
        done == 0 ? 0 : wall / static_cast<double>(done) * static_cast<double>(total_ - done);
    std::fprintf(stderr, "\r\033[Ksweep: %zu/%zu runs, %.0f s elapsed, about %.0f s left", done,
                 total_, wall, left);
    std::fflush(stderr);
    printed_ = true;
  }
  ~SweepProgress() {
    if (printed_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool on_;
  std::size_t total_;
  std::atomic<std::size_t> done_{0};
  std::mutex mutex_;
  Clock::time_point start_, last_;
  bool printed_ = false;
};

/// The sweep's definition as every shard records it: two shards merge only if theirs are equal.
struct Sweep {
  ojson def;  // the "sweep" object of a shard result
  json doc;   // the scenario file
  std::vector<VaryAxis> axes;
  std::uint64_t from = 0, to = 0;  // seeds
  std::size_t cells = 1;
  std::vector<std::string> variant_picks, protocols;
  std::string metric;
  std::string file;

  std::size_t seeds() const { return static_cast<std::size_t>(to - from) + 1; }
  /// The value index of each axis at `cell` (the first axis varies slowest).
  std::vector<std::size_t> coords(std::size_t cell) const {
    std::vector<std::size_t> c(axes.size());
    for (std::size_t i = axes.size(); i-- > 0;) {
      c[i] = cell % axes[i].values.size();
      cell /= axes[i].values.size();
    }
    return c;
  }
  json cell_doc(std::size_t cell, std::vector<std::string>& problems) const {
    json d = doc;
    const auto c = coords(cell);
    for (std::size_t i = 0; i < axes.size(); ++i)
      d = apply_vary(d, axes[i], axes[i].values[c[i]], problems);
    return d;
  }
  std::string cell_label(std::size_t cell) const {
    const auto c = coords(cell);
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < axes.size(); ++i)
      parts.push_back(fmt::format("{}={}", axes[i].path, value_text(axes[i].values[c[i]])));
    return fmt::format("{}", fmt::join(parts, " "));
  }
};

/// The settings variants of every cell, validated (all problems of all cells in one pass).
std::vector<std::vector<SettingsVariant>> cell_variants(const Sweep& s, const std::string& sha) {
  std::vector<std::vector<SettingsVariant>> out(s.cells);
  std::vector<std::string> problems;
  for (std::size_t cell = 0; cell < s.cells; ++cell) {
    std::vector<std::string> vary_problems;
    const json d = s.cell_doc(cell, vary_problems);
    if (!vary_problems.empty()) {
      // A path that does not fit the scenario fits no cell: said once.
      for (auto& p : vary_problems)
        if (std::find(problems.begin(), problems.end(), p) == problems.end())
          problems.push_back(std::move(p));
      continue;
    }
    try {
      out[cell] = expand_settings_variants(d, s.file, s.variant_picks, sha);
      for (const auto& v : out[cell]) {
        std::vector<std::string> ps = expectation_problems(v.spec);
        const auto& protos = s.protocols.empty() ? v.spec.protocols : s.protocols;
        for (const auto& p : protos) {
          if (std::find(protocol_variants().begin(), protocol_variants().end(), p) ==
              protocol_variants().end()) {
            ps.push_back(fmt::format("--protocol: unknown variant \"{}\"", p));
            continue;
          }
          for (auto& x : unsupported_features(v.spec, p)) ps.push_back(std::move(x));
        }
        for (auto& p : ps) problems.push_back(fmt::format("cell {}: {}", s.cell_label(cell), p));
      }
    } catch (const ScenarioError& e) {
      for (const auto& p : e.problems())
        problems.push_back(fmt::format("cell {}: {}", s.cell_label(cell), p));
    }
    if (problems.size() > 50) break;
  }
  if (!problems.empty()) throw ScenarioError(s.file, problems);
  return out;
}

Sweep make_sweep(const SweepArgs& args) {
  Sweep s;
  s.file = args.scenario;
  s.metric = args.metric;
  s.variant_picks = args.variants;
  s.protocols = args.protocols;
  std::vector<std::string> problems;
  if (args.vary.empty()) problems.push_back("--vary: at least one PATH=VALUES is needed");
  for (const auto& v : args.vary) {
    try {
      s.axes.push_back(parse_vary(v));
    } catch (const ScenarioError& e) {
      for (const auto& p : e.problems()) problems.push_back(fmt::format("--vary {}: {}", v, p));
    }
  }
  for (std::size_t i = 0; i < s.axes.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (s.axes[i].path == s.axes[j].path)
        problems.push_back(fmt::format("--vary {}: given twice", s.axes[i].path));
  if (std::find(headline_candidates().begin(), headline_candidates().end(), args.metric) ==
      headline_candidates().end())
    problems.push_back(fmt::format(
        "--metric {}: not a headline metric{}; one of: {}", args.metric,
        [&] {
          const auto g = closest_match(args.metric, headline_candidates());
          return g.empty() ? std::string() : fmt::format(" (did you mean \"{}\"?)", g);
        }(),
        fmt::join(headline_candidates(), ", ")));
  try {
    const auto [a, b] = parse_seed_range(args.seeds);
    s.from = a;
    s.to = b;
  } catch (const ScenarioError& e) {
    for (const auto& p : e.problems()) problems.push_back("--seeds: " + p);
  }
  if (!problems.empty()) throw ScenarioError("sweep", problems);
  s.doc = load_scenario_json(args.scenario);
  for (const auto& a : s.axes) {
    if (s.cells > kMaxRuns / a.values.size())
      throw ScenarioError("--vary", {"the grid has more than 10,000,000 cells"});
    s.cells *= a.values.size();
  }
  if (s.cells * s.seeds() > kMaxRuns || s.cells * s.seeds() / s.seeds() != s.cells)
    throw ScenarioError("sweep", {fmt::format("{} cells x {} seeds: more than 10,000,000 runs",
                                              s.cells, s.seeds())});
  return s;
}

ojson sweep_def(const Sweep& s, const std::string& sha, const std::string& name) {
  ojson vary = ojson::array();
  for (const auto& a : s.axes) {
    ojson values = ojson::array();
    for (const auto& v : a.values) values.push_back(ojson::parse(v.dump()));
    vary.push_back(ojson{{"path", a.path}, {"values", values}});
  }
  return ojson{{"scenario", name},
               {"scenario_file", s.file},
               {"scenario_sha256", sha},
               {"vary", vary},
               {"seeds", ojson::array({s.from, s.to})},
               {"metric", s.metric},
               {"variants", s.variant_picks},
               {"protocols", s.protocols}};
}

/// Runs the units of one shard; the shard result.
ojson run_shard(const Sweep& s, const std::vector<std::vector<SettingsVariant>>& specs,
                const ojson& def, std::pair<std::uint32_t, std::uint32_t> shard, unsigned jobs,
                bool progress, const sim::WatchdogLimits& limits) {
  std::vector<std::size_t> units;
  const std::size_t total = s.cells * s.seeds();
  for (std::size_t u = 0; u < total; ++u)
    if (in_shard(u, shard)) units.push_back(u);
  std::vector<ojson> results(units.size());
  std::atomic<std::size_t> next{0};
  std::string fatal;
  std::mutex fatal_mutex;
  SweepProgress bar(progress, units.size());
  const auto work = [&] {
    for (std::size_t i = next++; i < units.size(); i = next++) {
      const std::size_t u = units[i];
      const std::size_t cell = u / s.seeds();
      const std::uint64_t seed = s.from + u % s.seeds();
      try {
        ojson runs = ojson::array();
        for (const auto& v : specs[cell]) {
          RunOptions o;
          o.level = TraceLevel::None;
          o.limits = limits;
          o.variant = v.name;
          for (const auto& out : run_variants(v.spec, s.protocols, seed, o)) {
            ojson m = ojson::object();
            const auto& metrics = out.summary.at("metrics");
            for (const auto& name : headline_candidates())
              if (const auto it = metrics.find(name); it != metrics.end() && it->is_number())
                m[name] = *it;
            runs.push_back(
                ojson{{"variant", v.name}, {"protocol", out.protocol}, {"metrics", std::move(m)}});
          }
        }
        results[i] = ojson{{"unit", u}, {"runs", std::move(runs)}};
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(fatal_mutex);
        if (fatal.empty())
          fatal = fmt::format("cell {} seed {}: {}", s.cell_label(cell), seed, e.what());
      }
      bar.done_one();
    }
  };
  const unsigned n = std::max(
      1u, std::min<unsigned>(jobs, static_cast<unsigned>(std::max<std::size_t>(1, units.size()))));
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < n; ++j) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (!fatal.empty()) throw std::runtime_error(fatal);
  ojson out{
      {"kind", kShardKind}, {"shard", ojson::array({shard.first, shard.second})}, {"sweep", def}};
  out["units"] = ojson(results);
  return out;
}

/// Nearest-rank percentile of sorted values (p in (0, 100]).
double rank(const std::vector<double>& sorted, double p) {
  const auto n = sorted.size();
  std::size_t k = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
  k = std::clamp<std::size_t>(k, 1, n);
  return sorted[k - 1];
}

ojson num(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9e15) return ojson(static_cast<std::int64_t>(v));
  return ojson(v);
}

}  // namespace

VaryAxis parse_vary(const std::string& text) {
  // The first '=' outside a `*[KEY=VALUE]` filter.
  std::size_t eq = std::string::npos;
  int depth = 0;
  for (std::size_t i = 0; i < text.size() && eq == std::string::npos; ++i) {
    if (text[i] == '[')
      ++depth;
    else if (text[i] == ']' && depth > 0)
      --depth;
    else if (text[i] == '=' && depth == 0)
      eq = i;
  }
  if (eq == std::string::npos || eq == 0)
    throw ScenarioError(
        "--vary", {"must be PATH=VALUES, e.g. /consumers/*/config/session.timeout.ms=10000,45000"});
  VaryAxis a;
  a.path = text.substr(0, eq);
  const std::string values = text.substr(eq + 1);
  if (a.path[0] != '/')
    throw ScenarioError("--vary",
                        {fmt::format("PATH must be a JSON pointer starting with '/', got \"{}\"",
                                     one_line(a.path))});
  std::size_t start = 1;
  while (true) {
    const auto slash = a.path.find('/', start);
    std::string tok =
        a.path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    std::string un;
    for (std::size_t i = 0; i < tok.size(); ++i) {
      if (tok[i] == '~' && i + 1 < tok.size() && (tok[i + 1] == '0' || tok[i + 1] == '1')) {
        un += tok[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        un += tok[i];
      }
    }
    a.tokens.push_back(un);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (values.empty()) throw ScenarioError("--vary", {"no VALUES after '='"});
  const auto dots = values.find("..");
  if (dots != std::string::npos && values.find(',') == std::string::npos) {
    // a..b:step
    const auto colon = values.find(':', dots);
    const std::string sa = values.substr(0, dots);
    const std::string sb =
        values.substr(dots + 2, colon == std::string::npos ? std::string::npos : colon - dots - 2);
    const std::string ss = colon == std::string::npos ? "1" : values.substr(colon + 1);
    const auto va = number(sa), vb = number(sb), vs = number(ss);
    if (!va || !vb || !vs || *vs <= 0 || *vb < *va)
      throw ScenarioError(
          "--vary", {fmt::format("\"{}\": a range is a..b:step with numbers a <= b and step > 0",
                                 one_line(values))});
    const int d = std::max({decimals_of(sa), decimals_of(sb), decimals_of(ss)});
    const double steps = std::floor((*vb - *va) / *vs + 1e-9);
    if (steps >= 100000)
      throw ScenarioError("--vary", {fmt::format("\"{}\": more than 100,000 values", values)});
    for (std::int64_t i = 0; i <= static_cast<std::int64_t>(steps); ++i) {
      const std::string t = decimals_trimmed(*va + static_cast<double>(i) * *vs, d);
      a.values.push_back(json::parse(t));
    }
    return a;
  }
  std::size_t s = 0;
  while (true) {
    const auto comma = values.find(',', s);
    const std::string item =
        values.substr(s, comma == std::string::npos ? std::string::npos : comma - s);
    if (item.empty())
      throw ScenarioError("--vary", {fmt::format("\"{}\": an empty value", one_line(values))});
    json v = json::parse(item, nullptr, false);
    if (v.is_discarded()) v = item;  // not a JSON literal: a string
    if (std::find(a.values.begin(), a.values.end(), v) != a.values.end())
      throw ScenarioError(
          "--vary", {fmt::format("\"{}\": {} given twice", one_line(values), one_line(item))});
    a.values.push_back(std::move(v));
    if (comma == std::string::npos) break;
    s = comma + 1;
  }
  return a;
}

json apply_vary(const json& doc, const VaryAxis& axis, const json& value,
                std::vector<std::string>& problems) {
  json out = doc;
  std::vector<std::string> local;
  const std::function<void(json&, std::size_t, const std::string&)> go =
      [&](json& node, std::size_t i, const std::string& at) {
        const std::string& tok = axis.tokens[i];
        const bool last = i + 1 == axis.tokens.size();
        if (tok == "*" || (tok.size() > 4 && tok.rfind("*[", 0) == 0 && tok.back() == ']')) {
          // `*[KEY=VALUE]`: only the elements (objects) whose KEY reads VALUE, e.g. *[do=restart].
          std::string key, want;
          if (tok != "*") {
            const std::string inner = tok.substr(2, tok.size() - 3);
            const auto eq = inner.find('=');
            key = inner.substr(0, eq);
            want = eq == std::string::npos ? std::string() : inner.substr(eq + 1);
          }
          const auto selected = [&](const json& e) {
            if (key.empty()) return true;
            if (!e.is_object() || !e.contains(key)) return false;
            return value_text(e.at(key)) == want;
          };
          if (!node.is_array()) {
            local.push_back(fmt::format("--vary {}: * needs an array at {}, got {}", axis.path,
                                        at.empty() ? "/" : at,
                                        node.is_null() ? "nothing" : node.type_name()));
            return;
          }
          std::size_t matched = 0;
          for (const auto& e : node)
            if (selected(e)) ++matched;
          if (matched == 0)
            local.push_back(fmt::format("--vary {}: no element of the array at {} matches {}",
                                        axis.path, at, tok));
          for (std::size_t k = 0; k < node.size(); ++k) {
            if (!selected(node[k])) continue;
            if (last)
              node[k] = value;
            else
              go(node[k], i + 1, fmt::format("{}/{}", at, k));
          }
          return;
        }
        if (node.is_array()) {
          std::size_t k = 0;
          const auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), k);
          if (ec != std::errc() || end != tok.data() + tok.size() || k >= node.size()) {
            local.push_back(fmt::format("--vary {}: {} has {} elements, no \"{}\"", axis.path, at,
                                        node.size(), one_line(tok)));
            return;
          }
          if (last)
            node[k] = value;
          else
            go(node[k], i + 1, fmt::format("{}/{}", at, k));
          return;
        }
        if (!node.is_object()) {
          local.push_back(fmt::format("--vary {}: {} is a {}, not an object or array", axis.path,
                                      at.empty() ? "/" : at, node.type_name()));
          return;
        }
        if (last) {
          node[tok] = value;
          return;
        }
        if (!node.contains(tok))
          node[tok] = json::object();  // e.g. a consumer without `config` yet
        go(node[tok], i + 1, at + "/" + tok);
      };
  go(out, 0, "");
  for (auto& p : local) problems.push_back(std::move(p));
  return out;
}

std::pair<std::uint32_t, std::uint32_t> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  std::uint32_t i = 0, n = 0;
  bool ok = slash != std::string::npos;
  if (ok) {
    const auto [e1, c1] = std::from_chars(text.data(), text.data() + slash, i);
    const auto [e2, c2] = std::from_chars(text.data() + slash + 1, text.data() + text.size(), n);
    ok = c1 == std::errc() && e1 == text.data() + slash && c2 == std::errc() &&
         e2 == text.data() + text.size() && n >= 1 && i >= 1 && i <= n && n <= 100000;
  }
  if (!ok)
    throw ScenarioError(
        "--shard",
        {fmt::format("must be I/N with 1 <= I <= N <= 100000, got \"{}\"", one_line(text))});
  return {i, n};
}

std::uint32_t check_shard_set(const std::vector<json>& shards, const char* command,
                              const char* differs) {
  if (shards.empty()) throw ScenarioError("merge", {"no shard results"});
  const json& def = shards.front().at(command);
  const std::uint32_t n = shards.front().at("shard").at(1).get<std::uint32_t>();
  std::vector<std::string> problems;
  std::set<std::uint32_t> seen;
  for (const auto& sh : shards) {
    const std::uint32_t i = sh.at("shard").at(0).get<std::uint32_t>();
    const std::uint32_t of = sh.at("shard").at(1).get<std::uint32_t>();
    if (sh.at(command) != def)
      problems.push_back(fmt::format("shard {}/{} is of another {} ({})", i, of, command, differs));
    else if (of != n)
      problems.push_back(fmt::format("shard {}/{}: the others are of {} shards", i, of, n));
    else if (!seen.insert(i).second)
      problems.push_back(fmt::format("shard {}/{} given twice", i, n));
  }
  std::vector<std::string> missing;
  for (std::uint32_t i = 1; i <= n; ++i)
    if (seen.count(i) == 0) missing.push_back(fmt::format("{}/{}", i, n));
  if (!missing.empty() && problems.empty())
    problems.push_back(fmt::format("missing shard result{}: {}", missing.size() == 1 ? "" : "s",
                                   fmt::join(missing, ", ")));
  if (!problems.empty()) throw ScenarioError("merge", problems);
  return n;
}

/// Runs one worst seed of a cell (every settings variant and protocol) into
/// worst/c<CELL>/seed-<SEED>/ of `staged`, with its report. Safe to call from several threads.
void render_worst_seed(StagedOutput& staged, const Sweep& s,
                       const std::vector<SettingsVariant>& specs, std::size_t cell,
                       std::uint64_t seed) {
  const std::string dir = fmt::format("worst/c{}/seed-{}", cell + 1, seed);
  std::vector<VariantText> texts;
  for (const auto& v : specs) {
    RunOptions o;
    o.staged = &staged;
    o.variant = v.name;
    o.prefix = dir;
    std::vector<VariantOutput> outputs;
    try {
      outputs = run_variants(v.spec, s.protocols, seed, o);
    } catch (const OutputError& e) {
      throw staged.retold(e);  // a trace streamed into the staging folder
    }
    for (const auto& r : outputs) {
      const std::string rel = v.name.empty() ? r.protocol : v.name + "/" + r.protocol;
      texts.push_back(VariantText{
          rel, {}, r.summary.dump(2) + "\n", staged_trace_path(staged, dir + "/" + rel).string()});
    }
  }
  for (const auto& [rel, bytes] : render_outputs(std::move(texts), FormatArgs{}))
    staged.write_file(fs::path(dir) / rel, bytes);
}

/// The top-level entries a sweep writes.
const std::vector<std::string> kSweepOutputs{"runs.csv",   "runs.json",  "cells.csv",
                                             "cells.json", "phase.html", "worst"};

namespace {

/// The headline metrics every run has (the --metric among them, else exit 2).
std::vector<std::string> common_metrics(const std::vector<const json*>& units,
                                        const std::string& metric) {
  std::vector<std::string> metrics;
  for (const auto& name : headline_candidates()) {
    bool all = true;
    for (const auto* u : units)
      for (const auto& r : u->at("runs"))
        if (!r.at("metrics").contains(name)) all = false;
    if (all) metrics.push_back(name);
  }
  if (std::find(metrics.begin(), metrics.end(), metric) == metrics.end())
    throw ScenarioError("--metric", {fmt::format("{}: not in every run's summary; these are: {}",
                                                 metric, fmt::join(metrics, ", "))});
  return metrics;
}

/// One series of a cell: a settings variant and protocol, over the seeds.
struct Series {
  std::string variant, protocol;
  std::vector<std::pair<double, std::uint64_t>> metric_seed;  // (value of --metric, seed)
  std::vector<std::vector<double>> values;                    // per metric
};

/// runs.csv and runs.json (one row per run, in unit order), and each cell's series.
void collect_runs(const Sweep& s, const std::vector<const json*>& units,
                  const std::vector<std::string>& metrics, std::string& csv, ojson& runs_json,
                  std::vector<std::vector<Series>>& cells) {
  const std::size_t total = units.size();
  csv = "cell";
  for (const auto& a : s.axes) csv += "," + csv_field(a.path);
  csv += ",seed,variant,protocol";
  for (const auto& m : metrics) csv += "," + m;
  csv += "\n";
  runs_json = ojson::array();
  cells.assign(s.cells, {});
  for (std::size_t k = 0; k < total; ++k) {
    const std::size_t cell = k / s.seeds();
    const std::uint64_t seed = s.from + k % s.seeds();
    const auto c = s.coords(cell);
    for (const auto& r : units[k]->at("runs")) {
      const std::string variant = r.at("variant").get<std::string>(),
                        protocol = r.at("protocol").get<std::string>();
      csv += fmt::format("c{}", cell + 1);
      ojson values = ojson::object();
      for (std::size_t i = 0; i < s.axes.size(); ++i) {
        csv += "," + csv_field(value_text(s.axes[i].values[c[i]]));
        values[s.axes[i].path] = ojson::parse(s.axes[i].values[c[i]].dump());
      }
      csv += fmt::format(",{},{},{}", seed, csv_field(variant), protocol);
      ojson m = ojson::object();
      auto& series = cells[cell];
      auto it = std::find_if(series.begin(), series.end(), [&](const Series& x) {
        return x.variant == variant && x.protocol == protocol;
      });
      if (it == series.end()) {
        series.push_back(
            Series{variant, protocol, {}, std::vector<std::vector<double>>(metrics.size())});
        it = series.end() - 1;
      }
      for (std::size_t i = 0; i < metrics.size(); ++i) {
        const json& v = r.at("metrics").at(metrics[i]);
        csv += "," + v.dump();
        m[metrics[i]] = ojson::parse(v.dump());
        it->values[i].push_back(v.get<double>());
        if (metrics[i] == s.metric) it->metric_seed.emplace_back(v.get<double>(), seed);
      }
      csv += "\n";
      runs_json.push_back(ojson{{"cell", fmt::format("c{}", cell + 1)},
                                {"values", values},
                                {"seed", seed},
                                {"variant", variant},
                                {"protocol", protocol},
                                {"metrics", m}});
    }
  }
}

/// The worst seeds' runs, each with its report (all settings variants and protocols of the cell),
/// on the job slots too: each report is one unit of work, written to its own folder. Returns how
/// many were written.
std::size_t render_worst_reports(StagedOutput& staged, const Sweep& s,
                                 const std::vector<std::vector<SettingsVariant>>& specs,
                                 const std::vector<std::set<std::uint64_t>>& worst_seeds,
                                 unsigned jobs) {
  std::vector<std::pair<std::size_t, std::uint64_t>> worst_units;
  for (std::size_t cell = 0; cell < s.cells; ++cell)
    for (const std::uint64_t seed : worst_seeds[cell]) worst_units.emplace_back(cell, seed);
  std::vector<std::exception_ptr> failed(worst_units.size());
  std::atomic<std::size_t> next_report{0};
  const auto render_worst = [&] {
    for (std::size_t i = next_report++; i < worst_units.size(); i = next_report++) {
      try {
        render_worst_seed(staged, s, specs[worst_units[i].first], worst_units[i].first,
                          worst_units[i].second);
      } catch (...) {
        failed[i] = std::current_exception();
      }
    }
  };
  const unsigned slots =
      std::max(1u, std::min<unsigned>(
                       jobs, static_cast<unsigned>(std::max<std::size_t>(1, worst_units.size()))));
  std::vector<std::thread> workers;
  for (unsigned j = 1; j < slots; ++j) workers.emplace_back(render_worst);
  render_worst();
  for (auto& t : workers) t.join();
  // The first failure in the order of the reports, whatever the order they finished in.
  for (const auto& e : failed)
    if (e) std::rethrow_exception(e);
  return worst_units.size();
}

/// cells.csv / cells.json, and the worst seed of each cell and series.
struct CellTables {
  std::string csv;
  ojson json = ojson::array();
  std::vector<std::set<std::uint64_t>> worst_seeds;
  std::vector<PhaseCell> phase;
};

CellTables cell_tables(const Sweep& s, const std::vector<std::string>& metrics,
                       const std::vector<std::vector<Series>>& cells) {
  CellTables out;
  out.csv = "cell";
  for (const auto& a : s.axes) out.csv += "," + csv_field(a.path);
  out.csv += ",variant,protocol,runs";
  for (const auto& m : metrics) out.csv += fmt::format(",{0}_median,{0}_p95,{0}_max", m);
  out.csv += ",worst_seed,report\n";
  out.worst_seeds.resize(s.cells);
  for (std::size_t cell = 0; cell < s.cells; ++cell) {
    const auto c = s.coords(cell);
    for (const auto& se : cells[cell]) {
      // The worst seed: the largest --metric, the smallest seed among equals.
      std::uint64_t worst = se.metric_seed.front().second;
      double worst_v = se.metric_seed.front().first;
      for (const auto& [v, seed] : se.metric_seed)
        if (v > worst_v || (v == worst_v && seed < worst)) {
          worst_v = v;
          worst = seed;
        }
      out.worst_seeds[cell].insert(worst);
      const std::string report = fmt::format("worst/c{}/seed-{}/report.html", cell + 1, worst);
      out.csv += fmt::format("c{}", cell + 1);
      ojson values = ojson::object();
      PhaseCell pc;
      pc.cell = fmt::format("c{}", cell + 1);
      for (std::size_t i = 0; i < s.axes.size(); ++i) {
        out.csv += "," + csv_field(value_text(s.axes[i].values[c[i]]));
        values[s.axes[i].path] = ojson::parse(s.axes[i].values[c[i]].dump());
        pc.coords.push_back(c[i]);
      }
      out.csv +=
          fmt::format(",{},{},{}", csv_field(se.variant), se.protocol, se.values.front().size());
      ojson stats = ojson::object();
      for (std::size_t i = 0; i < metrics.size(); ++i) {
        std::vector<double> sorted = se.values[i];
        std::sort(sorted.begin(), sorted.end());
        const double med = rank(sorted, 50), p95 = rank(sorted, 95), mx = sorted.back();
        out.csv += fmt::format(",{},{},{}", num(med).dump(), num(p95).dump(), num(mx).dump());
        stats[metrics[i]] = ojson{{"median", num(med)}, {"p95", num(p95)}, {"max", num(mx)}};
        pc.stats.push_back({med, p95, mx});
      }
      out.csv += fmt::format(",{},{}\n", worst, report);
      out.json.push_back(ojson{{"cell", pc.cell},
                               {"values", values},
                               {"variant", se.variant},
                               {"protocol", se.protocol},
                               {"runs", se.values.front().size()},
                               {"metrics", stats},
                               {"worst_seed", worst},
                               {"report", report}});
      pc.series = se.variant.empty() ? se.protocol : se.variant + "/" + se.protocol;
      pc.worst_seed = worst;
      pc.report = report;
      out.phase.push_back(std::move(pc));
    }
  }

  return out;
}

}  // namespace

void finish_sweep(const std::vector<json>& shards, const std::string& out, bool quiet, bool force,
                  StagedOutput* prepared, unsigned jobs) {
  check_shard_set(shards, "sweep",
                  "its scenario, --vary, --seeds, --metric, --variant or --protocol differ");
  const json& def = shards.front().at("sweep");

  // The sweep again, from its definition and the scenario file (which must be unchanged).
  SweepArgs args;
  args.scenario = def.at("scenario_file").get<std::string>();
  // Each axis's path (its values are taken as recorded, below).
  for (const auto& a : def.at("vary")) args.vary.push_back(a.at("path").get<std::string>() + "=0");
  args.seeds = fmt::format("{}..{}", def.at("seeds").at(0).get<std::uint64_t>(),
                           def.at("seeds").at(1).get<std::uint64_t>());
  args.metric = def.at("metric").get<std::string>();
  args.variants = def.at("variants").get<std::vector<std::string>>();
  args.protocols = def.at("protocols").get<std::vector<std::string>>();
  Sweep s = make_sweep(args);
  s.cells = 1;
  for (std::size_t i = 0; i < s.axes.size(); ++i) {
    s.axes[i].values = def.at("vary").at(i).at("values").get<std::vector<json>>();
    if (s.axes[i].values.empty())
      throw ScenarioError("merge", {"a shard result with an empty --vary"});
    s.cells *= s.axes[i].values.size();
  }
  const std::string sha = def.at("scenario_sha256").get<std::string>();
  {
    std::ifstream in(args.scenario, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (sha256_hex(bytes) != sha)
      throw ScenarioError(
          args.scenario,
          {fmt::format("changed since the shards ran (sha256 {} then, {} now): the worst "
                       "seeds' reports need the same file",
                       sha, sha256_hex(bytes))});
  }
  const auto specs = cell_variants(s, sha);

  // Every unit once.
  const std::size_t total = s.cells * s.seeds();
  std::vector<const json*> units(total, nullptr);
  for (const auto& sh : shards)
    for (const auto& u : sh.at("units")) {
      const std::size_t k = u.at("unit").get<std::size_t>();
      if (k >= total || units[k] != nullptr)
        throw ScenarioError("merge", {fmt::format("unit {} out of range or twice", k)});
      units[k] = &u;
    }
  for (std::size_t k = 0; k < total; ++k)
    if (units[k] == nullptr)
      throw ScenarioError("merge", {fmt::format("unit {} missing from the shard results", k)});

  const std::vector<std::string> metrics = common_metrics(units, s.metric);
  std::string csv;
  ojson runs_json;
  std::vector<std::vector<Series>> cells;
  collect_runs(s, units, metrics, csv, runs_json, cells);

  CellTables tables = cell_tables(s, metrics, cells);
  auto& worst_seeds = tables.worst_seeds;

  const std::string name = def.at("scenario").get<std::string>();
  std::optional<StagedOutput> own;
  if (prepared == nullptr) own.emplace(fs::path(out), OutputOwner{name, args.scenario, force});
  StagedOutput& staged = prepared != nullptr ? *prepared : *own;
  staged.claim(kSweepOutputs);
  ojson header{{"scenario", name},
               {"scenario_file", args.scenario},
               {"scenario_sha256", sha},
               {"vary", ojson::parse(def.at("vary").dump())},
               {"seeds", ojson::parse(def.at("seeds").dump())},
               {"metric", s.metric},
               {"metrics", metrics},
               {"percentiles", "nearest rank"}};
  ojson runs_doc = header;
  runs_doc["runs"] = std::move(runs_json);
  ojson cells_doc = header;
  cells_doc["cells"] = std::move(tables.json);
  staged.write_file("runs.csv", csv);
  staged.write_file("runs.json", runs_doc.dump(2) + "\n");
  staged.write_file("cells.csv", tables.csv);
  staged.write_file("cells.json", cells_doc.dump(2) + "\n");
  PhaseInputs pi;
  pi.scenario = name;
  pi.metric = s.metric;
  pi.metrics = metrics;
  pi.seeds = fmt::format("{}..{}", s.from, s.to);
  for (const auto& a : s.axes) {
    std::vector<std::string> vals;
    for (const auto& v : a.values) vals.push_back(value_text(v));
    pi.axes.emplace_back(a.path, vals);
  }
  pi.cells = std::move(tables.phase);
  staged.write_file("phase.html", render_phase_html(pi));

  const std::size_t reports = render_worst_reports(staged, s, specs, worst_seeds, jobs);
  staged.set_variants(
      {});  // no run of its own at the top: `report DIR` is for worst/c<N>/seed-<S>/
  staged.commit();
  if (!quiet) {
    std::size_t runs = 0;
    for (const auto* u : units) runs += u->at("runs").size();
    std::cout << fmt::format(
        "sweep {}: {} cells x {} seeds = {} runs ({} per seed); {} worst-seed reports\n", name,
        s.cells, s.seeds(), runs, total == 0 ? 0 : runs / total, reports);
    std::cout << fmt::format(
        "  wrote {0}/runs.csv, runs.json, cells.csv, cells.json, phase.html, worst/\n", out);
    std::cout << fmt::format("phase diagram: {}\n", (fs::path(out) / "phase.html").string());
  }
}

CLI::App* add_sweep_subcommand(CLI::App& app, SweepArgs& args) {
  auto* c = app.add_subcommand(
      "sweep",
      "run a grid of settings (--vary) over seeds: per cell the median, p95 and max "
      "of each headline metric, every run's metrics (CSV, JSON), a phase diagram");
  c->add_option("scenario", args.scenario, "scenario file (JSON)")->required();
  c->add_option("--vary", args.vary,
                "PATH=VALUES (repeatable): PATH a JSON pointer into the scenario, * for every "
                "array element; "
                "VALUES v1,v2,... or a..b:step")
      ->required();
  c->add_option("--seeds", args.seeds, "seeds A..B (inclusive), or one seed")->required();
  c->add_option("--out", args.out_dir,
                "output folder (default: out/sweep/<scenario name>); with --shard, where "
                "shard-I-of-N.json goes");
  c->add_option("--jobs", args.jobs, "runs in parallel (the output does not depend on it)")
      ->check(non_negative_integer(256));
  c->add_option("--shard", args.shard,
                "I/N: run only the I-th of N deterministic shares of the runs and write "
                "DIR/shard-I-of-N.json (combine with `merge`)");
  c->add_option("--metric", args.metric,
                "the headline metric that colours the phase diagram and picks each cell's "
                "worst seed (default unavailable_partition_ms)");
  c->add_option("--variant", args.variants,
                "settings variant to run (repeatable; default: all of `variants`)");
  c->add_option("--protocol", args.protocols,
                "protocol variant to run (repeatable; default: the scenario's)");
  c->add_flag("--quiet", args.quiet, "print nothing but errors");
  c->add_flag("--force", args.force,
              "write into a non-empty folder that is not an output folder of rebalance-sim "
              "(no .rebalance-sim-manifest.json): what it holds is kept, except entries named "
              "as the outputs");
  add_watchdog_options(c, args.limits);
  c->footer(
      "Example: rebalance-sim sweep scenarios/sweeps/poll-interval-storm.json "
      "--vary /consumers/*/processing/per_record_ms=10..40:10 --seeds 1..20 --jobs 2");
  return c;
}

int cmd_sweep(const SweepArgs& args) {
  const Sweep s = make_sweep(args);
  const ScenarioSpec base = load_scenario_file(args.scenario);
  const auto specs = cell_variants(s, base.sha256);
  const auto shard =
      args.shard.empty() ? std::pair<std::uint32_t, std::uint32_t>{1, 1} : parse_shard(args.shard);
  const ojson def = sweep_def(s, base.sha256, base.name);
  const bool progress = !args.quiet && isatty(STDERR_FILENO) != 0;
  const std::string out =
      args.out_dir.empty()
          ? (fs::path("out/sweep") / default_output_dir(base.name).filename()).string()
          : args.out_dir;
  // The output folder is claimed before any run: a folder that is not rebalance-sim's is refused
  // (exit 2) at no cost, and another writer of it is excluded for the whole sweep.
  std::optional<StagedOutput> staged;
  if (args.shard.empty()) {
    staged.emplace(fs::path(out), OutputOwner{base.name, args.scenario, args.force});
    staged->claim(kSweepOutputs);
  }
  const ojson result = run_shard(s, specs, def, shard, args.jobs, progress, args.limits);
  // Through the same text as a shard file: the unsharded sweep and a merge read the same numbers.
  const std::string text = result.dump(1) + "\n";
  if (!args.shard.empty()) {
    const fs::path dir =
        args.out_dir.empty()
            ? fs::path("out/sweep") / default_output_dir(base.name).filename() / "shards"
            : fs::path(args.out_dir);
    const std::string file = fmt::format("shard-{}-of-{}.json", shard.first, shard.second);
    write_file_atomically_in(dir, file, text);
    if (!args.quiet)
      std::cout << fmt::format("sweep {}: shard {}/{}: {} of {} runs units; wrote {}\n", base.name,
                               shard.first, shard.second, result.at("units").size(),
                               s.cells * s.seeds(), (dir / file).string());
    return 0;
  }
  finish_sweep({json::parse(text)}, out, args.quiet, args.force, &*staged, args.jobs);
  return 0;
}

}  // namespace rsim::cli
