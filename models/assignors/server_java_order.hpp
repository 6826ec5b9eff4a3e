// Java hashing and iteration order as Kafka's group coordinator meets them: Uuid and String
// hash codes, Uuid.compareTo, and the bucket order of HashMap/HashSet tables. The server-side
// assignors use it where Kafka's results depend on Java's iteration order; nothing else does.
// It does not model tree bins (a bucket past 8 entries), which well-spread hashes never reach.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rsim::assignors::server_java {

/// A Kafka Uuid: two signed 64-bit halves, as Java holds them.
struct Uuid {
  std::int64_t most = 0;
  std::int64_t least = 0;
};

/// Decodes Kafka's 22-character url-safe base64 form; nullopt for anything else.
std::optional<Uuid> parse_uuid(std::string_view text);
/// Uuid.hashCode(): the two 32-bit halves of (most XOR least), XORed.
std::int32_t uuid_hash(const Uuid& id);
/// String.hashCode() over UTF-16 code units (input is UTF-8).
std::int32_t string_hash(std::string_view utf8);
/// The hash Java would use for a topic id given as a string: the Uuid's when it parses as one.
std::int32_t topic_id_hash(std::string_view id);
/// Uuid.compareTo for ids that parse, String.compareTo order otherwise (parsed ids first).
int compare_topic_ids(std::string_view a, std::string_view b);

/// HashMap's bucket of a key hash in a table of `capacity` (a power of two) buckets.
std::size_t bucket_of(std::int32_t hash, std::size_t capacity);
/// Table size of `new HashSet<>(collection)` / `new HashMap<>(map)` for `n` elements.
std::size_t copy_capacity(std::size_t n);
/// Table size of a default-constructed HashMap after `n` puts (16, doubling past 3/4 full).
std::size_t growth_capacity(std::size_t n);

/// Positions 0..hashes.size()-1 in the order a table of `capacity` buckets iterates keys with
/// these hashes, inserted in position order (bucket ascending, then insertion order).
std::vector<std::size_t> iteration_order(const std::vector<std::int32_t>& hashes,
                                         std::size_t capacity);
/// A java.util.HashSet<Integer> of `capacity` buckets holding `inserted` (distinct values, in the
/// order they were added; removals leave the others in order): its iteration order, bucket
/// ascending (Integer.hashCode is the value), each bucket in insertion order, whatever the table's
/// growth in between (a resize splits a bucket keeping its order).
std::vector<std::int32_t> int_set_order(std::vector<std::int32_t> inserted, std::size_t capacity);
/// HashSet.add's growth: the capacity after a set of `capacity` buckets grew to `size` elements
/// (doubled whenever the size passes three quarters of it).
std::size_t grown_capacity(std::size_t capacity, std::size_t size);

/// The iteration order of Kafka's timeline hash table (org.apache.kafka.timeline.BaseHashTable,
/// under the group coordinator's TimelineHashMap of a consumer group's members) with String
/// keys. A table starts with 2 slots; a put (new key or replacement) first doubles it while
/// (size + 1) * 0.75 exceeds the slots; a key's slot is the top log2(slots) bits of
/// String.hashCode times -7046029254386353131 (Fibonacci hashing); a new key goes last in its
/// slot, a replaced one keeps its place, a removed one leaves the others in order (so a slot holds
/// its keys in the order they were first put, at every size). The current iterator walks the slots
/// in ascending order and each slot from its last key to its first.
class TimelineTable {
 public:
  /// BaseHashTable.baseAddOrReplace.
  void put(const std::string& key);
  /// BaseHashTable.baseRemove (the table never shrinks).
  void remove(const std::string& key);
  std::size_t capacity() const { return capacity_; }
  /// The number of puts of new keys so far: `order(capacity(), puts())` is the current order.
  std::uint64_t puts() const { return next_; }
  /// The keys present now that were first put before the `before_puts`-th new key, in the order
  /// the current iterator walks them in a table of `capacity` slots: the table as it was then,
  /// less the keys removed since.
  std::vector<std::string> order(std::size_t capacity, std::uint64_t before_puts) const;
  /// The keys present now that were first put at or after the `puts`-th new key, in put order.
  std::vector<std::string> added_since(std::uint64_t puts) const;
  bool operator==(const TimelineTable&) const = default;

 private:
  std::map<std::string, std::uint64_t> first_put_;  // key -> its rank among new keys
  std::size_t capacity_ = 2;                        // BaseHashTable.MIN_CAPACITY
  std::uint64_t next_ = 0;
};

/// The slot of a key hash in a timeline hash table of `capacity` (a power of two) slots.
std::size_t timeline_slot(std::int32_t hash, std::size_t capacity);

}  // namespace rsim::assignors::server_java
