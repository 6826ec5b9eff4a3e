#include "reports/analyses/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <istream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/trace_reader.hpp"

namespace rsim::compare {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
namespace tr = rsim::trace;

/// "orders-10" sorts after "orders-9": topic, then partition number.
bool partition_less(const std::string& a, const std::string& b) {
  const auto da = a.rfind('-');
  const auto db = b.rfind('-');
  if (da == std::string::npos || db == std::string::npos) return a < b;
  const std::string ta = a.substr(0, da), tb = b.substr(0, db);
  if (ta != tb) return ta < tb;
  return std::strtol(a.c_str() + da + 1, nullptr, 10) <
         std::strtol(b.c_str() + db + 1, nullptr, 10);
}

std::vector<std::string> partition_list(const ojson& a) {
  std::vector<std::string> out;
  if (!a.is_array()) return out;
  for (const auto& p : a)
    if (p.is_string()) out.push_back(p.get<std::string>());
  std::sort(out.begin(), out.end(), partition_less);
  return out;
}

std::int64_t int_of(const ojson& o, const char* key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

std::string str_of(const ojson& o, const char* key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// "orders-0..5" for a run of one topic's consecutive partitions.
std::string compact(const std::vector<std::string>& ps) {
  if (ps.empty()) return "[]";
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i < ps.size()) {
    const auto d = ps[i].rfind('-');
    const std::string topic = ps[i].substr(0, d);
    const long first = std::strtol(ps[i].c_str() + d + 1, nullptr, 10);
    long last = first;
    std::size_t j = i + 1;
    while (j < ps.size()) {
      const auto dj = ps[j].rfind('-');
      if (ps[j].substr(0, dj) != topic ||
          std::strtol(ps[j].c_str() + dj + 1, nullptr, 10) != last + 1)
        break;
      ++last;
      ++j;
    }
    parts.push_back(last > first + 1 ? fmt::format("{}-{}..{}", topic, first, last)
                    : last == first  ? ps[i]
                                     : fmt::format("{},{}", ps[i], ps[j - 1]));
    i = j;
  }
  return fmt::format("[{}]", fmt::join(parts, " "));
}

// A coordinator record: the fields of a `record` line after its partition and offset.
Record record_of(const ojson& e) {
  Record r;
  r.record = str_of(e, "record");
  r.consumer = str_of(e, "consumer");
  r.tombstone = e.value("tombstone", false);
  // Which members of a share group get a new target is decided by the member ids' HashMap order:
  // SimpleHomogeneousAssignmentBuilder numbers the members in groupSpec.memberIds() order and
  // its desiredAssignmentCount gives the extra partitions to the lowest numbers, and the members
  // ids are random UUIDs. So a share target record names no member that compare could hold
  // either side to (its removal, a tombstone, does).
  if (r.record == "ShareGroupTargetAssignmentMember" && !r.tombstone) r.consumer = "(a member)";
  if (r.record == "ConsumerGroupMetadata")
    r.epoch = int_of(e, "epoch");
  else if (r.record == "ConsumerGroupTargetAssignmentMetadata")
    r.epoch = int_of(e, "assignment_epoch");
  else if (r.record == "ConsumerGroupCurrentMemberAssignment")
    r.epoch = int_of(e, "member_epoch");
  else if (r.record == "GroupMetadata")
    r.epoch = int_of(e, "generation");
  if (r.record == "ConsumerGroupTargetAssignmentMember") {
    r.partitions = partition_list(e.value("partitions", ojson::array()));
  } else if (r.record == "ConsumerGroupCurrentMemberAssignment") {
    r.partitions = partition_list(e.value("assigned", ojson::array()));
    for (const auto& p : partition_list(e.value("pending_revocation", ojson::array())))
      r.partitions.push_back("pending:" + p);
  } else if (r.record == "GroupMetadata" && e.contains("members") && e["members"].is_array()) {
    std::vector<std::string> all;
    for (const auto& m : e["members"])
      for (const auto& p : partition_list(m.value("assignment", ojson::array())))
        all.push_back(str_of(m, "consumer") + ":" + p);
    std::sort(all.begin(), all.end());
    r.partitions = all;
  }
  return r;
}

/// Longest common subsequence of a and b: the matched index pairs, in order.
template <class T, class Eq = std::equal_to<T>>
std::vector<std::pair<std::size_t, std::size_t>> lcs(const std::vector<T>& a,
                                                     const std::vector<T>& b, Eq eq = Eq()) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::uint32_t>> t(n + 1, std::vector<std::uint32_t>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;)
    for (std::size_t j = m; j-- > 0;)
      t[i][j] = eq(a[i], b[j]) ? t[i + 1][j + 1] + 1 : std::max(t[i + 1][j], t[i][j + 1]);
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t i = 0, j = 0;
  while (i < n && j < m) {
    if (eq(a[i], b[j]) && t[i][j] == t[i + 1][j + 1] + 1) {
      out.emplace_back(i++, j++);
    } else if (t[i + 1][j] >= t[i][j + 1]) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

std::string fmt_ms(std::optional<std::int64_t> us) {
  return us ? fmt::format("{:.0f}", static_cast<double>(*us) / 1000.0) : std::string("-");
}

std::string fmt_dev(std::int64_t us) {
  return fmt::format("{:+.0f}", static_cast<double>(us) / 1000.0);
}

}  // namespace

std::string Record::str() const {
  return fmt::format("{}{}{} epoch {} {}", tombstone ? "tombstone " : "", record,
                     consumer.empty() ? "" : " " + consumer, epoch, compact(partitions));
}

std::vector<json> parse_jsonl(const std::string& text, const std::string& source) {
  std::vector<json> out;
  std::istringstream in(text);
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    try {
      out.push_back(json::parse(line));
    } catch (const json::exception& e) {
      throw std::runtime_error(fmt::format("{}: line {}: not valid json: {}", source, n, e.what()));
    }
  }
  return out;
}

struct FactsBuilder::State {
  TraceFacts f;
  // final assignment: each consumer's live incarnation and what it owns last
  std::map<std::string, std::vector<std::string>> owned;  // "name#incarnation"
  std::map<std::string, std::string> live;                // name -> "name#incarnation" or ""
  std::map<std::string, std::set<std::int64_t>> generations;
  std::map<std::string, std::vector<std::pair<std::int64_t, std::int64_t>>> delivered;
};

namespace {

/// At most this many redeliveries and archivals per trace are kept for matching in order (the
/// match is quadratic); the counts go on.
constexpr std::size_t kMaxShareEvents = 5000;

void add_share_event(ShareFacts& f, const char* kind, const std::string& partition,
                     std::int64_t first, std::int64_t last, std::int64_t delivery_count,
                     std::int64_t t_us) {
  for (std::int64_t o = first; o <= last && f.events.size() < kMaxShareEvents; ++o)
    f.events.push_back({t_us, kind, partition, o, delivery_count});
}

/// A closing session's release (the simulator's `session_close`) takes back the acquisition of
/// the records it releases: they were acquired by the ShareFetch the close waited for, or
/// buffered by the client, and no poll() ever returned them, so a real run, whose share.records
/// lines are what poll() returned (the oracle's ShareConsumerApp), never shows them.
void take_back_acquisition(ShareFacts& f, const std::string& partition, std::int64_t first,
                           std::int64_t last, std::int64_t n, std::int64_t dc) {
  f.acquired -= n;
  auto& by_count = f.acquired_by_delivery_count;
  if (const auto it = by_count.find(dc); it != by_count.end() && (it->second -= n) <= 0)
    by_count.erase(it);
  f.max_delivery_count = by_count.empty() ? 0 : by_count.rbegin()->first;
  if (dc < 2) return;
  f.redelivered -= n;
  const auto taken = [&](const ShareEvent& ev) {
    return ev.kind == "redelivered" && ev.partition == partition && ev.offset >= first &&
           ev.offset <= last && ev.delivery_count == dc;
  };
  f.events.erase(std::remove_if(f.events.begin(), f.events.end(), taken), f.events.end());
}

/// One share.records line: an acquisition (from AVAILABLE to ACQUIRED) or an acknowledgement
/// (cause ACCEPT, RELEASE or REJECT); the broker's own transitions are no client's view, but a
/// closing session's release takes back what the application never saw (take_back_acquisition).
void add_share_records(ShareFacts& f, const tr::ShareRecords& e, std::int64_t t) {
  f.present = true;
  const std::int64_t n = e.records, dc = e.delivery_count;
  const tr::sv from = e.from, to = e.to, cause = e.cause;
  const std::string partition =
      e.partition != nullptr ? reports::partition_name(*e.partition) : std::string();
  if (from == "AVAILABLE" && to == "ACQUIRED") {
    f.acquired += n;
    f.acquired_by_delivery_count[dc] += n;
    f.max_delivery_count = std::max(f.max_delivery_count, dc);
    if (dc >= 2) {
      f.redelivered += n;
      add_share_event(f, "redelivered", partition, e.first_offset, e.last_offset, dc, t);
    }
    return;
  }
  if (from != "ACQUIRED") return;
  if (cause == "session_close") {
    take_back_acquisition(f, partition, e.first_offset, e.last_offset, n, dc);
    return;
  }
  if (cause == "ACCEPT")
    f.accepted += n;
  else if (cause == "RELEASE")
    f.released += n;
  else if (cause == "REJECT")
    f.rejected += n;
  else
    return;
  if (to == "ARCHIVED") {
    f.archived += n;
    add_share_event(f, "archived", partition, e.first_offset, e.last_offset, dc, t);
  }
}

}  // namespace

std::string ShareEvent::str() const {
  return fmt::format("{} {}@{} (delivery count {})", kind, partition, offset, delivery_count);
}

FactsBuilder::FactsBuilder() : s_(std::make_unique<State>()) {}
FactsBuilder::~FactsBuilder() = default;

namespace {
std::vector<std::string> sorted_names(tr::Partitions ps) {
  auto out = reports::partition_names(ps);
  std::sort(out.begin(), out.end(), partition_less);
  return out;
}

/// A `member.id` line's id, or a member record's, added to its consumer's ids when new.
void add_member_id(std::map<std::string, std::vector<std::string>>& ids, const ojson& line) {
  const std::string type = str_of(line, "type");
  if (type != "member.id" && type != "record") return;
  const std::string consumer = str_of(line, "consumer"), id = str_of(line, "member_id");
  if (consumer.empty() || id.empty()) return;
  auto& known = ids[consumer];
  if (std::find(known.begin(), known.end(), id) == known.end()) known.push_back(id);
}
}  // namespace

void FactsBuilder::add(std::int64_t t_us, const tr::Event& e, const ojson& line) {
  auto& f = s_->f;
  auto& owned = s_->owned;
  auto& live = s_->live;
  // Only a recording writes `incarnation` (a real client restarted in one process), on the lines
  // of its consumers; the simulator writes none (incarnation 0).
  const std::int64_t incarnation = int_of(line, "incarnation");
  const auto key = [&](tr::sv consumer) { return fmt::format("{}#{}", consumer, incarnation); };
  add_member_id(f.member_ids, line);
  if (const auto* c = std::get_if<tr::Callback>(&e)) {
    if (c->phase == "start")
      f.callbacks.push_back(
          {t_us, std::string(c->consumer), std::string(c->callback), sorted_names(c->partitions)});
  } else if (const auto* a = std::get_if<tr::Assignment>(&e)) {
    owned[key(a->consumer)] = sorted_names(a->owned);
  } else if (const auto* start = std::get_if<tr::ConsumerStart>(&e)) {
    const std::string k = key(start->consumer);
    live[std::string(start->consumer)] = k;
    owned[k].clear();
  } else if (std::holds_alternative<tr::ConsumerStop>(e) ||
             std::holds_alternative<tr::ConsumerCrash>(e)) {
    const std::string consumer(std::holds_alternative<tr::ConsumerStop>(e)
                                   ? std::get<tr::ConsumerStop>(e).consumer
                                   : std::get<tr::ConsumerCrash>(e).consumer);
    if (live[consumer] == key(consumer) || incarnation == 0) live[consumer].clear();
  } else if (const auto* rec = std::get_if<tr::Record>(&e)) {
    const ojson& v = rec->value.object != nullptr ? *rec->value.object : line;
    const std::string name = str_of(v, "record");
    if (name == "OffsetCommit") return;
    Record r = record_of(v);
    r.t_us = t_us;
    f.records.push_back(r);
    if (!r.tombstone && r.epoch > 0 && (name == "GroupMetadata" || name == "ConsumerGroupMetadata"))
      s_->generations[str_of(v, "group")].insert(r.epoch);
  } else if (const auto* sr = std::get_if<tr::ShareRecords>(&e)) {
    add_share_records(f.share, *sr, t_us);
  } else if (const auto* fetched = std::get_if<tr::RecordsFetched>(&e)) {
    for (const auto& r : fetched->ranges)
      s_->delivered[reports::partition_name(r.partition)].emplace_back(r.first, r.last);
  }
}

namespace {

/// Kafka writes one target assignment's member records in the order of a HashMap of member ids
/// (TargetAssignmentBuilder.build iterates memberSpecs.keySet()), random UUIDs: the order within
/// such a run of records is no fact of either side, so both are compared sorted. A share group's
/// target assignment is built by the same TargetAssignmentBuilder (GroupMetadataManager's
/// share-group heartbeat), so its ShareGroupTargetAssignmentMember runs are sorted too.
///
/// So are runs of ShareGroupCurrentMemberAssignment records: each is written by its member's own
/// ShareGroupHeartbeat, which moves the member straight to its target (ShareGroupAssignmentBuilder:
/// no revocation, nothing waits for another member), and with no group record between them the
/// heartbeats are independent: their order is the order in which the members' background
/// threads woke, often 0-2 ms apart (docs/fidelity.md, finding 25). Each matched record's time
/// is still held to the tolerance.
void sort_target_assignment_runs(std::vector<Record>& records) {
  const auto member_record = [](const Record& r) {
    return (r.record == "ConsumerGroupTargetAssignmentMember" ||
            r.record == "ShareGroupTargetAssignmentMember" ||
            r.record == "ShareGroupCurrentMemberAssignment") &&
           !r.tombstone;
  };
  for (auto it = records.begin(); it != records.end();) {
    auto end = it;
    while (end != records.end() && member_record(*end) && end->record == it->record) ++end;
    if (end == it) {
      ++it;
      continue;
    }
    std::stable_sort(it, end,
                     [](const Record& a, const Record& b) { return a.consumer < b.consumer; });
    it = end;
  }
}

/// The members of `group` in the order they first appear in `records`.
std::vector<std::string> arrival_order(const std::vector<Record>& records,
                                       const std::vector<std::string>& group) {
  std::vector<std::string> order;
  for (const auto& r : records)
    if (std::find(group.begin(), group.end(), r.consumer) != group.end() &&
        std::find(order.begin(), order.end(), r.consumer) == order.end())
      order.push_back(r.consumer);
  return order;
}

/// A real run's records with each group of simultaneous starts renamed to the simulator's
/// order: the k-th of the group to appear in the run's records as the k-th to appear in the
/// simulator's. `note` says the run's own order where it is not the simulator's.
std::vector<Record> in_simulator_order(const std::vector<Record>& sim,
                                       const std::vector<Record>& run,
                                       const std::vector<std::vector<std::string>>& groups,
                                       std::string& note) {
  std::map<std::string, std::string> rename;
  for (const auto& g : groups) {
    const auto s = arrival_order(sim, g), r = arrival_order(run, g);
    if (s == r || s.size() != r.size()) continue;
    for (std::size_t i = 0; i < s.size(); ++i) rename[r[i]] = s[i];
    note += fmt::format("{}simultaneous starts of {}: reached the coordinator as {}",
                        note.empty() ? "" : "; ", fmt::join(g, ", "), fmt::join(r, ", "));
  }
  if (rename.empty()) return run;
  std::vector<Record> out = run;
  for (auto& rec : out)
    if (const auto it = rename.find(rec.consumer); it != rename.end()) rec.consumer = it->second;
  sort_target_assignment_runs(out);
  return out;
}

/// The members of `stop` in the order their leave (their first tombstone in the window) appears.
std::vector<std::string> leave_order(const std::vector<Record>& records,
                                     const SimultaneousStop& stop) {
  std::vector<std::string> order;
  for (const auto& r : records)
    if (r.tombstone && r.t_us >= stop.at_us && r.t_us <= stop.at_us + stop.bound_us &&
        std::find(stop.members.begin(), stop.members.end(), r.consumer) != stop.members.end() &&
        std::find(order.begin(), order.end(), r.consumer) == order.end())
      order.push_back(r.consumer);
  return order;
}

/// Each close window of simultaneous stops (SimultaneousStop), from the stop to the last of the
/// group's leave records, in a canonical order. Inside it, which member leaves when is the race;
/// so is what a group record or a heartbeat there sees: which of the closing members have left
/// when a remaining member's heartbeat computes a new target (so which members get a target
/// record, and how many), and which target a closing member's own heartbeat moves it to before
/// its leave. So the window keeps each member's leave (its tombstones), the group records and the
/// remaining members' own records, sorted by record name and member (each matched pair still
/// held to the tolerance in time), and leaves out the target member records and the closing
/// members' records that are no tombstone.
void canonical_close_windows(std::vector<Record>& records,
                             const std::vector<SimultaneousStop>& stops) {
  for (const auto& stop : stops) {
    const auto closing = [&](const std::string& name) {
      return std::find(stop.members.begin(), stop.members.end(), name) != stop.members.end();
    };
    std::int64_t end_us = -1;
    for (const auto& r : records)
      if (r.tombstone && closing(r.consumer) && r.t_us >= stop.at_us &&
          r.t_us <= stop.at_us + stop.bound_us)
        end_us = std::max(end_us, r.t_us);
    if (end_us < 0) continue;
    const auto first = std::find_if(records.begin(), records.end(),
                                    [&](const Record& r) { return r.t_us >= stop.at_us; });
    const auto last =
        std::find_if(first, records.end(), [&](const Record& r) { return r.t_us > end_us; });
    std::vector<Record> window;
    for (auto it = first; it != last; ++it)
      if (it->tombstone ||
          (!closing(it->consumer) && it->record != "ShareGroupTargetAssignmentMember"))
        window.push_back(*it);
    std::stable_sort(window.begin(), window.end(), [](const Record& a, const Record& b) {
      return std::tie(a.record, a.consumer, a.tombstone) <
             std::tie(b.record, b.consumer, b.tombstone);
    });
    const auto at = records.erase(first, last);
    records.insert(at, window.begin(), window.end());
  }
}

/// Two members' writes of a consumer group within this much of each other (CreateTime, ms) are
/// a race of their requests: rolling-upgrade-to-consumer's B and C had their Heartbeats,
/// OffsetCommits and JoinGroups read by the broker 0.10-2.37 ms apart, in both orders within one
/// run (docs/fidelity.md, finding 27).
constexpr std::int64_t kSimultaneousWritesUs = 2000;

/// Whether `r` is a consumer-group member record that one member's own request writes.
bool member_write(const Record& r) {
  return !r.tombstone && !r.consumer.empty() &&
         (r.record == "ConsumerGroupMemberMetadata" ||
          r.record == "ConsumerGroupCurrentMemberAssignment");
}

/// A real run's near-simultaneous member writes in the simulator's order. A write is the run of
/// consecutive member records of one member at one time (its request's ConsumerGroupMemberMetadata
/// and ConsumerGroupCurrentMemberAssignment); consecutive writes of different members, each within
/// kSimultaneousWritesUs of the one before and nothing between them, were a race of their
/// requests' arrival at the coordinator, so their order is no fact of the run: they are taken in
/// the order the simulator wrote the same records (each by its nearest equal record in time;
/// writes the simulator lacks keep their place after the others). What a write says, and its
/// time, are compared as before: a write that depended on another's (a member waiting for a
/// partition another revokes) says something else in the other order. `note` says where the
/// run's own order was another.
std::vector<Record> writes_in_simulator_order(const std::vector<Record>& sim,
                                              std::vector<Record> run, std::string& note) {
  struct Write {
    std::size_t begin, end;
  };
  std::vector<Write> writes;
  for (std::size_t i = 0; i < run.size();) {
    std::size_t e = i;
    while (e < run.size() && member_write(run[e]) && run[e].consumer == run[i].consumer &&
           run[e].t_us == run[i].t_us)
      ++e;
    if (e == i) e = i + 1;
    writes.push_back({i, e});
    i = e;
  }
  const auto sim_position = [&](const Write& w) {
    const Record& key = run[w.end - 1];
    std::size_t best = sim.size();
    std::int64_t best_dt = 0;
    for (std::size_t j = 0; j < sim.size(); ++j) {
      if (!(sim[j] == key)) continue;
      const std::int64_t dt = std::llabs(sim[j].t_us - key.t_us);
      if (best == sim.size() || dt < best_dt) best = j, best_dt = dt;
    }
    return best;
  };
  std::vector<Record> out;
  out.reserve(run.size());
  for (std::size_t k = 0; k < writes.size();) {
    // The block: writes of distinct members, each within the bound of the one before.
    std::size_t end = k + 1;
    std::set<std::string> members{run[writes[k].begin].consumer};
    while (member_write(run[writes[k].begin]) && end < writes.size() &&
           member_write(run[writes[end].begin]) &&
           run[writes[end].begin].t_us - run[writes[end - 1].begin].t_us <= kSimultaneousWritesUs &&
           members.insert(run[writes[end].begin].consumer).second)
      ++end;
    std::vector<std::pair<std::size_t, std::size_t>> order;  // (sim position, write)
    for (std::size_t w = k; w < end; ++w)
      order.emplace_back(end - k > 1 ? sim_position(writes[w]) : 0, w);
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    bool moved = false;
    for (std::size_t n = 0; n < order.size(); ++n) {
      moved = moved || order[n].second != k + n;
      const Write& w = writes[order[n].second];
      out.insert(out.end(), run.begin() + static_cast<std::ptrdiff_t>(w.begin),
                 run.begin() + static_cast<std::ptrdiff_t>(w.end));
    }
    if (moved) {
      std::vector<std::string> names;
      for (std::size_t w = k; w < end; ++w) names.push_back(run[writes[w].begin].consumer);
      const Record& first = run[writes[k].begin];
      note += fmt::format(
          "{}member writes of {} within {} ms at {} ms, taken in the "
          "simulator's order",
          note.empty() ? "" : "; ", fmt::join(names, ", "),
          (run[writes[end - 1].begin].t_us - first.t_us) / 1000, fmt_ms(first.t_us));
    }
    k = end;
  }
  return out;
}

}  // namespace

std::vector<std::vector<std::string>> simultaneous_starts(
    const std::vector<StartedMember>& members) {
  std::vector<std::vector<std::string>> groups;
  std::vector<bool> taken(members.size(), false);
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (taken[i] || members[i].first_start_us < 0) continue;
    std::vector<std::string> g{members[i].name};
    for (std::size_t j = i + 1; j < members.size(); ++j)
      if (!taken[j] && members[j].first_start_us == members[i].first_start_us &&
          members[j].spec == members[i].spec) {
        taken[j] = true;
        g.push_back(members[j].name);
      }
    if (g.size() > 1) groups.push_back(std::move(g));
  }
  return groups;
}

