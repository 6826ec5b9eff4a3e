#include "models/assignors/server_group_view.hpp"

#include <algorithm>
#include <iterator>
#include <numeric>

namespace rsim::assignors::server_detail {

GroupView::GroupView(const ServerAssignorInput& input)
    : input_(input), member_resolution_(input.members.size(), 0) {
  topics_.resize(input.topics.size());
  by_name_.reserve(input.topics.size() * 2);
  by_id_.reserve(input.topics.size() * 2);
  for (std::size_t t = 0; t < input.topics.size(); ++t) {
    const ServerTopic& topic = input.topics[t];
    TopicView& view = topics_[t];
    view.partitions = std::max<std::int32_t>(topic.partitions, 0);
    view.uuid = server_java::parse_uuid(topic.id);
    view.java_hash =
        view.uuid ? server_java::uuid_hash(*view.uuid) : server_java::string_hash(topic.id);
    by_name_.emplace(topic.name, static_cast<int>(t));
    by_id_.emplace(topic.id, static_cast<int>(t));
  }
  std::vector<std::size_t> by_rank(input.topics.size());
  std::iota(by_rank.begin(), by_rank.end(), std::size_t{0});
  std::sort(by_rank.begin(), by_rank.end(),
            [&](std::size_t a, std::size_t b) { return input.topics[a].id < input.topics[b].id; });
  for (std::size_t r = 0; r < by_rank.size(); ++r) topics_[by_rank[r]].id_rank = r;
  seen_stamp_.assign(input.topics.size(), 0);
}

int GroupView::topic_by_id(std::string_view id) const {
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? -1 : it->second;
}

std::size_t GroupView::resolve(std::size_t member) {
  if (member_resolution_[member] != 0) return member_resolution_[member] - 1;
  const std::vector<std::string>& names = input_.members[member].subscribed_topics;
  // Members of one group mostly share a handful of subscriptions (often all the same), so an
  // equal list seen recently is reused instead of hashing every name of every member again.
  const std::size_t recent = std::min<std::size_t>(resolutions_.size(), 8);
  for (std::size_t k = 0; k < recent; ++k) {
    const std::size_t r = resolutions_.size() - 1 - k;
    if (*resolutions_[r].names == names) {
      member_resolution_[member] = r + 1;
      return r;
    }
  }
  Resolution resolution;
  resolution.names = &names;
  ++stamp_;
  for (const std::string& name : names) {
    const auto it = by_name_.find(name);
    if (it == by_name_.end()) continue;  // Kafka's TopicIds skip names missing from metadata
    const auto t = static_cast<std::size_t>(it->second);
    if (seen_stamp_[t] == stamp_) continue;
    seen_stamp_[t] = stamp_;
    resolution.topics.push_back(it->second);
  }
  resolution.sorted = resolution.topics;
  std::sort(resolution.sorted.begin(), resolution.sorted.end());
  resolution.by_rank = resolution.topics;
  std::sort(resolution.by_rank.begin(), resolution.by_rank.end(),
            [this](int a, int b) { return topic(a).id_rank < topic(b).id_rank; });
  resolutions_.push_back(std::move(resolution));
  member_resolution_[member] = resolutions_.size();
  return resolutions_.size() - 1;
}

const std::vector<int>& GroupView::subscription(std::size_t member) {
  return resolutions_[resolve(member)].topics;
}

const std::vector<int>& GroupView::sorted_subscription(std::size_t member) {
  return resolutions_[resolve(member)].sorted;
}

const std::vector<int>& GroupView::subscription_by_id(std::size_t member) {
  return resolutions_[resolve(member)].by_rank;
}

std::vector<int> GroupView::by_id(std::vector<int> topics) const {
  std::sort(topics.begin(), topics.end(),
            [this](int a, int b) { return topic(a).id_rank < topic(b).id_rank; });
  return topics;
}

std::vector<int> GroupView::names_in_java_order(std::size_t member,
                                                std::size_t& distinct_names) const {
  // ModernGroupMember keeps the names in a HashSet<String> built from the request's list
  // (`new HashSet<>(list)`); the TopicIds view iterates that set and resolves each name.
  const std::vector<std::string>& names = input_.members[member].subscribed_topics;
  std::vector<std::int32_t> name_hashes;
  name_hashes.reserve(names.size());
  for (const std::string& name : names) name_hashes.push_back(server_java::string_hash(name));
  const auto name_order =
      server_java::iteration_order(name_hashes, server_java::copy_capacity(names.size()));
  std::vector<int> topics;
  std::vector<char> seen(topics_.size(), 0);
  // Duplicates in the list collapse into the set's first entry.
  std::unordered_map<std::string_view, char> distinct;
  distinct.reserve(names.size() * 2);
  for (const std::size_t i : name_order) {
    if (!distinct.emplace(names[i], 1).second) continue;
    const auto it = by_name_.find(names[i]);
    if (it == by_name_.end()) continue;
    const auto t = static_cast<std::size_t>(it->second);
    if (seen[t] != 0) continue;
    seen[t] = 1;
    topics.push_back(it->second);
  }
  distinct_names = distinct.size();
  return topics;
}

std::vector<int> GroupView::topic_ids_view_order(std::size_t member) const {
  std::size_t distinct_names = 0;
  return names_in_java_order(member, distinct_names);
}

std::vector<int> GroupView::java_subscription_order(std::size_t member) const {
  // UniformHomogeneousAssignmentBuilder copies the TopicIds view into a HashSet<Uuid> sized by
  // the name count.
  std::size_t distinct_names = 0;
  const std::vector<int> topics = names_in_java_order(member, distinct_names);
  std::vector<std::int32_t> id_hashes;
  id_hashes.reserve(topics.size());
  for (const int t : topics) id_hashes.push_back(topic(t).java_hash);
  const auto id_order =
      server_java::iteration_order(id_hashes, server_java::copy_capacity(distinct_names));
  std::vector<int> ordered;
  ordered.reserve(topics.size());
  for (const std::size_t i : id_order) ordered.push_back(topics[i]);
  return ordered;
}

std::vector<TargetTopic> GroupView::target_in_java_order(std::size_t member) const {
  const ServerMember& m = input_.members[member];
  std::vector<TargetTopic> out;
  out.reserve(m.target.size());
  if (!m.target_topic_order.empty()) {
    for (const std::string& id : m.target_topic_order) {
      const auto it = m.target.find(id);
      if (it == m.target.end()) continue;
      out.push_back({topic_by_id(it->first), &it->second, &it->first});
    }
    return out;
  }
  // The coordinator's target comes from replaying a record into a default HashMap<Uuid, ...>;
  // entries that share a bucket keep their insertion order, taken here as topic-id order.
  std::vector<std::int32_t> hashes;
  hashes.reserve(m.target.size());
  for (const auto& [id, partitions] : m.target) {
    const int t = topic_by_id(id);
    out.push_back({t, &partitions, &id});
    hashes.push_back(t >= 0 ? topics_[static_cast<std::size_t>(t)].java_hash
                            : server_java::topic_id_hash(id));
  }
  const auto order =
      server_java::iteration_order(hashes, server_java::growth_capacity(m.target.size()));
  std::vector<TargetTopic> ordered;
  ordered.reserve(out.size());
  for (const std::size_t i : order) ordered.push_back(out[i]);
  return ordered;
}

std::vector<std::int32_t> GroupView::partitions_in_java_order(
    std::size_t member, const std::vector<std::int32_t>& partitions) const {
  if (!input_.members[member].target_topic_order.empty()) return partitions;
  // A HashSet<Integer> built from the record's list (Assignment.fromRecord).
  return server_java::int_set_order(partitions, server_java::copy_capacity(partitions.size()));
}

int GroupView::compare_ids(int a, int b) const {
  const TopicView& ta = topic(a);
  const TopicView& tb = topic(b);
  if (ta.uuid && tb.uuid) {
    if (ta.uuid->most != tb.uuid->most) return ta.uuid->most < tb.uuid->most ? -1 : 1;
    if (ta.uuid->least != tb.uuid->least) return ta.uuid->least < tb.uuid->least ? -1 : 1;
    return 0;
  }
  return server_java::compare_topic_ids(input_.topics[static_cast<std::size_t>(a)].id,
                                        input_.topics[static_cast<std::size_t>(b)].id);
}

MemberAssignment GroupView::make_assignment(
    std::vector<std::pair<int, std::vector<std::int32_t>>>& parts) const {
  const auto by_rank = [&](const auto& a, const auto& b) {
    return topic(a.first).id_rank < topic(b.first).id_rank;
  };
  if (!std::is_sorted(parts.begin(), parts.end(), by_rank)) {
    std::sort(parts.begin(), parts.end(), by_rank);
  }
  MemberAssignment out;
  int last = -1;
  for (auto& [t, partitions] : parts) {
    if (partitions.empty()) continue;
    // Kept and newly added partitions of one topic may arrive unsorted or in two entries.
    if (!std::is_sorted(partitions.begin(), partitions.end())) {
      std::sort(partitions.begin(), partitions.end());
    }
    if (t == last) {
      auto& merged = std::prev(out.end())->second;
      const auto middle = merged.insert(merged.end(), partitions.begin(), partitions.end());
      std::inplace_merge(merged.begin(), middle, merged.end());
      continue;
    }
    out.emplace_hint(out.end(), input_.topics[static_cast<std::size_t>(t)].id,
                     std::move(partitions));
    last = t;
  }
  return out;
}

}  // namespace rsim::assignors::server_detail
