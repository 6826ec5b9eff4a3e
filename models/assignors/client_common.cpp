#include "models/assignors/client_common.hpp"

#include "models/assignors/client_java_order.hpp"

namespace rsim::assignors::detail {

bool member_info_less(const ClientMember& a, const ClientMember& b) {
  if (a.group_instance_id && b.group_instance_id)
    return *a.group_instance_id < *b.group_instance_id;
  if (a.group_instance_id) return true;
  if (b.group_instance_id) return false;
  return a.member_id < b.member_id;
}

std::vector<std::size_t> subscription_order(const ClientAssignorInput& input) {
  std::vector<std::string> ids;
  ids.reserve(input.members.size());
  for (const auto& m : input.members) ids.push_back(m.member_id);
  return java::hash_map_order(ids);
}

const std::string* effective_rack(const ClientMember& member) {
  if (!member.rack || member.rack->empty()) return nullptr;
  return &*member.rack;
}

std::set<std::string> replica_racks(const ClientAssignorInput& input, const TopicPartition& tp) {
  const auto it = input.partition_racks.find(tp.topic);
  if (it == input.partition_racks.end() || tp.partition < 0 ||
      static_cast<std::size_t>(tp.partition) >= it->second.size()) {
    return {};
  }
  const auto& racks = it->second[static_cast<std::size_t>(tp.partition)];
  return {racks.begin(), racks.end()};
}

}  // namespace rsim::assignors::detail
