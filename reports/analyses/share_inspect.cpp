#include "reports/analyses/share_inspect.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/trace_reader.hpp"

namespace rsim::inspect {
namespace {

using json = nlohmann::json;
namespace tr = rsim::trace;

constexpr const char* kMissing = "-";  // ShareGroupCommand.MISSING_COLUMN_VALUE

std::pair<std::string, std::int32_t> split(const std::string& s) {
  const auto dash = s.rfind('-');
  return {s.substr(0, dash), static_cast<std::int32_t>(std::stol(s.substr(dash + 1)))};
}

std::string left(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

/// "\n" and the cells, each padded to its width (0: as is), separated by one space.
std::string row(const std::vector<std::pair<std::string, std::size_t>>& cells) {
  std::string out = "\n";
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += ' ';
    out += left(cells[i].first, cells[i].second);
  }
  return out;
}

struct Member {
  std::string consumer;
  std::string client_id;
  std::int32_t epoch = 0;
  std::vector<std::string> assigned;
};

struct PartitionState {
  std::int64_t start_offset = -1;
  std::int64_t delivery_complete = 0;
};

struct Group {
  std::string state = "Dead";
  std::int32_t epoch = 0;
  std::int32_t assignment_epoch = 0;
  std::map<std::string, Member> members;  // member id -> member
  std::map<std::pair<std::string, std::int32_t>, PartitionState> partitions;
};

/// ShareGroupCommand.getAssignmentString: "topic:0,1;other:2", topics sorted.
std::string assignment_string(const std::vector<std::string>& partitions) {
  std::map<std::string, std::vector<std::int32_t>> by_topic;
  for (const auto& p : partitions) {
    const auto [t, n] = split(p);
    by_topic[t].push_back(n);
  }
  std::vector<std::string> parts;
  for (auto& [t, ns] : by_topic) {
    std::sort(ns.begin(), ns.end());
    parts.push_back(fmt::format("{}:{}", t, fmt::join(ns, ",")));
  }
  return fmt::format("{}", fmt::join(parts, ";"));
}

}  // namespace

DescribeOutput describe_share_groups(const std::vector<std::string>& trace_lines,
                                     const DescribeOptions& options) {
  std::map<std::string, Group> groups;
  std::map<std::pair<std::string, std::int32_t>, std::int64_t> log_end;
  reports::TraceReader reader(trace_lines);
  while (reader.next()) {
    if (reader.t_us() > options.at_us) break;
    const tr::Event& ev = reader.event();
    if (const auto* leo = std::get_if<tr::LogEndOffset>(&ev)) {
      if (leo->partition != nullptr)
        log_end[{leo->partition->topic, leo->partition->partition}] = leo->log_end_offset;
    } else if (const auto* gs = std::get_if<tr::GroupStateChange>(&ev)) {
      std::string s(gs->state);
      if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
      groups[std::string(gs->group)].state = s;
    } else if (const auto* rec = std::get_if<tr::Record>(&ev)) {
      const json e = rec->value.object != nullptr ? json(*rec->value.object) : json::object();
      Group& g = groups[e.at("group").get<std::string>()];
      const std::string name = e.at("record").get<std::string>();
      const bool tombstone = e.value("tombstone", false);
      const std::string id = e.value("member_id", "");
      if (name == "ShareGroupMetadata") {
        g.epoch = e.at("epoch").get<std::int32_t>();
      } else if (name == "ShareGroupTargetAssignmentMetadata") {
        g.assignment_epoch = e.at("assignment_epoch").get<std::int32_t>();
      } else if (name == "ShareGroupMemberMetadata") {
        if (tombstone) {
          g.members.erase(id);
        } else {
          Member& m = g.members[id];
          m.consumer = e.value("consumer", "");
          m.client_id = e.value("client_id", "");
        }
      } else if (name == "ShareGroupCurrentMemberAssignment" && !tombstone &&
                 g.members.count(id) > 0) {
        g.members[id].epoch = e.at("member_epoch").get<std::int32_t>();
        g.members[id].assigned = e.at("assigned").get<std::vector<std::string>>();
      }
    } else if (const auto* st = std::get_if<tr::ShareStateRecord>(&ev);
               st != nullptr && st->topic_partition != nullptr) {
      Group& g = groups[std::string(st->group)];
      PartitionState& p =
          g.partitions[{st->topic_partition->topic, st->topic_partition->partition}];
      p.start_offset = st->start_offset;
      p.delivery_complete = st->delivery_complete_count;
    }
  }

  DescribeOutput result;
  for (const auto& group_id : options.groups) {
    const Group& g = groups[group_id];
    if (g.state == "Dead") {
      result.err += fmt::format("\nError: Share group '{}' does not exist.\n", group_id);
      continue;
    }
    const std::size_t gw = std::max<std::size_t>(15, group_id.size());
    const auto it = options.coordinator_of.find(group_id);
    const std::int32_t broker = it == options.coordinator_of.end() ? 0 : it->second;
    if (options.view == DescribeView::State) {
      if (g.state == "Empty")
        result.err += fmt::format("\nShare group '{}' has no active members.\n", group_id);
      const std::string coordinator = fmt::format("broker-{}:9092  ({})", broker, broker);
      const std::size_t cw = std::max<std::size_t>(25, coordinator.size());
      if (options.verbose) {
        result.out += row({{"GROUP", gw},
                           {"COORDINATOR (ID)", cw},
                           {"STATE", 15},
                           {"GROUP-EPOCH", 12},
                           {"ASSIGNMENT-EPOCH", 17},
                           {"#MEMBERS", 0}});
        result.out += row({{group_id, gw},
                           {coordinator, cw},
                           {g.state, 15},
                           {std::to_string(g.epoch), 12},
                           {std::to_string(g.assignment_epoch), 17},
                           {std::to_string(g.members.size()), 0}});
      } else {
        result.out +=
            row({{"GROUP", gw}, {"COORDINATOR (ID)", cw}, {"STATE", 15}, {"#MEMBERS", 0}});
        result.out += row({{group_id, gw},
                           {coordinator, cw},
                           {g.state, 15},
                           {std::to_string(g.members.size()), 0}});
      }
      result.out += "\n";
    } else if (options.view == DescribeView::Members) {
      if (g.state == "Empty")
        result.err += fmt::format("\nShare group '{}' has no active members.\n", group_id);
      if (g.members.empty()) continue;
      std::size_t iw = 15, hw = 15, cw = 15;
      for (const auto& [id, m] : g.members) {
        iw = std::max(iw, id.size());
        hw = std::max(hw, m.consumer.size() + 1);
        cw = std::max(cw, m.client_id.size());
      }
      const auto member_row = [&](const std::string& a, const std::string& b, const std::string& c,
                                  const std::string& d, const std::string& f, const std::string& h,
                                  const std::string& i) {
        std::vector<std::pair<std::string, std::size_t>> cells{
            {a, gw}, {b, iw}, {c, hw}, {d, cw}, {f, 12}};
        if (options.verbose) cells.emplace_back(h, 13);
        cells.emplace_back(i, 0);
        return row(cells);
      };
      result.out += member_row("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
                               "MEMBER-EPOCH", "ASSIGNMENT");
      for (const auto& [id, m] : g.members) {  // sorted by consumer id, as Kafka sorts them
        result.out += member_row(group_id, id, std::string("/").append(m.consumer), m.client_id,
                                 std::to_string(m.assigned.size()), std::to_string(m.epoch),
                                 assignment_string(m.assigned));
      }
      result.out += "\n";
    } else {
      if (g.partitions.empty()) {
        result.out += fmt::format("\nShare group '{}' has no offset information.\n", group_id);
        continue;
      }
      std::size_t tw = 15;
      for (const auto& [tp, p] : g.partitions) tw = std::max(tw, tp.first.size());
      const auto offset_row = [&](const std::string& a, const std::string& b, const std::string& c,
                                  const std::string& d, const std::string& f,
                                  const std::string& h) {
        std::vector<std::pair<std::string, std::size_t>> cells{{a, gw}, {b, tw}, {c, 10}};
        if (options.verbose) cells.emplace_back(d, 13);
        cells.emplace_back(f, 13);
        cells.emplace_back(h, 0);
        return row(cells);
      };
      result.out +=
          offset_row("GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "START-OFFSET", "LAG");
      for (const auto& [tp, p] : g.partitions) {
        std::string start = kMissing;
        std::string lag = kMissing;
        if (p.start_offset >= 0) {
          start = std::to_string(p.start_offset);
          const auto le = log_end.find(tp);
          if (le != log_end.end())
            lag = std::to_string(
                std::max<std::int64_t>(0, le->second - p.start_offset - p.delivery_complete));
        }
        result.out += offset_row(group_id, tp.first, std::to_string(tp.second), "0", start, lag);
      }
      result.out += "\n";
    }
  }
  return result;
}

std::vector<std::string> dump_share_state_partition(const std::vector<std::string>& trace_lines,
                                                    std::int32_t partition) {
  std::vector<std::string> out{fmt::format("Dumping __share_group_state-{}", partition),
                               "Log starting offset: 0"};
  reports::TraceReader reader(trace_lines);
  while (reader.next()) {
    const auto* r = std::get_if<tr::ShareStateRecord>(&reader.event());
    if (r == nullptr || r->partition != partition || r->topic_partition == nullptr) continue;
    const bool snapshot = r->record == "ShareSnapshot";
    nlohmann::ordered_json key{{"type", snapshot ? 0 : 1},
                               {"data",
                                {{"groupId", std::string(r->group)},
                                 {"topicId", simulated_topic_id(r->topic_partition->topic)},
                                 {"partition", r->topic_partition->partition}}}};
    nlohmann::ordered_json batches = nlohmann::ordered_json::array();
    for (const auto& b : r->state_batches) {
      batches.push_back({{"firstOffset", b.first_offset},
                         {"lastOffset", b.last_offset},
                         {"deliveryState", b.delivery_state},
                         {"deliveryCount", b.delivery_count}});
    }
    nlohmann::ordered_json data{{"snapshotEpoch", r->snapshot_epoch}};
    if (snapshot) data["stateEpoch"] = r->state_epoch.value_or(0);
    data["leaderEpoch"] = r->leader_epoch;
    data["startOffset"] = r->start_offset;
    data["deliveryCompleteCount"] = r->delivery_complete_count;
    data["stateBatches"] = batches;
    nlohmann::ordered_json payload{{"version", 0}, {"data", data}};
    out.push_back(fmt::format("| offset: {} CreateTime: {} key: {} payload: {}", r->offset,
                              reader.t_us() / 1000, key.dump(), payload.dump()));
  }
  return out;
}

}  // namespace rsim::inspect
