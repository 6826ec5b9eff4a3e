#include "models/assignors/server_java_order.hpp"

#include "models/assignors/client_java_order.hpp"

#include <algorithm>
#include <numeric>

namespace rsim::assignors::server_java {
namespace {

int base64url_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

std::size_t table_size_for(std::size_t wanted) {
  std::size_t size = 1;
  while (size < wanted) size <<= 1;
  return size;
}

}  // namespace

std::optional<Uuid> parse_uuid(std::string_view text) {
  // 22 characters carry 132 bits: 16 bytes and 4 zero bits (no padding, as Kafka prints it).
  if (text.size() != 22) return std::nullopt;
  std::uint64_t halves[2] = {0, 0};
  int bit = 0;
  for (const char c : text) {
    const int v = base64url_value(c);
    if (v < 0) return std::nullopt;
    for (int k = 5; k >= 0; --k, ++bit) {
      const std::uint64_t b = (static_cast<std::uint64_t>(v) >> k) & 1U;
      // Java's decoder drops the 4 bits past the 16th byte without looking at them.
      if (bit < 128) halves[bit / 64] = (halves[bit / 64] << 1) | b;
    }
  }
  return Uuid{static_cast<std::int64_t>(halves[0]), static_cast<std::int64_t>(halves[1])};
}

std::int32_t uuid_hash(const Uuid& id) {
  const auto x = static_cast<std::uint64_t>(id.most ^ id.least);
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(x >> 32) ^
                                   static_cast<std::uint32_t>(x));
}

std::int32_t string_hash(std::string_view utf8) {
  return java::string_hash(utf8);  // one implementation of Java's String.hashCode
}

std::int32_t topic_id_hash(std::string_view id) {
  const auto uuid = parse_uuid(id);
  return uuid ? uuid_hash(*uuid) : string_hash(id);
}

int compare_topic_ids(std::string_view a, std::string_view b) {
  const auto ua = parse_uuid(a);
  const auto ub = parse_uuid(b);
  if (ua && ub) {
    if (ua->most != ub->most) return ua->most < ub->most ? -1 : 1;
    if (ua->least != ub->least) return ua->least < ub->least ? -1 : 1;
    return 0;
  }
  if (ua.has_value() != ub.has_value()) return ua ? -1 : 1;
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

std::size_t bucket_of(std::int32_t hash, std::size_t capacity) {
  const auto h = static_cast<std::uint32_t>(hash);
  return static_cast<std::size_t>(h ^ (h >> 16)) & (capacity - 1);
}

std::size_t copy_capacity(std::size_t n) {
  // HashSet(Collection): initial capacity max((int) (n / .75f) + 1, 16), rounded up to a power
  // of two; n entries never exceed 3/4 of that, so no resize follows.
  const auto wanted = static_cast<std::size_t>(static_cast<float>(n) / 0.75F) + 1;
  return table_size_for(std::max<std::size_t>(wanted, 16));
}

std::size_t growth_capacity(std::size_t n) {
  return grown_capacity(16, n);
}

std::vector<std::size_t> iteration_order(const std::vector<std::int32_t>& hashes,
                                         std::size_t capacity) {
  std::vector<std::size_t> order(hashes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // A resize splits each bucket keeping relative order, so within a bucket it stays insertion
  // order whatever the table's history.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return bucket_of(hashes[a], capacity) < bucket_of(hashes[b], capacity);
  });
  return order;
}

std::vector<std::int32_t> int_set_order(std::vector<std::int32_t> inserted, std::size_t capacity) {
  const auto bucket = [capacity](std::int32_t p) { return bucket_of(p, capacity); };
  const auto before = [&](std::int32_t a, std::int32_t b) { return bucket(a) < bucket(b); };
  // A set copied from another's iteration at the same capacity is in order already.
  if (!std::is_sorted(inserted.begin(), inserted.end(), before))
    std::stable_sort(inserted.begin(), inserted.end(), before);
  return inserted;
}

std::size_t grown_capacity(std::size_t capacity, std::size_t size) {
  // HashMap.putVal: resize() once ++size exceeds the threshold, capacity x 0.75.
  while (size > capacity / 4 * 3) capacity <<= 1;
  return capacity;
}

std::size_t timeline_slot(std::int32_t hash, std::size_t capacity) {
  // (int) ((hashCode * -7046029254386353131L) >>> (65 - (32 - numberOfLeadingZeros(capacity)))):
  // the top log2(capacity) bits of the 64-bit product.
  const auto product = static_cast<std::uint64_t>(static_cast<std::int64_t>(hash)) *
                       static_cast<std::uint64_t>(-7046029254386353131LL);
  int log2 = 0;
  while ((std::size_t{1} << log2) < capacity) ++log2;
  return log2 == 0 ? 0 : static_cast<std::size_t>(product >> (64 - log2));
}

void TimelineTable::put(const std::string& key) {
  // The load check comes before the lookup: a replacement can grow the table as well.
  if (static_cast<double>(first_put_.size() + 1) * 0.75 > static_cast<double>(capacity_))
    capacity_ *= 2;
  if (first_put_.try_emplace(key, next_).second) ++next_;
}

void TimelineTable::remove(const std::string& key) {
  first_put_.erase(key);
}

std::vector<std::string> TimelineTable::order(std::size_t capacity,
                                              std::uint64_t before_puts) const {
  struct Entry {
    std::size_t slot;
    std::uint64_t rank;
    const std::string* key;
  };
  std::vector<Entry> entries;
  for (const auto& [key, rank] : first_put_)
    if (rank < before_puts)
      entries.push_back({timeline_slot(string_hash(key), capacity), rank, &key});
  // Slots ascending; within a slot the last key put comes first.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.slot != b.slot ? a.slot < b.slot : a.rank > b.rank;
  });
  std::vector<std::string> out;
  out.reserve(entries.size());
  for (const auto& e : entries) out.push_back(*e.key);
  return out;
}

std::vector<std::string> TimelineTable::added_since(std::uint64_t puts) const {
  std::vector<std::pair<std::uint64_t, const std::string*>> added;
  for (const auto& [key, rank] : first_put_)
    if (rank >= puts) added.emplace_back(rank, &key);
  std::sort(added.begin(), added.end());
  std::vector<std::string> out;
  out.reserve(added.size());
  for (const auto& [rank, key] : added) out.push_back(*key);
  return out;
}

}  // namespace rsim::assignors::server_java
