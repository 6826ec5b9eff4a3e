// The vocabulary of a share-partition's records (KIP-932) that the share requests carry and the
// share-partition keeps: a record's state, an acknowledgement's type, an acquired range.
#pragma once
#include <cstdint>

namespace rsim {

/// Kafka's RecordState (server/share/fetch/RecordState.java) with its persisted byte values.
enum class RecordState : std::uint8_t {
  AVAILABLE = 0,
  ACQUIRED = 1,
  ACKNOWLEDGED = 2,
  ARCHIVING = 3,
  ARCHIVED = 4,
};
const char* to_string(RecordState state);

/// Kafka's AcknowledgeType with its wire ids; GAP (0) marks an offset with no record.
enum class AcknowledgeType : std::uint8_t {
  GAP = 0,
  ACCEPT = 1,
  RELEASE = 2,
  REJECT = 3,
  RENEW = 4
};
const char* to_string(AcknowledgeType type);

/// ShareFetch's AcquiredRecords: a range handed to one member, all with one delivery count.
struct AcquiredRecords {
  std::int64_t first_offset = 0;
  std::int64_t last_offset = 0;
  std::int32_t delivery_count = 0;
  bool operator==(const AcquiredRecords&) const = default;
};

}  // namespace rsim
