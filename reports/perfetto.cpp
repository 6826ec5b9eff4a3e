#include "reports/perfetto.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace reports {

namespace {

using json = nlohmann::ordered_json;

constexpr int kAppThread = 1;
constexpr int kHeartbeatThread = 2;
constexpr int kCoordinatorBase = 10000;  // pid of broker-N is kCoordinatorBase + N
constexpr int kLagPid = 9999;
constexpr std::size_t kMaxLagCounters = 64;
static_assert(kMaxLagCounters <= kLagSeriesKept,
              "a Timeline keeps the lag series perfetto.json draws");

struct Writer {
  std::vector<std::string> events;
  std::uint64_t next_async = 1;
  void add(const json& e) { events.push_back(e.dump()); }
  void meta(int pid, int tid, const char* what, const std::string& name) {
    add(json{{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
  }
  void async(int pid, int tid, const std::string& cat, const std::string& name, std::int64_t from,
             std::int64_t to, const json& args) {
    const std::string id = fmt::format("0x{:x}", next_async++);
    add(json{{"name", name},
             {"cat", cat},
             {"ph", "b"},
             {"ts", from},
             {"pid", pid},
             {"tid", tid},
             {"id", id},
             {"args", args}});
    add(json{{"name", name},
             {"cat", cat},
             {"ph", "e"},
             {"ts", to},
             {"pid", pid},
             {"tid", tid},
             {"id", id}});
  }
  void instant(int pid, int tid, const std::string& cat, const std::string& name, std::int64_t t,
               const json& args) {
    add(json{{"name", name},
             {"cat", cat},
             {"ph", "i"},
             {"s", "t"},
             {"ts", t},
             {"pid", pid},
             {"tid", tid},
             {"args", args}});
  }
};

struct Slice {
  std::int64_t from, to;
  std::string cat, name;
};

// B/E on one thread must nest: spans that would cross an open one become async events of
// the same process instead.
void emit_thread(Writer& w, int pid, int tid, std::vector<Slice> slices) {
  std::stable_sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
    return a.from != b.from ? a.from < b.from : a.to > b.to;
  });
  std::vector<const Slice*> open;
  auto close_until = [&](std::int64_t t) {
    while (!open.empty() && open.back()->to <= t) {
      w.add(json{{"name", open.back()->name},
                 {"cat", open.back()->cat},
                 {"ph", "E"},
                 {"ts", open.back()->to},
                 {"pid", pid},
                 {"tid", tid}});
      open.pop_back();
    }
  };
  for (const auto& s : slices) {
    close_until(s.from);
    if (!open.empty() && s.to > open.back()->to) {
      w.async(pid, tid, s.cat, s.name, s.from, s.to, json::object());
      continue;
    }
    w.add(json{
        {"name", s.name}, {"cat", s.cat}, {"ph", "B"}, {"ts", s.from}, {"pid", pid}, {"tid", tid}});
    open.push_back(&s);
  }
  close_until(INT64_MAX);
}

int broker_pid(const std::string& broker) {
  if (broker.rfind("broker-", 0) == 0) return kCoordinatorBase + std::atoi(broker.c_str() + 7);
  return kCoordinatorBase;
}

}  // namespace

std::string render_perfetto(const Timeline& tl) {
  Writer w;
  const bool background = tl.protocol == "consumer" || tl.protocol == "share";
  std::map<std::string, int> pid_of;
  for (std::size_t i = 0; i < tl.lanes.size(); ++i) {
    const auto& lane = tl.lanes[i];
    const int pid = static_cast<int>(i) + 1;
    pid_of[lane.consumer] = pid;
    w.meta(pid, 0, "process_name", "consumer " + lane.consumer);
    w.meta(pid, kAppThread, "thread_name", "application thread");
    w.meta(pid, kHeartbeatThread, "thread_name",
           background ? "background thread" : "heartbeat thread");
  }
  std::map<std::string, int> brokers;
  for (const auto& m : tl.messages) brokers[m.server] = broker_pid(m.server);
  if (brokers.empty()) brokers["broker-0"] = kCoordinatorBase;
  for (const auto& [name, pid] : brokers)
    w.meta(pid, 0, "process_name", name + " (group coordinator)");

  // Consumers: callbacks and processing on the application thread; states that span the
  // whole process (revoking, waiting, stalled, paused, crashed) as async slices.
  for (const auto& lane : tl.lanes) {
    const int pid = pid_of[lane.consumer];
    std::vector<Slice> app;
    for (const auto& s : lane.spans) {
      if (s.kind == "callback" || s.kind == "processing")
        app.push_back(Slice{s.start_us, s.end_us, s.kind, s.label});
      else
        w.async(pid, kAppThread, s.kind, s.label, s.start_us, s.end_us, json::object());
    }
    emit_thread(w, pid, kAppThread, std::move(app));
    for (const auto& o : lane.owned) {
      std::vector<std::string> names;
      for (const int p : o.partitions) names.push_back(tl.partitions[static_cast<std::size_t>(p)]);
      w.async(pid, kAppThread, "ownership", "owns " + compress_partitions(names), o.start_us,
              o.end_us, json{{"partitions", names.size()}});
    }
    for (const auto& i : lane.instants)
      w.instant(pid, kAppThread, i.kind, i.label, i.t_us, json::object());
  }
  for (const auto& m : tl.messages) {
    const auto it = pid_of.find(m.client);
    if (it == pid_of.end()) continue;
    const bool heartbeat =
        m.api == "Heartbeat" || m.api == "ConsumerGroupHeartbeat" || m.api == "ShareGroupHeartbeat";
    const int tid = background || heartbeat ? kHeartbeatThread : kAppThread;
    json args = {{"to", m.server}};
    if (!m.detail.empty()) args["detail"] = m.detail;
    w.instant(it->second, tid, "rpc", m.api + " request", m.send_us, args);
    if (m.recv_us >= 0) {
      w.instant(it->second, tid, "rpc", m.api + " response " + m.error, m.recv_us,
                json{{"from", m.server}, {"error", m.error}});
      w.instant(brokers[m.server], 1, "rpc", m.api + " from " + m.client, m.send_us,
                json::object());
    }
  }

  // Coordinators: a thread per group with its states, rebalances as async slices.
  const int coordinator = brokers.begin()->second;
  for (std::size_t g = 0; g < tl.groups.size(); ++g) {
    const auto& band = tl.groups[g];
    const int tid = 100 + static_cast<int>(g);
    w.meta(coordinator, tid, "thread_name", "group " + band.group);
    std::vector<Slice> states;
    for (const auto& s : band.segments)
      states.push_back(Slice{s.start_us, s.end_us, "group.state", s.label});
    emit_thread(w, coordinator, tid, std::move(states));
    for (const auto& e : band.epochs)
      w.instant(coordinator, tid, "group.epoch", e.label, e.t_us, json::object());
    for (const auto& r : tl.rebalances)
      if (r.group == band.group)
        w.async(coordinator, tid, "rebalance", fmt::format("rebalance R{}: {}", r.index, r.trigger),
                r.start_us, r.end_us, json{{"epoch", r.epoch_label}, {"completed", r.completed}});
  }
  w.meta(coordinator, 1, "thread_name", "requests");

  // Lag counters: the total, and each partition while there are few enough to read.
  w.meta(kLagPid, 0, "process_name", "lag");
  for (const auto& p : tl.total_lag)
    w.add(json{{"name", "total lag"},
               {"ph", "C"},
               {"ts", p.t_us},
               {"pid", kLagPid},
               {"tid", 0},
               {"args", {{"records", p.lag}}}});
  std::size_t counters = 0;
  for (std::size_t i = 0; i < tl.lag.size() && counters < kMaxLagCounters; ++i) {
    if (tl.lag[i].empty()) continue;
    ++counters;
    for (const auto& p : tl.lag[i])
      w.add(json{{"name", "lag " + tl.partitions[i]},
                 {"ph", "C"},
                 {"ts", p.t_us},
                 {"pid", kLagPid},
                 {"tid", 0},
                 {"args", {{"records", p.lag}}}});
  }

  std::string out = "{\"displayTimeUnit\":\"ms\",\"otherData\":";
  out += json{{"scenario", tl.scenario}, {"protocol", tl.protocol}, {"generator", "rebalance-sim"}}
             .dump();
  out += ",\"traceEvents\":[\n";
  for (std::size_t i = 0; i < w.events.size(); ++i) {
    out += w.events[i];
    out += i + 1 < w.events.size() ? ",\n" : "\n";
  }
  out += "]}\n";
  return out;
}

}  // namespace reports
