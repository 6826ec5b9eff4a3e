#include "models/assignors/client_assignor.hpp"

#include <stdexcept>

#include "models/assignors/client_range.hpp"
#include "models/assignors/client_roundrobin.hpp"
#include "models/assignors/client_sticky.hpp"

namespace rsim::assignors {

bool is_client_assignor(const std::string& name) {
  return name == "range" || name == "roundrobin" || name == "sticky" ||
         name == "cooperative-sticky";
}

std::vector<RebalanceProtocol> supported_protocols(const std::string& name) {
  if (!is_client_assignor(name)) throw std::invalid_argument("unknown client assignor: " + name);
  // Kafka lists COOPERATIVE first for cooperative-sticky: the group picks the highest common one.
  if (name == "cooperative-sticky")
    return {RebalanceProtocol::Cooperative, RebalanceProtocol::Eager};
  return {RebalanceProtocol::Eager};
}

ClientAssignment assign_client(const std::string& name, const ClientAssignorInput& input) {
  if (name == "range") return assign_range(input);
  if (name == "roundrobin") return assign_roundrobin(input);
  if (name == "sticky") return assign_sticky(input, StickyFlavor::Eager).assignment;
  if (name == "cooperative-sticky")
    return assign_sticky(input, StickyFlavor::Cooperative).assignment;
  throw std::invalid_argument("unknown client assignor: " + name);
}

}  // namespace rsim::assignors
