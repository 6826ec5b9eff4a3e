#include "models/protocol/share_records.hpp"

namespace rsim {

const char* to_string(RecordState state) {
  switch (state) {
    case RecordState::AVAILABLE:
      return "AVAILABLE";
    case RecordState::ACQUIRED:
      return "ACQUIRED";
    case RecordState::ACKNOWLEDGED:
      return "ACKNOWLEDGED";
    case RecordState::ARCHIVING:
      return "ARCHIVING";
    case RecordState::ARCHIVED:
      return "ARCHIVED";
  }
  return "?";
}

const char* to_string(AcknowledgeType type) {
  switch (type) {
    case AcknowledgeType::GAP:
      return "GAP";
    case AcknowledgeType::ACCEPT:
      return "ACCEPT";
    case AcknowledgeType::RELEASE:
      return "RELEASE";
    case AcknowledgeType::REJECT:
      return "REJECT";
    case AcknowledgeType::RENEW:
      return "RENEW";
  }
  return "?";
}

}  // namespace rsim