TraceFacts FactsBuilder::finish() {
  TraceFacts f = std::move(s_->f);
  sort_target_assignment_runs(f.records);
  for (const auto& [name, key] : s_->live) {
    if (key.empty()) continue;
    const auto it = s_->owned.find(key);
    if (it == s_->owned.end() || it->second.empty()) continue;
    f.final_assignment[name] = it->second;
  }
  for (const auto& [g, gens] : s_->generations)
    f.rebalances += static_cast<std::int64_t>(gens.size());
  for (auto& [p, ranges] : s_->delivered) {
    std::sort(ranges.begin(), ranges.end());
    std::int64_t covered_to = -1;  // highest offset delivered so far
    const std::int64_t low = ranges.front().first;
    for (const auto& [a, b] : ranges) {
      if (a <= covered_to) f.duplicates += std::min(b, covered_to) - a + 1;
      if (a > covered_to + 1 && covered_to >= low) f.lost += a - covered_to - 1;
      covered_to = std::max(covered_to, b);
    }
  }
  s_ = std::make_unique<State>();
  return f;
}

TraceFacts facts_of(const std::vector<json>& trace) {
  FactsBuilder b;
  tr::ReadStorage storage;
  for (const auto& e : trace) {
    const ojson line(e);
    b.add(int_of(line, "t_us"), reports::typed_event(line, storage), line);
  }
  return b.finish();
}

