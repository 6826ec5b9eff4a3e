// The members a consumer-protocol rebalance still waits for (reports/summary.cpp).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace reports {

/// The member ids a consumer-protocol rebalance waits for: filled in member-id order at a bump
/// (pointers to interned ids, no copies), then only ever removed from (a flag), so a bump costs
/// O(members) pointer copies and no allocation per member.
/// An id may come with its dense number (the summary numbers every id it interns 0, 1, 2, ...):
/// find_dense() then finds its slot by one array read instead of a binary search of the wait,
/// whose dependent probes missed the caches at 10,000 members (the settle of every member change).
class WaitSet {
 public:
  static constexpr std::uint32_t kNoDense = static_cast<std::uint32_t>(-1);
  void clear() {
    for (const std::uint32_t d : dense_)
      if (d != kNoDense) slot_[d] = 0;  // only the slots set: no walk of every id ever seen
    ids_.clear();
    gone_.clear();
    dense_.clear();
    live_ = 0;
  }
  /// clear(), and gives the arrays' memory back (a closed rebalance keeps no wait).
  void release() {
    std::vector<Entry>().swap(ids_);
    std::vector<char>().swap(gone_);
    std::vector<std::uint32_t>().swap(dense_);
    std::vector<std::uint32_t>().swap(slot_);
    live_ = 0;
  }
  /// In increasing id order only.
  void push_back(const std::string* id) { push_back(key_of(*id), id); }
  /// The same with the id's key_of() already known (the id itself is not read), and its dense
  /// number if it has one (each id its own: two ids never share one).
  void push_back(std::uint64_t key, const std::string* id, std::uint32_t dense = kNoDense) {
    if (dense != kNoDense) {
      if (dense >= slot_.size()) slot_.resize(std::max<std::size_t>(dense + 1, 2 * slot_.size()));
      slot_[dense] = static_cast<std::uint32_t>(ids_.size()) + 1;
    }
    ids_.push_back({key, id});
    gone_.push_back(0);
    dense_.push_back(dense);
    ++live_;
  }
  void reserve(std::size_t n) {
    ids_.reserve(n);
    gone_.reserve(n);
    dense_.reserve(n);
  }
  /// The index of the waiting id whose dense number is `dense`, or npos: find() of that id.
  std::size_t find_dense(std::uint32_t dense) const {
    if (dense >= slot_.size() || slot_[dense] == 0) return npos;
    const std::size_t i = slot_[dense] - 1;
    return gone_[i] ? npos : i;
  }
  /// The dense number the id at `i` came with (kNoDense: none).
  std::uint32_t dense_at(std::size_t i) const { return dense_[i]; }
  bool empty() const { return live_ == 0; }
  /// The index of a waiting id, or npos. The search compares the ids' first eight bytes, kept in
  /// the entries, and reads an id itself only when those are equal: it stays in the wait's own
  /// array instead of visiting thousands of strings elsewhere on the heap.
  std::size_t find(const std::string& id) const {
    const Entry probe{key_of(id), &id};
    const auto it =
        std::lower_bound(ids_.begin(), ids_.end(), probe, [](const Entry& a, const Entry& b) {
          return a.key != b.key ? a.key < b.key : *a.id < *b.id;
        });
    if (it == ids_.end() || it->key != probe.key || *it->id != id) return npos;
    const auto i = static_cast<std::size_t>(it - ids_.begin());
    return gone_[i] ? npos : i;
  }
  bool count(const std::string& id) const { return find(id) != npos; }
  void erase_at(std::size_t i) {
    gone_[i] = 1;
    --live_;
  }
  void erase(const std::string& id) {
    if (const std::size_t i = find(id); i != npos) erase_at(i);
  }
  std::size_t size() const { return ids_.size(); }  // slots, gone ones included
  bool live(std::size_t i) const { return !gone_[i]; }
  const std::string& at(std::size_t i) const { return *ids_[i].id; }
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  /// The first eight bytes of `id` as one big-endian number (zeros past its end): keys compare
  /// as std::string compares those bytes (as unsigned char); equal keys decide nothing.
  static std::uint64_t key_of(const std::string& id) {
    std::uint64_t k = 0;
    for (std::size_t i = 0; i < 8; ++i)
      k = k << 8 | (i < id.size() ? static_cast<unsigned char>(id[i]) : 0u);
    return k;
  }

 private:
  struct Entry {
    std::uint64_t key;
    const std::string* id;
  };
  std::vector<Entry> ids_;
  std::vector<char> gone_;
  std::vector<std::uint32_t> dense_;  // dense_[i]: the dense number of ids_[i], or kNoDense
  std::vector<std::uint32_t> slot_;   // slot_[dense]: its index in ids_ + 1; 0: not in the wait
  std::size_t live_ = 0;
};

}  // namespace reports
