// The share-partition state machine on its own (kafka-share-groups.md §5): acquisition with
// delivery counts and locks, ACCEPT/RELEASE/REJECT/RENEW, lock expiry, the delivery limit, the
// in-flight window and SPSO/SPEO, with Kafka's defaults (lock 30000 ms, limit 5, 2000 locks).
#include <doctest/doctest.h>

#include "models/coordinator/share_partition.hpp"

using namespace rsim;

namespace {
constexpr std::int32_t kM1 = 1;
constexpr std::int32_t kM2 = 2;

SharePartition fresh(std::int64_t start = 0) {
  return SharePartition(SharePartitionConfig{}, start);
}
}  // namespace

TEST_CASE("share partition: acquisition counts a delivery and locks for 30000 ms") {
  SharePartition sp = fresh(100);  // share.auto.offset.reset=latest put SPSO at the log end
  CHECK(sp.start_offset() == 100);
  CHECK(sp.end_offset() == 100);
  CHECK(sp.in_flight() == 0);
  const auto got = sp.acquire(kM1, 500, 110, sim::ms(1000));
  REQUIRE(got.size() == 1);
  CHECK(got[0] == AcquiredRecords{100, 109, 1});
  CHECK(sp.end_offset() == 109);
  CHECK(sp.in_flight() == 10);
  CHECK(sp.lock_deadline(105) == sim::ms(31000));
  CHECK(sp.state(105) == RecordState::ACQUIRED);
  // Nothing more to acquire until the log grows or a record comes back.
  CHECK(sp.acquire(kM2, 500, 110, sim::ms(1000)).empty());
  CHECK(!sp.can_acquire(110));
  // max.poll.records caps a fetch.
  CHECK(sp.acquire(kM2, 4, 200, sim::ms(1000)) == std::vector<AcquiredRecords>{{110, 113, 1}});
}

TEST_CASE("share partition: ACCEPT is terminal, SPSO moves once the write completes") {
  SharePartition sp = fresh();
  sp.acquire(kM1, 500, 10, sim::ms(0));
  const ShareChange ack = sp.acknowledge(kM1, 0, 4, AcknowledgeType::ACCEPT, sim::ms(5));
  CHECK(ack.error == ErrorCode::NONE);
  CHECK(ack.persist == std::vector<PersistedBatch>{{0, 4, RecordState::ACKNOWLEDGED, 1}});
  CHECK(sp.start_offset() == 0);  // two-phase: not committed yet
  // Acknowledging the same records again is refused: nothing is acknowledged twice.
  CHECK(sp.acknowledge(kM1, 0, 4, AcknowledgeType::ACCEPT, sim::ms(6)).error ==
        ErrorCode::INVALID_RECORD_STATE);
  sp.commit(ack.first_offset, ack.last_offset);
  CHECK(sp.start_offset() == 5);
  CHECK(sp.in_flight() == 5);
  CHECK(sp.acknowledge(kM1, 0, 4, AcknowledgeType::ACCEPT, sim::ms(7)).error ==
        ErrorCode::NONE);  // below SPSO: ignored
  // Another member cannot acknowledge what M1 holds.
  CHECK(sp.acknowledge(kM2, 5, 9, AcknowledgeType::ACCEPT, sim::ms(8)).error ==
        ErrorCode::INVALID_RECORD_STATE);
}

TEST_CASE("share partition: a lock that expires makes the records available at once, count kept") {
  SharePartition sp = fresh();
  sp.acquire(kM1, 500, 3, sim::ms(2000));
  const sim::SimTime deadline = sp.lock_deadline(0);
  CHECK(deadline == sim::ms(32000));
  const ShareChange expired = sp.expire_locks(0, 2, deadline);
  CHECK(expired.persist == std::vector<PersistedBatch>{{0, 2, RecordState::AVAILABLE, 1}});
  CHECK(sp.state(0) == RecordState::AVAILABLE);
  CHECK(sp.delivery_count(0) == 1);
  CHECK(sp.next_fetch_offset() == 0);
  // The next fetch, by anyone, gets them with delivery count 2.
  CHECK(sp.acquire(kM2, 500, 3, sim::ms(32000)) == std::vector<AcquiredRecords>{{0, 2, 2}});
  // A stale timer (the old deadline) does nothing to the re-acquired records.
  CHECK(sp.expire_locks(0, 2, deadline).changes.empty());
  CHECK(sp.lock_deadline(0) == sim::ms(62000));
}