TraceFacts facts_of_stream(std::istream& in, const std::string& source, bool require_run_end) {
  FactsBuilder b;
  reports::TraceReader reader(in, source + ": ");
  reader.set_text_scan(false);  // every line's JSON is read below: parsed once
  std::size_t last = 0;
  bool ended = false;
  while (reader.next()) {
    last = reader.line_no();
    b.add(reader.t_us(), reader.event(), reader.line());
    ended = std::holds_alternative<tr::RunEnd>(reader.event());
  }
  if (in.bad()) throw std::runtime_error(fmt::format("{}: cannot be read", source));
  // A trace cut short at a line boundary is well-formed line by line: its last line, run.end,
  // is what says that it is whole.
  if (require_run_end && !ended) {
    if (last == 0)
      throw std::runtime_error(
          fmt::format("{}: empty (a trace ends with its run.end line)", source));
    throw std::runtime_error(
        fmt::format("{}: line {}: the trace ends without its run.end line: it was cut short "
                    "(record or copy it again)",
                    source, last));
  }
  return b.finish();
}

bool VariantComparison::passed() const {
  return failures().empty();
}

std::vector<std::string> VariantComparison::failures() const {
  std::vector<std::string> out;
  for (const auto& row : callbacks) {
    if (row.within) continue;
    std::string where = fmt::format("{} {} {}", row.callback.consumer, row.callback.kind,
                                    compact(row.callback.partitions));
    if (!row.sim_us) {
      out.push_back(fmt::format("callback {} only in the real run", where));
    } else if (std::any_of(row.real_us.begin(), row.real_us.end(),
                           [](const auto& r) { return !r; })) {
      out.push_back(
          fmt::format("callback {} (sim {} ms) missing in a real run", where, fmt_ms(row.sim_us)));
    } else {
      out.push_back(fmt::format("callback {} beyond ±{} ms", where, tolerance_ms));
    }
  }
  if (!records_equal)
    out.push_back(fmt::format("__consumer_offsets records differ: {}", first_record_difference));
  if (!final_equal) out.push_back("final assignment differs");
  if (!rebalances_equal)
    out.push_back(fmt::format("rebalances: sim {} real {}", rebalances_sim, rebalances_real));
  if (!duplicates_equal)
    out.push_back(fmt::format("duplicates: sim {} real {} (beyond ±{})", duplicates_sim,
                              duplicates_real, duplicates_tolerance));
  if (!lost_equal) out.push_back(fmt::format("lost: sim {} real {}", lost_sim, lost_real));
  for (const auto& d : share_count_differences) out.push_back("share " + d);
  if (share_events_beyond > 0)
    out.push_back(fmt::format("share redeliveries/archivals: {} beyond ±{} ms: {}",
                              share_events_beyond, share_tolerance_ms, first_share_difference));
  return out;
}

