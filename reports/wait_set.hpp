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
class WaitSet {
 public:
  void clear() {
    ids_.clear();
    gone_.clear();
    live_ = 0;
  }
  /// clear(), and gives the arrays' memory back (a closed rebalance keeps no wait).
  void release() {
    std::vector<Entry>().swap(ids_);
    std::vector<char>().swap(gone_);
    live_ = 0;
  }
  /// In increasing id order only.
  void push_back(const std::string* id) { push_back(key_of(*id), id); }
  /// The same with the id's key_of() already known (the id itself is not read).
  void push_back(std::uint64_t key, const std::string* id) {
    ids_.push_back({key, id});
    gone_.push_back(0);
    ++live_;
  }
  void reserve(std::size_t n) {
    ids_.reserve(n);
    gone_.reserve(n);
  }
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
  std::size_t live_ = 0;
};

}  // namespace reports
