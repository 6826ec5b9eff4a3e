#include "models/assignors/client_sticky.hpp"

#include <stdexcept>

namespace rsim::assignors {

StickyOutcome assign_sticky(const ClientAssignorInput&, StickyFlavor) {
  throw std::logic_error("sticky assignor not implemented yet");
}

}  // namespace rsim::assignors