namespace {

/// "race: matches run 2" (run indices from 0).
std::string run_list(const std::vector<std::size_t>& runs) {
  std::vector<std::string> n;
  for (const auto k : runs) n.push_back(std::to_string(k + 1));
  return fmt::format("race: matches run{} {}", runs.size() > 1 ? "s" : "", fmt::join(n, ", "));
}

}  // namespace

RecordMatch match_records(const std::vector<Record>& a, const std::vector<Record>& b,
                          std::int64_t tolerance_us, std::int64_t window_us, const char* a_name,
                          const char* b_name) {
  RecordMatch out;
  const auto same = [window_us](const Record& x, const Record& y) {
    return x == y && std::llabs(x.t_us - y.t_us) <= window_us;
  };
  const auto m = lcs(a, b, same);
  out.matched = m.size();
  std::optional<std::size_t> first_beyond;
  for (std::size_t k = 0; k < m.size(); ++k) {
    if (std::llabs(a[m[k].first].t_us - b[m[k].second].t_us) <= tolerance_us) continue;
    ++out.beyond;
    if (!first_beyond) first_beyond = k;
  }
  const bool all = m.size() == a.size() && m.size() == b.size();
  out.equal = all && out.beyond == 0;
  if (!all) {
    // the first place where the two sequences part
    std::size_t i = 0, j = 0, k = 0;
    while (k < m.size() && m[k].first == i && m[k].second == j) ++i, ++j, ++k;
    if (!first_beyond || *first_beyond >= k) {
      out.first_index = i + 1;
      out.first_difference = fmt::format("at record {}: {} {}, {} {}", i + 1, a_name,
                                         i < a.size() ? a[i].str() : std::string("(none)"), b_name,
                                         j < b.size() ? b[j].str() : std::string("(none)"));
      return out;
    }
  }
  if (first_beyond) {
    const auto [i, j] = m[*first_beyond];
    out.first_index = i + 1;
    out.first_difference =
        fmt::format("at record {}: {}: {} at {} ms, {} at {} ms ({} ms), beyond ±{} ms", i + 1,
                    a[i].str(), a_name, fmt_ms(a[i].t_us), b_name, fmt_ms(b[j].t_us),
                    fmt_dev(b[j].t_us - a[i].t_us), tolerance_us / 1000);
  }
  return out;
}

