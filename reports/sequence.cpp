#include "reports/sequence.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace reports {

bool normal_round_trip(const std::string& api, const std::string& error) {
  return api == "JoinGroup" && error == "MEMBER_ID_REQUIRED";
}

Sequence sequence_between(const Timeline& t, const std::string& group, std::int64_t from_us,
                          std::int64_t to_us, std::size_t max_rows) {
  Sequence seq;
  std::set<std::string> members;
  for (const auto& lane : t.lanes)
    if (group.empty() || lane.group == group) members.insert(lane.consumer);
  // (time, arrival order) keeps rows of one instant stable. A row's text is built only when the
  // row is shown: a join storm's window holds ten thousand members' requests.
  enum class Source { Sent, Answered, Segment, Callback, Owned };
  struct Keyed {
    std::int64_t t;
    std::size_t order;
    Source source;
    const void* item;
    const std::string* over;  // the lane's consumer, or the group's coordinator
  };
  std::vector<Keyed> rows;
  std::set<std::string> servers;
  for (const Message* m : messages_between(t, from_us, to_us)) {
    if (!members.count(m->client)) continue;
    servers.insert(m->server);
    if (m->send_us >= from_us && m->send_us <= to_us)
      rows.push_back({m->send_us, rows.size(), Source::Sent, m, nullptr});
    if (m->recv_us >= from_us && m->recv_us <= to_us)
      rows.push_back({m->recv_us, rows.size(), Source::Answered, m, nullptr});
  }
  const std::string coordinator = servers.empty() ? "broker-0" : *servers.begin();
  for (const auto& band : t.groups) {
    if (!group.empty() && band.group != group) continue;
    for (const auto& s : band.segments)
      if (s.start_us >= from_us && s.start_us <= to_us)
        rows.push_back({s.start_us, rows.size(), Source::Segment, &s, &coordinator});
  }
  for (const auto& lane : t.lanes) {
    if (!members.count(lane.consumer)) continue;
    // A lane's spans and ownerships are in order of their start.
    auto s = std::lower_bound(lane.spans.begin(), lane.spans.end(), from_us,
                              [](const Span& x, std::int64_t v) { return x.start_us < v; });
    for (; s != lane.spans.end() && s->start_us <= to_us; ++s)
      if (s->kind == "callback")
        rows.push_back({s->start_us, rows.size(), Source::Callback, &*s, &lane.consumer});
    auto o = std::lower_bound(lane.owned.begin(), lane.owned.end(), from_us,
                              [](const Ownership& x, std::int64_t v) { return x.start_us < v; });
    for (; o != lane.owned.end() && o->start_us <= to_us; ++o)
      rows.push_back({o->start_us, rows.size(), Source::Owned, &*o, &lane.consumer});
  }
  const auto earlier = [](const Keyed& a, const Keyed& b) {
    return a.t != b.t ? a.t < b.t : a.order < b.order;
  };
  const std::size_t shown = std::min(rows.size(), max_rows);
  std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(shown), rows.end(),
                    earlier);
  seq.omitted = rows.size() - shown;
  rows.resize(shown);
  auto row_of = [&](const Keyed& k) -> SequenceRow {
    switch (k.source) {
      case Source::Sent: {
        const auto* m = static_cast<const Message*>(k.item);
        return {m->send_us,
                SequenceRow::Kind::Request,
                m->client,
                m->server,
                m->api + (m->detail.empty() ? "" : " " + m->detail),
                false,
                m->detail};
      }
      case Source::Answered: {
        const auto* m = static_cast<const Message*>(k.item);
        return {m->recv_us,
                SequenceRow::Kind::Response,
                m->server,
                m->client,
                m->api + " " + m->error + (m->reply.empty() ? "" : " " + m->reply),
                m->error != "NONE" && !m->error.empty() && !normal_round_trip(m->api, m->error),
                m->reply};
      }
      case Source::Segment:
        return {k.t,
                SequenceRow::Kind::Note,
                *k.over,
                "",
                "group " + static_cast<const GroupSegment*>(k.item)->label,
                false};
      case Source::Callback:
        return {k.t,  SequenceRow::Kind::Note, *k.over, "", static_cast<const Span*>(k.item)->label,
                false};
      case Source::Owned: {
        std::vector<std::string> names;
        for (const int p : static_cast<const Ownership*>(k.item)->partitions)
          names.push_back(t.partitions[static_cast<std::size_t>(p)]);
        return {k.t,  SequenceRow::Kind::Note, *k.over, "", "owns " + compress_partitions(names),
                false};
      }
    }
    return {};
  };
  std::set<std::string> used;
  for (const auto& k : rows) {
    SequenceRow row = row_of(k);
    used.insert(row.from);
    if (!row.to.empty()) used.insert(row.to);
    seq.rows.push_back(std::move(row));
  }
  for (const auto& lane : t.lanes)
    if (used.count(lane.consumer)) seq.participants.push_back(lane.consumer);
  for (const auto& s : servers)
    if (used.count(s)) seq.participants.push_back(s);
  if (seq.participants.empty() || std::find(seq.participants.begin(), seq.participants.end(),
                                            coordinator) == seq.participants.end())
    if (used.count(coordinator)) seq.participants.push_back(coordinator);
  return seq;
}

}  // namespace reports
