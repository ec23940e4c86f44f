#pragma once
// A map keyed by node pointers for the walks that visit every node of a graph once (toposort, the schedule cache's
// comparisons): open addressing in one array, so an insert allocates nothing until the table doubles. Keys are never
// erased. Values must be default-constructible; pointers into the table are valid until the next insert.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ts {

template <class V>
class PtrMap {
 public:
  explicit PtrMap(size_t expected = 32) { rehash(capacity_for(expected)); }
  size_t size() const { return size_; }
  // the value of `key`, inserted default-constructed if absent; .second says whether it was inserted
  std::pair<V*, bool> try_emplace(const void* key) {
    if (2 * (size_ + 1) > slots_.size()) rehash(2 * slots_.size());
    size_t i = slot_of(key);
    if (slots_[i].first == key) return {&slots_[i].second, false};
    slots_[i].first = key;
    ++size_;
    return {&slots_[i].second, true};
  }
  V* find(const void* key) {
    size_t i = slot_of(key);
    return slots_[i].first == key ? &slots_[i].second : nullptr;
  }
  const V* find(const void* key) const { return const_cast<PtrMap*>(this)->find(key); }
  // calls f(key, value&) for every entry, in no particular order
  template <class F>
  void for_each(F&& f) {
    for (auto& s : slots_)
      if (s.first) f(s.first, s.second);
  }

 private:
  static size_t capacity_for(size_t n) {
    size_t c = 16;
    while (c < 2 * n) c *= 2;
    return c;
  }
  // the slot holding `key`, or the empty slot where it would go
  size_t slot_of(const void* key) const {
    const size_t mask = slots_.size() - 1;
    uint64_t h = reinterpret_cast<uintptr_t>(key) * 0x9E3779B97F4A7C15ull;
    size_t i = static_cast<size_t>(h ^ (h >> 32)) & mask;
    while (slots_[i].first && slots_[i].first != key) i = (i + 1) & mask;
    return i;
  }
  void rehash(size_t cap) {
    std::vector<std::pair<const void*, V>> old(cap);
    old.swap(slots_);
    for (auto& s : old)
      if (s.first) {
        size_t i = slot_of(s.first);
        slots_[i] = std::move(s);
      }
  }
  std::vector<std::pair<const void*, V>> slots_;
  size_t size_ = 0;
};

}  // namespace ts