namespace {

/// Whether the real runs differ on a callback beyond the tolerance: some have it and some not, or
/// two of them have it further apart than the tolerance.
bool runs_differ(const std::vector<std::optional<std::int64_t>>& real_us,
                 std::int64_t tolerance_us) {
  std::optional<std::int64_t> lo, hi;
  bool absent = false;
  for (const auto& r : real_us) {
    if (!r) {
      absent = true;
      continue;
    }
    lo = lo ? std::min(*lo, *r) : *r;
    hi = hi ? std::max(*hi, *r) : *r;
  }
  return lo && (absent || *hi - *lo > tolerance_us);
}

/// A fact of whole runs (final assignment, a count): the simulator's against run 1's; where it
/// differs from run 1 but equals another run's, the runs differ and the simulator has one outcome.
template <class T>
void race_of_fact(const std::string& what, const T& sim, const std::vector<T>& real,
                  std::vector<std::string>& races, bool& agrees) {
  agrees = real.empty() || sim == real[0];
  if (agrees) return;
  std::vector<std::size_t> same;
  for (std::size_t k = 1; k < real.size(); ++k)
    if (real[k] == sim) same.push_back(k);
  if (same.empty()) return;
  agrees = true;
  races.push_back(fmt::format("{}: {}", what, run_list(same)));
}

/// A count that agrees within `allowed` of run 1's, or, where the runs differ by more, of another
/// run's (a race, in `races`).
void race_of_count(const std::string& what, std::int64_t sim, const std::vector<std::int64_t>& real,
                   std::int64_t allowed, std::vector<std::string>& races, bool& agrees) {
  const auto near = [&](std::int64_t r) { return std::llabs(sim - r) <= allowed; };
  agrees = real.empty() || near(real[0]);
  if (agrees) return;
  std::vector<std::size_t> same;
  for (std::size_t k = 1; k < real.size(); ++k)
    if (near(real[k]) && std::llabs(real[k] - real[0]) > allowed) same.push_back(k);
  if (same.empty()) return;
  agrees = true;
  races.push_back(fmt::format("{}: {}", what, run_list(same)));
}

/// The simulator's __consumer_offsets records against every real run's: equal to all of them
/// agrees; equal to some, where the runs' own records differ, is a race; otherwise the first run
/// that differs says how.
void compare_records(VariantComparison& c, const TraceFacts& sim,
                     const std::vector<TraceFacts>& real, std::int64_t tol_us,
                     std::int64_t window_us) {
  const std::size_t runs = real.size();
  const auto name_of = [runs](std::size_t k) {
    return runs == 1 ? std::string("real") : fmt::format("run {}", k + 1);
  };
  // Each run's records, members of simultaneous starts in the simulator's order of arrival,
  // and each trace's close windows of simultaneous stops in their canonical order (the run's own
  // order of leaves listed with the races where it is not the simulator's).
  std::vector<Record> sim_records = sim.records;
  canonical_close_windows(sim_records, sim.simultaneous_stops);
  std::vector<std::vector<Record>> records(runs);
  for (std::size_t k = 0; k < runs; ++k) {
    std::string note;
    records[k] = in_simulator_order(sim.records, real[k].records, sim.simultaneous, note);
    records[k] = writes_in_simulator_order(sim.records, std::move(records[k]), note);
    for (const auto& stop : sim.simultaneous_stops) {
      const auto s = leave_order(sim.records, stop), r = leave_order(records[k], stop);
      if (s == r || r.empty()) continue;
      note += fmt::format("{}simultaneous stops of {}: left as {}", note.empty() ? "" : "; ",
                          fmt::join(stop.members, ", "), fmt::join(r, ", "));
    }
    canonical_close_windows(records[k], sim.simultaneous_stops);
    if (!note.empty()) c.races.push_back(fmt::format("{}: {}", name_of(k), note));
  }
  c.records_sim = sim_records.size();
  c.records_real = records[0].size();
  const auto m =
      match_records(sim_records, records[0], tol_us, window_us, "sim", name_of(0).c_str());
  c.records_matched = m.matched;
  c.records_beyond = m.beyond;
  // Every run's records against the simulator's: equal to all of them agrees; equal to some,
  // where the runs' own records differ, is a race; otherwise the first run that differs says how.
  std::vector<std::size_t> same;
  std::optional<RecordMatch> first_differing;
  for (std::size_t k = 0; k < runs; ++k) {
    auto mk = k == 0 ? m
                     : match_records(sim_records, records[k], tol_us, window_us, "sim",
                                     name_of(k).c_str());
    if (mk.equal)
      same.push_back(k);
    else if (!first_differing)
      first_differing = std::move(mk);
  }
  c.records_equal = same.size() == runs;
  if (first_differing) c.first_record_difference = first_differing->first_difference;
  if (runs > 1 && same.empty()) {
    // Different from every run: where it departs from each (for the table; no verdict).
    for (std::size_t k = 0; k < runs; ++k) {
      const auto mk = k == 0 ? m
                             : match_records(sim_records, records[k], tol_us, window_us, "sim",
                                             name_of(k).c_str());
      c.record_departures.push_back({k, mk.first_index, mk.first_difference});
    }
  }
  if (!c.records_equal && !same.empty()) {
    bool runs_differ_on_records = false;
    for (std::size_t k = 0; k < runs && !runs_differ_on_records; ++k)
      runs_differ_on_records =
          !match_records(records[same.front()], records[k], tol_us, window_us).equal;
    if (runs_differ_on_records) {
      c.records_equal = true;
      c.races.push_back(fmt::format("__consumer_offsets records: {} (otherwise {})", run_list(same),
                                    c.first_record_difference));
    }
  }
}

/// The final assignment and the counts (rebalances, duplicates, lost) against every real run's.
void compare_facts(VariantComparison& c, const std::string& variant, const TraceFacts& sim,
                   const std::vector<TraceFacts>& real) {
  const auto& r = real[0];
  const auto facts = [&](auto get) {
    std::vector<std::decay_t<decltype(get(sim))>> v;
    for (const auto& x : real) v.push_back(get(x));
    return v;
  };
  // A KafkaShareConsumer has no assignment(): a real share run has no final assignment to
  // compare (its group's assignment records are compared above).
  c.final_observed = variant != "share";
  const auto final_of = [](const TraceFacts& f) { return f.final_assignment; };
  if (c.final_observed)
    race_of_fact("final assignment", final_of(sim), facts(final_of), c.races, c.final_equal);
  c.final_sim = sim.final_assignment;
  c.final_real = r.final_assignment;
  const auto count = [&](const char* what, auto get, std::int64_t& s_out, std::int64_t& r_out,
                         bool& equal) {
    race_of_fact(what, get(sim), facts(get), c.races, equal);
    s_out = get(sim);
    r_out = get(r);
  };
  count(
      "rebalances", [](const TraceFacts& f) { return f.rebalances; }, c.rebalances_sim,
      c.rebalances_real, c.rebalances_equal);
  // Duplicates are the records re-read from a window of time (the commit before a revocation
  // to the revocation), so their count agrees within the records produced in the tolerance.
  c.duplicates_tolerance =
      static_cast<std::int64_t>(sim.produced_per_sec * static_cast<double>(c.tolerance_ms) / 1000);
  const auto dup_of = [](const TraceFacts& f) { return f.duplicates; };
  race_of_count("duplicates", sim.duplicates, facts(dup_of), c.duplicates_tolerance, c.races,
                c.duplicates_equal);
  c.duplicates_sim = sim.duplicates;
  c.duplicates_real = r.duplicates;
  count(
      "lost", [](const TraceFacts& f) { return f.lost; }, c.lost_sim, c.lost_real, c.lost_equal);
}

}  // namespace