TEST_CASE("share partition: RENEW restarts the lock, RELEASE and REJECT") {
  SharePartition sp = fresh();
  sp.acquire(kM1, 500, 4, sim::ms(0));
  CHECK(sp.acknowledge(kM1, 0, 0, AcknowledgeType::RENEW, sim::ms(20000)).persist.empty());
  CHECK(sp.lock_deadline(0) == sim::ms(50000));
  CHECK(sp.expire_locks(0, 0, sim::ms(30000)).changes.empty());
  const ShareChange release = sp.acknowledge(kM1, 1, 1, AcknowledgeType::RELEASE, sim::ms(1));
  CHECK(release.persist == std::vector<PersistedBatch>{{1, 1, RecordState::AVAILABLE, 1}});
  CHECK(sp.next_fetch_offset() == 4);  // mid-write: not fetchable yet
  sp.commit(1, 1);
  CHECK(sp.next_fetch_offset() == 1);
  const ShareChange reject = sp.acknowledge(kM1, 2, 2, AcknowledgeType::REJECT, sim::ms(1));
  CHECK(reject.persist == std::vector<PersistedBatch>{{2, 2, RecordState::ARCHIVED, 1}});
  sp.commit(2, 2);
  CHECK(sp.state(2) == RecordState::ARCHIVED);
}

TEST_CASE("share partition: a record delivered delivery.count.limit (5) times is archived") {
  SharePartition sp = fresh();
  sim::SimTime now = sim::ms(0);
  for (int delivery = 1; delivery <= 5; ++delivery) {
    const auto got = sp.acquire(kM1, 500, 1, now);
    REQUIRE(got.size() == 1);
    CHECK(got[0].delivery_count == delivery);
    const ShareChange r = sp.acknowledge(kM1, 0, 0, AcknowledgeType::RELEASE, now);
    CHECK(r.persist[0].state == (delivery < 5 ? RecordState::AVAILABLE : RecordState::ARCHIVED));
    sp.commit(0, 0);
    now += sim::ms(10);
  }
  CHECK(sp.start_offset() == 1);  // archived: SPSO moved past it
  CHECK(sp.acquire(kM1, 500, 1, now).empty());
}

TEST_CASE("share partition: often-delivered records are throttled, the last delivery goes alone") {
  SharePartition sp = fresh();
  sp.acquire(kM1, 500, 4, sim::ms(0));
  // Below L = max(2, ceil(5 / 2)) = 3 deliveries the four records come back together.
  for (int round = 0; round < 2; ++round) {
    sp.expire_locks(0, 3, sp.lock_deadline(0));
    CHECK(sp.acquire(kM1, 500, 4, sim::ms(0)) == std::vector<AcquiredRecords>{{0, 3, round + 2}});
  }
  // Delivered 3 times: one per fetch from now on.
  sp.expire_locks(0, 3, sp.lock_deadline(0));
  CHECK(sp.acquire(kM1, 500, 4, sim::ms(0)) == std::vector<AcquiredRecords>{{0, 0, 4}});
  CHECK(sp.acquire(kM1, 500, 4, sim::ms(0)) == std::vector<AcquiredRecords>{{1, 1, 4}});
}

TEST_CASE("share partition: the in-flight window stops new acquisitions at 2000 records") {
  SharePartition sp = fresh();
  sim::SimTime now = sim::ms(0);
  std::int64_t acquired = 0;
  for (int i = 0; i < 5; ++i) {
    for (const auto& a : sp.acquire(kM1, 500, 10000, now))
      acquired += a.last_offset - a.first_offset + 1;
  }
  CHECK(acquired == 2000);
  CHECK(sp.in_flight() == 2000);
  CHECK(sp.end_offset() == 1999);
  CHECK(!sp.can_acquire(10000));
  // One stuck record at SPSO keeps the window full even when the rest is acknowledged.
  const ShareChange ack = sp.acknowledge(kM1, 1, 1999, AcknowledgeType::ACCEPT, now);
  sp.commit(ack.first_offset, ack.last_offset);
  CHECK(sp.start_offset() == 0);
  CHECK(sp.in_flight() == 2000);
  CHECK(sp.acquire(kM2, 500, 10000, now).empty());
  const ShareChange first = sp.acknowledge(kM1, 0, 0, AcknowledgeType::ACCEPT, now);
  sp.commit(first.first_offset, first.last_offset);
  CHECK(sp.start_offset() == 2000);
  CHECK(sp.in_flight() == 0);
  CHECK(sp.acquire(kM2, 500, 10000, now) == std::vector<AcquiredRecords>{{2000, 2499, 1}});
}

TEST_CASE("share partition: a closed session releases everything its member holds") {
  SharePartition sp = fresh();
  sp.acquire(kM1, 3, 10, sim::ms(0));
  sp.acquire(kM2, 3, 10, sim::ms(0));
  const ShareChange r = sp.release_member(kM1);
  CHECK(r.persist == std::vector<PersistedBatch>{{0, 2, RecordState::AVAILABLE, 1}});
  sp.commit(r.first_offset, r.last_offset);
  CHECK(sp.state(3) == RecordState::ACQUIRED);
  // The released records come first, then the log past SPEO.
  CHECK(sp.acquire(kM2, 500, 10, sim::ms(0)) == std::vector<AcquiredRecords>{{0, 2, 2}, {6, 9, 1}});
}
