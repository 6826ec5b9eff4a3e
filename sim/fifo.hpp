// Fifo<T>: a first-in first-out queue over one growable ring of slots. Unlike std::deque, an
// empty Fifo owns no memory (std::deque allocates a map and a block when constructed, for every
// link and every node of a network), and pushing allocates nothing once the ring is as large as
// the most the queue has held (rounded up to a power of two): a message in flight costs no
// allocation of its own, whatever the payload's size (a deque of payloads over 256 bytes
// allocates one block per element). T must be default-constructible and move-assignable.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

#include "sim/assert.hpp"

namespace sim {

template <typename T>
class Fifo {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  /// Slots held (what the ring costs), for tests.
  std::size_t capacity() const { return slots_.size(); }

  void push_back(T value) {
    if (size_ == slots_.size()) grow();
    std::size_t i = head_ + size_;
    if (i >= slots_.size()) i -= slots_.size();
    slots_[i] = std::move(value);
    ++size_;
  }
  template <typename... Args>
  void emplace_back(Args&&... args) {
    push_back(T(std::forward<Args>(args)...));
  }
  T& front() {
    SIM_ASSERT(size_ > 0);
    return slots_[head_];
  }
  /// Drops the front element; its slot is emptied (what it held, e.g. a string, is freed now).
  void pop_front() {
    SIM_ASSERT(size_ > 0);
    slots_[head_] = T{};
    if (++head_ == slots_.size()) head_ = 0;
    --size_;
  }
  void clear() {
    while (size_ > 0) pop_front();
    head_ = 0;
  }

 private:
  void grow() {
    std::vector<T> next(slots_.empty() ? 1 : 2 * slots_.size());
    for (std::size_t k = 0; k < size_; ++k) {
      std::size_t i = head_ + k;
      if (i >= slots_.size()) i -= slots_.size();
      next[k] = std::move(slots_[i]);
    }
    slots_ = std::move(next);
    head_ = 0;
  }

  std::vector<T> slots_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace sim