namespace {

/// How far two independent binomial counts may differ: `sigmas` standard deviations of their
/// difference, x of n draws against y of m, each variance estimated from its own count
/// (k (1 - k/total)).
std::int64_t binomial_spread(std::int64_t sigmas, std::int64_t x, std::int64_t n, std::int64_t y,
                             std::int64_t m) {
  const auto variance = [](std::int64_t k, std::int64_t total) {
    return total > 0 ? static_cast<double>(k) *
                           (1.0 - static_cast<double>(k) / static_cast<double>(total))
                     : 0.0;
  };
  return static_cast<std::int64_t>(static_cast<double>(sigmas) *
                                   std::sqrt(variance(x, n) + variance(y, m)));
}

/// A share count of the simulator against run 1's (within max(share_count_min, share_count_pct
/// of it); `real` holds every run's, run 1 first). A count that the application's per-record
/// outcome draws decide (`draws`: the simulator's acknowledgements first, then each run's; empty
/// for other counts) agrees within the larger of that and the binomial spread of two independent
/// generators (docs/fidelity.md, finding 25). Where the real runs' own counts differ beyond the
/// tolerance, the count is a race the runs decide differently: a simulator within the tolerance
/// of another run, or between the runs' lowest and highest count, agrees (a count set by an
/// instant's phase, as the records a crashed member held acquired, takes any value the runs
/// span).
void compare_share_count(VariantComparison& c, const Tolerances& tol, const char* what,
                         std::int64_t s, const std::vector<std::int64_t>& real,
                         const std::vector<std::int64_t>& draws) {
  const auto allowed_of = [&](std::size_t k) {
    const std::int64_t pct = std::max(tol.share_count_min, real[k] * tol.share_count_pct / 100);
    if (draws.size() != real.size() + 1) return pct;
    return std::max(pct,
                    binomial_spread(tol.share_draw_sigmas, s, draws[0], real[k], draws[k + 1]));
  };
  const std::int64_t r = real[0], allowed = allowed_of(0);
  if (std::llabs(s - r) <= allowed) return;
  const auto [lo, hi] = std::minmax_element(real.begin(), real.end());
  if (*hi - *lo > allowed) {
    std::vector<std::size_t> near;
    for (std::size_t k = 1; k < real.size(); ++k)
      if (std::llabs(s - real[k]) <= allowed_of(k)) near.push_back(k);
    if (!near.empty()) {
      c.races.push_back(fmt::format("share {}: sim {}: {}", what, s, run_list(near)));
      return;
    }
    if (*lo <= s && s <= *hi) {
      c.races.push_back(
          fmt::format("share {}: sim {} between the runs' {} and {}", what, s, *lo, *hi));
      return;
    }
  }
  c.share_count_differences.push_back(
      fmt::format("{}: sim {} real {} (beyond ±{})", what, s, r, allowed));
}

/// How many callback rows some side lacks, and the rows in time order (the simulator's time,
/// else the first real run's that has it).
void order_callback_rows(VariantComparison& c) {
  c.callbacks_unmatched = static_cast<std::size_t>(
      std::count_if(c.callbacks.begin(), c.callbacks.end(), [](const CallbackRow& r) {
        return !r.sim_us ||
               std::any_of(r.real_us.begin(), r.real_us.end(), [](const auto& x) { return !x; });
      }));
  std::stable_sort(c.callbacks.begin(), c.callbacks.end(),
                   [](const CallbackRow& a, const CallbackRow& b) {
                     const auto first = [](const CallbackRow& r) {
                       if (r.sim_us) return *r.sim_us;
                       for (const auto& x : r.real_us)
                         if (x) return *x;
                       return std::int64_t{0};
                     };
                     return first(a) < first(b);
                   });
}

/// The share facts of sim against run 1's, the counts also against the further runs'.
void compare_share_runs(VariantComparison& c, const TraceFacts& sim,
                        const std::vector<TraceFacts>& real, const Tolerances& tol) {
  std::vector<ShareFacts> others;
  for (std::size_t k = 1; k < real.size(); ++k) others.push_back(real[k].share);
  compare_share(c, sim.share, real[0].share, tol, others);
}

}  // namespace

