#include "reports/sequence.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace reports {

Sequence sequence_between(const Timeline& t, const std::string& group, std::int64_t from_us, std::int64_t to_us,
                          std::size_t max_rows) {
  Sequence seq;
  std::set<std::string> members;
  for (const auto& lane : t.lanes)
    if (group.empty() || lane.group == group) members.insert(lane.consumer);
  // (time, order of kind within one instant, arrival order) keeps rows of one instant stable.
  struct Keyed {
    std::int64_t t;
    std::size_t order;
    SequenceRow row;
  };
  std::vector<Keyed> rows;
  std::set<std::string> servers;
  for (const Message* m : messages_between(t, from_us, to_us)) {
    if (!members.count(m->client)) continue;
    servers.insert(m->server);
    if (m->send_us >= from_us && m->send_us <= to_us)
      rows.push_back({m->send_us, rows.size(),
                      {m->send_us, SequenceRow::Kind::Request, m->client, m->server,
                       m->api + (m->detail.empty() ? "" : " " + m->detail), false}});
    if (m->recv_us >= from_us && m->recv_us <= to_us)
      rows.push_back({m->recv_us, rows.size(),
                      {m->recv_us, SequenceRow::Kind::Response, m->server, m->client, m->api + " " + m->error,
                       m->error != "NONE" && !m->error.empty()}});
  }
  const std::string coordinator = servers.empty() ? "broker-0" : *servers.begin();
  for (const auto& band : t.groups) {
    if (!group.empty() && band.group != group) continue;
    for (const auto& s : band.segments)
      if (s.start_us >= from_us && s.start_us <= to_us)
        rows.push_back({s.start_us, rows.size(), {s.start_us, SequenceRow::Kind::Note, coordinator, "", "group " + s.label, false}});
  }
  for (const auto& lane : t.lanes) {
    if (!members.count(lane.consumer)) continue;
    for (const auto& s : lane.spans)
      if (s.kind == "callback" && s.start_us >= from_us && s.start_us <= to_us)
        rows.push_back({s.start_us, rows.size(), {s.start_us, SequenceRow::Kind::Note, lane.consumer, "", s.label, false}});
    for (const auto& o : lane.owned)
      if (o.start_us >= from_us && o.start_us <= to_us) {
        std::vector<std::string> names;
        for (const int p : o.partitions) names.push_back(t.partitions[static_cast<std::size_t>(p)]);
        rows.push_back({o.start_us, rows.size(), {o.start_us, SequenceRow::Kind::Note, lane.consumer, "", "owns " + compress_partitions(names), false}});
      }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Keyed& a, const Keyed& b) {
    return a.t != b.t ? a.t < b.t : a.order < b.order;
  });
  std::set<std::string> used;
  for (auto& k : rows) {
    if (seq.rows.size() >= max_rows) {
      ++seq.omitted;
      continue;
    }
    used.insert(k.row.from);
    if (!k.row.to.empty()) used.insert(k.row.to);
    seq.rows.push_back(std::move(k.row));
  }
  for (const auto& lane : t.lanes)
    if (used.count(lane.consumer)) seq.participants.push_back(lane.consumer);
  for (const auto& s : servers)
    if (used.count(s)) seq.participants.push_back(s);
  if (seq.participants.empty() || std::find(seq.participants.begin(), seq.participants.end(), coordinator) == seq.participants.end())
    if (used.count(coordinator)) seq.participants.push_back(coordinator);
  return seq;
}

}  // namespace reports
