#include "models/assignors/server_assignor.hpp"

#include <map>

#include "models/assignors/server_group_view.hpp"

namespace rsim::assignors {

bool is_server_assignor(const std::string& name) {
  return name == "uniform" || name == "range";
}

ServerAssignment assign_server(const std::string& name, const ServerAssignorInput& input) {
  if (!is_server_assignor(name)) {
    throw std::invalid_argument("unknown server assignor: " + name);
  }
  if (input.members.empty()) return {};
  server_detail::GroupView group(input);
  if (name == "range") return server_detail::range_assign(group);
  if (input.subscription_type == SubscriptionType::Homogeneous) {
    return server_detail::uniform_homogeneous(group);
  }
  return server_detail::uniform_heterogeneous(group);
}

SubscriptionType subscription_type_by_names(const std::vector<ServerMember>& members) {
  std::map<std::string, std::size_t> subscribers;
  for (const ServerMember& member : members) {
    std::map<std::string, bool> mine;  // a name listed twice counts once
    for (const std::string& topic : member.subscribed_topics) {
      if (mine.emplace(topic, true).second) ++subscribers[topic];
    }
  }
  for (const auto& [topic, count] : subscribers) {
    if (count != members.size()) return SubscriptionType::Heterogeneous;
  }
  return SubscriptionType::Homogeneous;
}

}  // namespace rsim::assignors