VariantComparison compare_variant(const std::string& variant, const TraceFacts& sim,
                                  const std::vector<TraceFacts>& real,
                                  const std::vector<std::string>& real_dirs,
                                  const Tolerances& tol) {
  VariantComparison c;
  c.variant = variant;
  c.real_dirs = real_dirs;
  // share groups heartbeat as KIP-848 members do, from the client's background thread
  c.tolerance_ms = variant == "consumer" ? tol.consumer_ms
                   : variant == "share"  ? tol.share_ms
                                         : tol.classic_ms;
  const std::int64_t tol_us = c.tolerance_ms * 1000;
  const std::int64_t window_us = tol.match_window_ms * 1000;
  const std::size_t runs = real.size();
  // Per consumer, each real run's callbacks aligned with the simulator's.
  std::set<std::string> consumers;
  for (const auto& cb : sim.callbacks) consumers.insert(cb.consumer);
  for (const auto& r : real)
    for (const auto& cb : r.callbacks) consumers.insert(cb.consumer);
  for (const auto& name : consumers) {
    std::vector<Callback> s;
    for (const auto& cb : sim.callbacks)
      if (cb.consumer == name) s.push_back(cb);
    std::vector<CallbackRow> rows;
    for (const auto& cb : s)
      rows.push_back({cb, cb.t_us, std::vector<std::optional<std::int64_t>>(runs), true, {}});
    const std::size_t sim_rows = rows.size();
    for (std::size_t k = 0; k < runs; ++k) {
      std::vector<Callback> r;
      for (const auto& cb : real[k].callbacks)
        if (cb.consumer == name) r.push_back(cb);
      std::vector<bool> matched(r.size(), false);
      // Same consumer, callback and partitions, and no further apart than the match window: a
      // callback seconds away is another invocation, not a late one.
      const auto same = [window_us](const Callback& x, const Callback& y) {
        return x == y && std::llabs(x.t_us - y.t_us) <= window_us;
      };
      for (const auto& [i, j] : lcs(s, r, same)) {
        rows[i].real_us[k] = r[j].t_us;
        matched[j] = true;
      }
      for (std::size_t j = 0; j < r.size(); ++j) {
        if (matched[j]) continue;
        // The same callback only in an earlier real run (not in the simulator) is one row.
        bool merged = false;
        for (std::size_t i = sim_rows; i < rows.size() && !merged; ++i) {
          auto& row = rows[i];
          if (row.real_us[k] || !(row.callback == r[j]) ||
              std::llabs(row.callback.t_us - r[j].t_us) > window_us)
            continue;
          row.real_us[k] = r[j].t_us;
          merged = true;
        }
        if (merged) continue;
        CallbackRow row{
            r[j], std::nullopt, std::vector<std::optional<std::int64_t>>(runs), false, {}};
        row.real_us[k] = r[j].t_us;
        rows.push_back(row);
      }
    }
    for (auto& row : rows) {
      const bool differ = runs_differ(row.real_us, tol_us);
      std::vector<std::size_t> outcome;  // the runs whose outcome is the simulator's
      for (std::size_t k = 0; k < runs; ++k) {
        const auto& r = row.real_us[k];
        if (row.sim_us ? r && std::llabs(*r - *row.sim_us) <= tol_us : !r) outcome.push_back(k);
      }
      if (!row.sim_us) {
        row.within = differ && !outcome.empty();
      } else {
        std::optional<std::int64_t> lo, hi;
        for (const auto& r : row.real_us) {
          if (!r) continue;
          lo = lo ? std::min(*lo, *r) : *r;
          hi = hi ? std::max(*hi, *r) : *r;
        }
        if (lo && hi) c.spread_us = std::max(c.spread_us, *hi - *lo);
        row.within = outcome.size() == runs || (differ && !outcome.empty());
        for (std::size_t k = 0; k < runs; ++k) {
          const auto& r = row.real_us[k];
          if (!r) continue;
          const std::int64_t dev = *r - *row.sim_us;
          ++c.deviations;
          if (std::llabs(dev) > tol_us) ++c.deviations_beyond;
          // a race's other outcome is no deviation of the simulator's
          if (row.within && std::llabs(dev) > tol_us) continue;
          if (std::llabs(dev) > std::llabs(c.worst_deviation_us) || c.worst_callback.empty()) {
            c.worst_deviation_us = dev;
            c.worst_callback =
                fmt::format("{} {} {} at {} ms", row.callback.consumer, row.callback.kind,
                            compact(row.callback.partitions), fmt_ms(row.sim_us));
          }
        }
      }
      if (row.within && outcome.size() < runs) {
        row.race = run_list(outcome);
        c.races.push_back(fmt::format("callback {} {} {}: {}", row.callback.consumer,
                                      row.callback.kind, compact(row.callback.partitions),
                                      row.race));
      }
    }
    for (auto& row : rows) c.callbacks.push_back(std::move(row));
  }
  order_callback_rows(c);
  if (!real.empty()) {
    const auto& r = real[0];
    compare_records(c, sim, real, tol_us, window_us);
    compare_facts(c, variant, sim, real);
    if (sim.share.present || r.share.present) compare_share_runs(c, sim, real, tol);
  }
  return c;
}

void compare_share(VariantComparison& c, const ShareFacts& sim, const ShareFacts& real,
                   const Tolerances& tol, const std::vector<ShareFacts>& other_runs) {
  c.share = true;
  c.share_sim = sim;
  c.share_real = real;
  c.share_tolerance_ms = tol.share_ms;
  // Each acknowledgement is one draw of the application's outcome (ACCEPT, RELEASE, REJECT with
  // the scenario's probabilities), and an acknowledgement archives by REJECT or by RELEASE at the
  // delivery count limit: those four counts are binomial draws of two different generators.
  const auto acknowledgements = [](const ShareFacts& f) {
    return f.accepted + f.released + f.rejected;
  };
  std::vector<std::int64_t> draws{acknowledgements(sim), acknowledgements(real)};
  for (const auto& o : other_runs) draws.push_back(acknowledgements(o));
  const auto count = [&](const char* what, std::int64_t ShareFacts::*field, bool drawn) {
    std::vector<std::int64_t> runs{real.*field};
    for (const auto& o : other_runs) runs.push_back(o.*field);
    compare_share_count(c, tol, what, sim.*field, runs,
                        drawn ? draws : std::vector<std::int64_t>{});
  };
  count("acquired", &ShareFacts::acquired, false);
  count("redelivered", &ShareFacts::redelivered, false);
  count("accepted", &ShareFacts::accepted, true);
  count("released", &ShareFacts::released, true);
  count("rejected", &ShareFacts::rejected, true);
  count("archived", &ShareFacts::archived, true);
  if (sim.max_delivery_count != real.max_delivery_count)
    c.share_count_differences.push_back(fmt::format(
        "highest delivery count: sim {} real {}", sim.max_delivery_count, real.max_delivery_count));
  // In order and in time, as the __consumer_offsets records: the same record redelivered (or
  // archived) with the same delivery count, no further apart than the match window.
  const std::int64_t tol_us = tol.share_ms * 1000, window_us = tol.match_window_ms * 1000;
  const auto same = [window_us](const ShareEvent& x, const ShareEvent& y) {
    return x == y && std::llabs(x.t_us - y.t_us) <= window_us;
  };
  const auto m = lcs(sim.events, real.events, same);
  c.share_events_matched = m.size();
  for (const auto& [i, j] : m) {
    const std::int64_t dev = real.events[j].t_us - sim.events[i].t_us;
    if (std::llabs(dev) <= tol_us) continue;
    if (c.share_events_beyond++ == 0)
      c.first_share_difference =
          fmt::format("{}: sim at {} ms, real at {} ms ({} ms)", sim.events[i].str(),
                      fmt_ms(sim.events[i].t_us), fmt_ms(real.events[j].t_us), fmt_dev(dev));
  }
  if (c.first_share_difference.empty() &&
      m.size() < std::max(sim.events.size(), real.events.size())) {
    std::size_t k = 0;
    while (k < m.size() && m[k].first == k && m[k].second == k) ++k;
    c.first_share_difference =
        fmt::format("first unmatched: sim {}, real {}",
                    k < sim.events.size() ? sim.events[k].str() : std::string("(none)"),
                    k < real.events.size() ? real.events[k].str() : std::string("(none)"));
  }
}

std::string render_table(const std::string& scenario, const VariantComparison& c) {
  std::string out = fmt::format(
      "{} / {}: simulator against {} real run(s) ({}), tolerance ±{} ms per callback\n", scenario,
      c.variant, c.real_dirs.size(), fmt::join(c.real_dirs, ", "), c.tolerance_ms);
  std::string header =
      fmt::format("  {:<8} {:<22} {:<34} {:>8}", "CONSUMER", "CALLBACK", "PARTITIONS", "SIM-MS");
  for (std::size_t k = 0; k < c.real_dirs.size(); ++k)
    header += fmt::format(" {:>9} {:>8}", fmt::format("REAL{}-MS", k + 1), "DEV-MS");
  out += header + "  RESULT\n";
  for (const auto& row : c.callbacks) {
    std::string line =
        fmt::format("  {:<8} {:<22} {:<34} {:>8}", row.callback.consumer, row.callback.kind,
                    compact(row.callback.partitions), fmt_ms(row.sim_us));
    for (const auto& r : row.real_us)
      line += fmt::format(" {:>9} {:>8}", fmt_ms(r),
                          r && row.sim_us ? fmt_dev(*r - *row.sim_us) : std::string("-"));
    line += !row.race.empty() ? "  " + row.race
            : row.within      ? "  ok"
            : !row.sim_us     ? "  only in real"
                              : "  DIFFERS";
    out += line + "\n";
  }
  for (const auto& l : summary_lines(c)) out += "  " + l + "\n";
  return out;
}

