#include "tools/commands/shrink.hpp"

#include <algorithm>
#include <functional>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/scenario/scenario.hpp"
#include "models/scenario/world.hpp"
#include "tools/commands/explore.hpp"
#include "tools/exit_codes.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

using json = nlohmann::json;

namespace {

// ddmin over n items: the smallest subset (1-minimal) of indexes for which `fails` holds.
std::vector<std::size_t> ddmin(std::size_t n,
                               const std::function<bool(const std::vector<std::size_t>&)>& fails) {
  std::vector<std::size_t> items(n);
  for (std::size_t i = 0; i < n; ++i) items[i] = i;
  if (fails({})) return {};
  std::size_t k = 2;
  while (items.size() >= 2) {
    const std::size_t size = (items.size() + k - 1) / k;
    bool reduced = false;
    for (std::size_t start = 0; start < items.size() && !reduced; start += size) {
      std::vector<std::size_t> complement;
      for (std::size_t i = 0; i < items.size(); ++i)
        if (i < start || i >= start + size) complement.push_back(items[i]);
      if (fails(complement)) {
        items = std::move(complement);
        k = std::max<std::size_t>(k - 1, 2);
        reduced = true;
      }
    }
    if (reduced) continue;
    if (k >= items.size()) break;
    k = std::min(k * 2, items.size());
  }
  if (items.size() == 1 && fails({})) items.clear();
  return items;
}

bool mentions(const json& event, const std::string& consumer) {
  if (event.value("consumer", "") == consumer) return true;
  if (event.contains("between"))
    for (const auto& b : event["between"])
      if (b == consumer) return true;
  return false;
}

}  // namespace

int cmd_shrink(const ShrinkArgs& args) {
  json doc = load_scenario_json(args.scenario);
  const ScenarioSpec spec = parse_scenario(doc, args.scenario);
  std::vector<std::string> variants =
      args.protocol.empty() ? spec.protocols : std::vector<std::string>{args.protocol};
  std::string variant, property;
  for (const auto& v : variants) {
    const auto problems = unsupported_features(spec, v);
    if (!problems.empty()) throw ScenarioError(args.scenario, problems);
    for (const auto& x : run_and_check(spec, v, spec.seed, args.limits, args.model)) {
      if (!args.property.empty() && x.property != args.property) continue;
      variant = v;
      property = x.property;
      break;
    }
    if (!variant.empty()) break;
  }
  if (variant.empty()) {
    throw ScenarioError(
        args.scenario,
        {args.property.empty()
             ? "no property fails in this scenario: nothing to shrink"
             : fmt::format("property {} does not fail: nothing to shrink", args.property)});
  }
  std::size_t runs = 0;
  const auto still_fails = [&](const json& candidate) {
    ++runs;
    try {
      const ScenarioSpec s = parse_scenario(candidate, args.scenario);
      for (const auto& x : run_and_check(s, variant, s.seed, args.limits, args.model))
        if (x.property == property) return true;
    } catch (const ScenarioError&) {
      return false;  // not a valid scenario any more
    } catch (const sim::WatchdogTripped&) {
      return false;
    }
    return false;
  };
  const auto sizes = [](const json& d) {
    return fmt::format(
        "{} events, {} consumers, {} topics", d.value("events", json::array()).size(),
        d.value("consumers", json::array()).size(), d.value("topics", json::array()).size());
  };
  const std::string before = sizes(doc);

  // 1. Events.
  const auto keep_events = [&](const json& d, const std::vector<std::size_t>& keep) {
    json c = d;
    json events = json::array();
    for (const std::size_t i : keep) events.push_back(d["events"][i]);
    c["events"] = events;
    return c;
  };
  if (doc.contains("events")) {
    const auto keep = ddmin(doc["events"].size(),
                            [&](const auto& k) { return still_fails(keep_events(doc, k)); });
    doc = keep_events(doc, keep);
  }
  // 2. Consumers, with the events that name them.
  const auto keep_consumers = [&](const json& d, const std::vector<std::size_t>& keep) {
    json c = d;
    json consumers = json::array();
    std::vector<std::string> gone;
    for (std::size_t i = 0; i < d["consumers"].size(); ++i) {
      if (std::find(keep.begin(), keep.end(), i) != keep.end())
        consumers.push_back(d["consumers"][i]);
      else
        gone.push_back(d["consumers"][i].value("name", ""));
    }
    c["consumers"] = consumers;
    json events = json::array();
    for (const auto& e : d.value("events", json::array()))
      if (std::none_of(gone.begin(), gone.end(),
                       [&](const std::string& g) { return mentions(e, g); }))
        events.push_back(e);
    c["events"] = events;
    return c;
  };
  if (doc.contains("consumers")) {
    const auto keep = ddmin(doc["consumers"].size(),
                            [&](const auto& k) { return still_fails(keep_consumers(doc, k)); });
    doc = keep_consumers(doc, keep);
  }
  // 3. Topics, with the subscriptions and events that name them.
  const auto keep_topics = [&](const json& d, const std::vector<std::size_t>& keep) {
    json c = d;
    json topics = json::array();
    std::vector<std::string> kept;
    for (const std::size_t i : keep) {
      topics.push_back(d["topics"][i]);
      kept.push_back(d["topics"][i].value("name", ""));
    }
    c["topics"] = topics;
    const auto known = [&](const json& t) {
      return std::find(kept.begin(), kept.end(), t.get<std::string>()) != kept.end();
    };
    for (auto& consumer : c["consumers"]) {
      json subscribed = json::array();
      for (const auto& t : consumer.value("topics", json::array()))
        if (known(t)) subscribed.push_back(t);
      consumer["topics"] = subscribed;
    }
    json events = json::array();
    for (auto e : d.value("events", json::array())) {
      if (e.contains("topic") && !known(e["topic"])) continue;
      if (e.contains("topics")) {
        json ts = json::array();
        for (const auto& t : e["topics"])
          if (known(t)) ts.push_back(t);
        e["topics"] = ts;
      }
      events.push_back(e);
    }
    c["events"] = events;
    return c;
  };
  if (doc.contains("topics")) {
    const auto keep = ddmin(doc["topics"].size(),
                            [&](const auto& k) { return still_fails(keep_topics(doc, k)); });
    doc = keep_topics(doc, keep);
  }
  // 4. The network knobs and the expectations (which do not matter to a property).
  for (const char* key : {"network", "expect"}) {
    if (!doc.contains(key)) continue;
    json c = doc;
    c.erase(key);
    if (still_fails(c)) doc = c;
  }

  std::string out = args.out;
  if (out.empty()) {
    out = args.scenario;
    if (out.size() > 5 && out.ends_with(".json")) out.resize(out.size() - 5);
    out += ".shrunk.json";
  }
  write_file_atomically(out, doc.dump(2) + "\n");
  std::cout << fmt::format("shrink {}: {} fails under {}; {} runs\n", args.scenario, property,
                           variant, runs);
  std::cout << fmt::format("  from {}\n  to   {}\n", before, sizes(doc));
  std::cout << fmt::format(
      "  wrote {}\n  reproduce: rebalance-sim run {} --protocol {} --check-invariants{}\n", out,
      out, variant, injected_bug_flag(args.model));
  return kOk;
}

}  // namespace rsim::cli
