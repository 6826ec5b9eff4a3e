#include "reports/analyses/baseline.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "reports/summary.hpp"

namespace rsim::cli {

namespace {

using ojson = nlohmann::ordered_json;

/// Metrics that are maps (per partition, per consumer, ...), not one number.
bool single_number_metric(const std::string& m) {
  return m.find("_by_") == std::string::npos && m != "final_assignment" &&
         m != "share_window_by_partition";
}

double round_us(double v) {
  return std::round(v * 1000.0) / 1000.0;
}

std::string md_cell(const std::string& s) {
  std::string out;
  for (const char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string signed_number(double v) {
  std::string s = show_number(v);
  if (v > 0 && s != "0") s.insert(s.begin(), '+');
  return s;
}

std::optional<double> number_at(const ojson* metrics, const std::string& m) {
  if (metrics == nullptr || !metrics->contains(m) || !metrics->at(m).is_number())
    return std::nullopt;
  return round_us(metrics->at(m).get<double>());
}

}  // namespace

std::string show_number(double v) {
  const double r = round_us(v);
  if (r == 0) return "0";  // no "-0"
  if (std::fabs(r) < 1e15 && r == std::floor(r))
    return fmt::format("{}", static_cast<long long>(r));
  std::string s = fmt::format("{:.3f}", r);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

ojson baseline_metrics(const ojson& summary) {
  ojson out = ojson::object();
  if (!summary.contains("metrics")) return out;
  for (const auto& [k, v] : summary.at("metrics").items())
    if (v.is_number() && single_number_metric(k)) {
      if (v.is_number_integer())
        out[k] = v;
      else
        out[k] = round_us(v.get<double>());
    }
  return out;
}

std::map<std::pair<std::string, std::string>, ojson> read_baseline(const std::string& file) {
  std::ifstream in(file);
  if (!in)
    throw ScenarioError(
        file,
        {"cannot be read (--baseline wants the file `check --json` wrote on the base branch)"});
  ojson doc;
  try {
    doc = ojson::parse(in);
  } catch (const std::exception& e) {
    throw ScenarioError(file, {fmt::format("not valid JSON: {}", one_line(e.what()))});
  }
  if (!doc.is_object() || !doc.contains("runs") || !doc.at("runs").is_array())
    throw ScenarioError(
        file,
        {"/runs: missing; --baseline wants the file `rebalance-sim check --json FILE` wrote on the "
         "base branch (by this version or later)"});
  std::map<std::pair<std::string, std::string>, ojson> out;
  std::vector<std::string> problems;
  const auto& runs = doc.at("runs");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    if (!r.is_object() || !r.contains("scenario") || !r.at("scenario").is_string() ||
        !r.contains("variant") || !r.at("variant").is_string() || !r.contains("metrics") ||
        !r.at("metrics").is_object()) {
      problems.push_back(fmt::format(
          "/runs/{}: needs \"scenario\", \"variant\" (strings) and \"metrics\" (an object)", i));
      continue;
    }
    out[{r.at("scenario").get<std::string>(), r.at("variant").get<std::string>()}] =
        r.at("metrics");
  }
  if (!problems.empty()) throw ScenarioError(file, problems);
  return out;
}

std::string tolerance_metric_problem(const std::string& metric) {
  const auto& names = reports::metric_names();
  if (std::find(names.begin(), names.end(), metric) == names.end()) {
    const std::string guess = closest_match(metric, names);
    return fmt::format("unknown metric \"{}\"{}", one_line(metric),
                       guess.empty() ? "" : fmt::format("; did you mean \"{}\"?", guess));
  }
  if (!single_number_metric(metric))
    return fmt::format(
        "\"{}\" is not one number (a tolerance needs a single-number metric, e.g. "
        "max_unavailable_ms)",
        metric);
  return "";
}

Tolerances parse_max_regressions(const std::vector<std::string>& args,
                                 std::vector<std::string>& problems) {
  Tolerances out;
  for (const auto& a : args) {
    const auto eq = a.find('=');
    if (eq == std::string::npos) {
      problems.push_back(fmt::format(
          "--max-regression {}: expected METRIC=+N% or METRIC=+N (e.g. max_rebalance_ms=+10%)",
          one_line(a)));
      continue;
    }
    const std::string metric = a.substr(0, eq), text = a.substr(eq + 1);
    const auto tol = parse_regression_tolerance(text);
    if (!tol) {
      problems.push_back(fmt::format(
          "--max-regression {}: \"{}\" is not a tolerance with a direction: \"+N%\", \"+N\", "
          "\"-N%\" or \"-N\" (+: a rise is a regression)",
          one_line(a), one_line(text)));
      continue;
    }
    if (const auto why = tolerance_metric_problem(metric); !why.empty()) {
      problems.push_back(fmt::format("--max-regression {}: {}", one_line(a), why));
      continue;
    }
    std::erase_if(out, [&](const auto& t) { return t.first == metric; });
    out.emplace_back(metric, *tol);
  }
  return out;
}

Tolerances read_tolerance_file(const std::string& file, std::vector<std::string>& problems) {
  Tolerances out;
  if (file.empty()) return out;
  std::ifstream in(file);
  if (!in) {
    problems.push_back(fmt::format("{}: cannot be read", file));
    return out;
  }
  ojson doc;
  try {
    doc = ojson::parse(in);
  } catch (const std::exception& e) {
    problems.push_back(fmt::format("{}: not valid JSON: {}", file, one_line(e.what())));
    return out;
  }
  if (!doc.is_object()) {
    problems.push_back(fmt::format(
        "{}: must be an object of metric -> tolerance, e.g. {{\"max_rebalance_ms\": \"+10%\"}}",
        file));
    return out;
  }
  for (const auto& [metric, v] : doc.items()) {
    const auto tol =
        v.is_string() ? parse_regression_tolerance(v.get<std::string>()) : std::nullopt;
    if (!tol) {
      problems.push_back(fmt::format(
          "{}: /{}: must be \"+N%\", \"+N\", \"-N%\" or \"-N\" (+: a rise is a regression), got {}",
          file, metric, one_line(v.dump())));
      continue;
    }
    if (const auto why = tolerance_metric_problem(metric); !why.empty()) {
      problems.push_back(fmt::format("{}: /{}: {}", file, metric, why));
      continue;
    }
    out.emplace_back(metric, *tol);
  }
  return out;
}

Tolerances merged_tolerances(const ScenarioSpec& spec, const Tolerances& file,
                             const Tolerances& cli) {
  Tolerances out;
  auto put = [&](const std::string& metric, const RegressionTolerance& t) {
    for (auto& [m, old] : out)
      if (m == metric) {
        old = t;
        return;
      }
    out.emplace_back(metric, t);
  };
  for (const auto& [m, text] : spec.regression)
    if (const auto t = parse_regression_tolerance(text)) put(m, *t);
  for (const auto& [m, t] : file) put(m, t);
  for (const auto& [m, t] : cli) put(m, t);
  return out;
}

std::string RegressionRow::delta_percent() const {
  if (!base || !now) return "";
  const double d = round_us(*now - *base);
  if (d == 0) return "0%";
  if (*base == 0) return "n/a";
  return fmt::format("{:+.1f}%", d / std::fabs(*base) * 100.0);
}

std::string RegressionRow::describe() const {
  std::string s = metric + " " + (now ? show_number(*now) : std::string("(missing)"));
  if (!base)
    s += " (no base)";
  else if (now)
    s += fmt::format(" (base {}: {}, {}", show_number(*base), signed_number(delta()),
                     delta_percent());
  if (tolerance && base && now)
    s += fmt::format("; tolerance {})", tolerance->text);
  else if (base && now)
    s += ")";
  return s;
}

std::vector<RegressionRow> compare_with_baseline(const std::string& scenario,
                                                 const std::string& variant, const ojson* base,
                                                 const ojson& now, const Tolerances& tolerances) {
  std::vector<RegressionRow> rows;
  for (const auto& [metric, tol] : tolerances) {
    RegressionRow r{scenario, variant, metric, number_at(base, metric), number_at(&now, metric),
                    tol};
    if (!r.now) {
      r.verdict = "missing";
      r.failed = r.base.has_value();  // the metric went away
    } else if (!r.base) {
      r.verdict = "no base";
    } else {
      const double d = round_us(*r.now - *r.base);
      const double worse = tol.rise_is_worse ? d : -d;
      const double limit =
          tol.percent ? round_us(std::fabs(*r.base) * tol.amount / 100.0) : tol.amount;
      r.failed = worse > limit + 1e-9;  // improvements (worse < 0) never fail
      r.verdict = r.failed ? "REGRESSED" : d == 0 ? "unchanged" : worse < 0 ? "improved" : "ok";
    }
    rows.push_back(std::move(r));
  }
  // The other metrics that moved: shown, never gated.
  for (const auto& item : now.items()) {
    // A named copy, not a structured binding: Clang 14 cannot capture a binding in a lambda.
    const std::string metric = item.key();
    if (std::any_of(tolerances.begin(), tolerances.end(),
                    [&](const auto& t) { return t.first == metric; }))
      continue;
    RegressionRow r{scenario,    variant, metric, number_at(base, metric), number_at(&now, metric),
                    std::nullopt};
    if (!r.base || !r.now || round_us(*r.now - *r.base) == 0) continue;
    r.verdict = "changed";
    rows.push_back(std::move(r));
  }
  return rows;
}

namespace {

std::string md_row(const RegressionRow& r) {
  const char* mark = r.failed                  ? ":x:"
                     : !r.tolerance            ? ":information_source:"
                     : r.verdict == "improved" ? ":chart_with_downwards_trend:"
                                               : ":white_check_mark:";
  return fmt::format(
      "| {} | {} | {} | `{}` | {} | {} | {} | {} | {} |\n", mark, md_cell(r.scenario),
      md_cell(r.variant), md_cell(r.metric), r.base ? show_number(*r.base) : "—",
      r.now ? show_number(*r.now) : "—", r.base && r.now ? signed_number(r.delta()) : "—",
      r.base && r.now ? r.delta_percent() : "—", r.tolerance ? md_cell(r.tolerance->text) : "");
}

constexpr const char* kMdHead =
    "| | scenario | variant | metric | base | now | Δ | Δ % | tolerance "
    "|\n|---|---|---|---|---:|---:|---:|---:|---|\n";

}  // namespace

std::string regression_markdown(const std::vector<RegressionRow>& rows) {
  std::string gated, other;
  int failed = 0, n_gated = 0, n_other = 0;
  for (const auto& r : rows) {
    if (r.tolerance) {
      gated += md_row(r);
      ++n_gated;
      failed += r.failed ? 1 : 0;
    } else {
      other += md_row(r);
      ++n_other;
    }
  }
  std::string m = "### Regressions against the baseline\n\n";
  m += fmt::format("**{} of {} metrics regressed beyond their tolerance**\n\n", failed, n_gated);
  if (n_gated > 0)
    m += kMdHead + gated;
  else
    m += "No tolerances: set `regression` in a scenario or `--max-regression METRIC=+N%`.\n";
  if (n_other > 0)
    m += fmt::format(
        "\n<details><summary>{} other metrics changed (not gated)</summary>\n\n{}{}\n</details>\n",
        n_other, kMdHead, other);
  return m + "\n";
}

std::string regression_console(const std::vector<RegressionRow>& rows) {
  std::string s = "regressions against the baseline:\n";
  s += fmt::format("  {:<9} {:<28} {:<19} {:<28} {:>14} {:>14} {:>14} {:>8} {}\n", "", "scenario",
                   "variant", "metric", "base", "now", "delta", "delta %", "tolerance");
  int n = 0;
  for (const auto& r : rows) {
    if (!r.tolerance) continue;
    ++n;
    s += fmt::format("  {:<9} {:<28} {:<19} {:<28} {:>14} {:>14} {:>14} {:>8} {}\n", r.verdict,
                     r.scenario, r.variant, r.metric, r.base ? show_number(*r.base) : "-",
                     r.now ? show_number(*r.now) : "-",
                     r.base && r.now ? signed_number(r.delta()) : "-",
                     r.base && r.now ? r.delta_percent() : "-", r.tolerance->text);
  }
  if (n == 0)
    s += "  (no tolerances: set `regression` in a scenario or --max-regression METRIC=+N%)\n";
  return s + "\n";
}

}  // namespace rsim::cli