std::string departures_line(const std::vector<RecordDeparture>& departures) {
  if (departures.size() < 2) return "";
  const auto by_at = [](const RecordDeparture& x, const RecordDeparture& y) { return x.at < y.at; };
  const auto first = *std::min_element(departures.begin(), departures.end(), by_at);
  const auto last = *std::max_element(departures.begin(), departures.end(), by_at);
  if (first.at == last.at)
    return fmt::format("records against each run: every run first differs at record {}", last.at);
  std::vector<std::string> each;
  for (const auto& d : departures)
    each.push_back(fmt::format("run {} at record {}", d.run + 1, d.at));
  // Up to its record `last.at` the simulator has run `last.run`'s records, so where it first
  // departs from another run that run and run `last.run` decide the record differently.
  return fmt::format(
      "records against each run: first differs from {}; at record {} run {} has the simulator's "
      "record and run {} does not (the runs decide it differently); it departs from every run at "
      "record {}: {}",
      fmt::join(each, ", "), first.at, last.run + 1, first.run + 1, last.at, last.difference);
}

std::vector<std::string> summary_lines(const VariantComparison& c) {
  std::vector<std::string> out;
  out.push_back(fmt::format(
      "worst callback deviation: {} ms ({}); spread between real runs: {} ms; {} of {} deviations "
      "beyond ±{} ms",
      fmt_dev(c.worst_deviation_us), c.worst_callback.empty() ? "none matched" : c.worst_callback,
      fmt_ms(c.spread_us), c.deviations_beyond, c.deviations, c.tolerance_ms));
  out.push_back(fmt::format(
      "__consumer_offsets records (OffsetCommit aside): sim {}, real {}, {} matched in order, {} "
      "of them "
      "beyond ±{} ms in time{}",
      c.records_sim, c.records_real, c.records_matched, c.records_beyond, c.tolerance_ms,
      c.first_record_difference.empty() ? "" : "; first difference " + c.first_record_difference));
  if (const auto line = departures_line(c.record_departures); !line.empty()) out.push_back(line);
  if (!c.final_observed)
    out.push_back(
        "final assignment: not compared (a KafkaShareConsumer has no assignment(); the group's "
        "assignment records are)");
  else
    out.push_back(fmt::format("final assignment: {}",
                              c.final_sim == c.final_real
                                  ? "equal " + c.final_sim.dump()
                                  : "sim " + c.final_sim.dump() + " real " + c.final_real.dump()));
  out.push_back(
      fmt::format("rebalances: sim {} real {}; duplicates: sim {} real {} (±{}); lost: sim {} "
                  "real {}",
                  c.rebalances_sim, c.rebalances_real, c.duplicates_sim, c.duplicates_real,
                  c.duplicates_tolerance, c.lost_sim, c.lost_real));
  if (c.share) {
    const auto& s = c.share_sim;
    const auto& r = c.share_real;
    out.push_back(
        fmt::format("share records: acquired sim {} real {}; redelivered sim {} real {}; accepted "
                    "sim {} real {}; "
                    "released sim {} real {}; rejected sim {} real {}; archived sim {} real {}; "
                    "highest delivery "
                    "count sim {} real {}",
                    s.acquired, r.acquired, s.redelivered, r.redelivered, s.accepted, r.accepted,
                    s.released, r.released, s.rejected, r.rejected, s.archived, r.archived,
                    s.max_delivery_count, r.max_delivery_count));
    out.push_back(
        fmt::format("share redeliveries and archivals: sim {}, real {}, {} matched in order, {} of "
                    "them beyond ±{} ms{}",
                    s.events.size(), r.events.size(), c.share_events_matched, c.share_events_beyond,
                    c.share_tolerance_ms,
                    c.first_share_difference.empty() ? "" : "; " + c.first_share_difference));
  }
  for (const auto& r : c.races)
    out.push_back("race (the real runs differ beyond the tolerance), agrees: " + r);
  const auto f = c.failures();
  out.push_back(f.empty() ? "=> AGREES" : fmt::format("=> DIFFERS: {}", fmt::join(f, "; ")));
  return out;
}

std::string compact_partitions(const std::vector<std::string>& partitions) {
  return compact(partitions);
}

nlohmann::ordered_json to_json(const std::string& scenario, const VariantComparison& c) {
  nlohmann::ordered_json j;
  j["scenario"] = scenario;
  j["variant"] = c.variant;
  j["real"] = c.real_dirs;
  j["tolerance_ms"] = c.tolerance_ms;
  j["callbacks"] = c.callbacks.size();
  j["callbacks_unmatched"] = c.callbacks_unmatched;
  j["deviations"] = c.deviations;
  j["deviations_beyond_tolerance"] = c.deviations_beyond;
  j["worst_deviation_ms"] = static_cast<double>(c.worst_deviation_us) / 1000.0;
  j["worst_callback"] = c.worst_callback;
  j["spread_ms"] = static_cast<double>(c.spread_us) / 1000.0;
  j["records"] = {{"sim", c.records_sim},
                  {"real", c.records_real},
                  {"matched", c.records_matched},
                  {"beyond_tolerance", c.records_beyond},
                  {"first_difference", c.first_record_difference},
                  {"equal", c.records_equal}};
  if (!c.record_departures.empty()) {
    auto& d = j["records"]["departures"] = nlohmann::ordered_json::array();
    for (const auto& r : c.record_departures)
      d.push_back({{"run", r.run + 1}, {"at_record", r.at}, {"first_difference", r.difference}});
  }
  j["final_assignment"] = {{"sim", c.final_sim}, {"real", c.final_real}, {"equal", c.final_equal}};
  j["rebalances"] = {{"sim", c.rebalances_sim}, {"real", c.rebalances_real}};
  j["duplicates"] = {{"sim", c.duplicates_sim},
                     {"real", c.duplicates_real},
                     {"tolerance", c.duplicates_tolerance}};
  j["lost"] = {{"sim", c.lost_sim}, {"real", c.lost_real}};
  if (c.share) {
    const auto counts = [](const ShareFacts& f) {
      return nlohmann::ordered_json{{"acquired", f.acquired},
                                    {"redelivered", f.redelivered},
                                    {"accepted", f.accepted},
                                    {"released", f.released},
                                    {"rejected", f.rejected},
                                    {"archived", f.archived},
                                    {"max_delivery_count", f.max_delivery_count},
                                    {"events", f.events.size()}};
    };
    j["share"] = {{"sim", counts(c.share_sim)},
                  {"real", counts(c.share_real)},
                  {"count_differences", c.share_count_differences},
                  {"events_matched", c.share_events_matched},
                  {"events_beyond_tolerance", c.share_events_beyond},
                  {"first_difference", c.first_share_difference}};
  }
  j["races"] = c.races;
  j["passed"] = c.passed();
  j["failures"] = c.failures();
  return j;
}

}  // namespace rsim::compare
