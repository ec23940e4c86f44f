#include "engine/runtime/interp/provenance.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <mutex>
#include <utility>

namespace ts {

namespace {

std::atomic<bool> g_recording{false};
std::mutex g_mu;
std::vector<Provenance> g_log;  // under g_mu

}  // namespace

void Provenance::merge(Provenance&& other) {
  for (auto& [element, deps] : other.stores) {
    auto [it, fresh] = stores.try_emplace(element, std::move(deps));
    if (fresh) continue;
    std::vector<ElementRef> both;
    std::set_union(it->second.begin(), it->second.end(), deps.begin(), deps.end(), std::back_inserter(both));
    it->second = std::move(both);
  }
  other.stores.clear();
}

void record_provenance(bool on) { g_recording.store(on, std::memory_order_relaxed); }

bool recording_provenance() { return g_recording.load(std::memory_order_relaxed); }

std::vector<Provenance> take_provenance() {
  std::lock_guard lk(g_mu);
  return std::exchange(g_log, {});
}

void keep_provenance(Provenance p) {
  std::lock_guard lk(g_mu);
  g_log.push_back(std::move(p));
}

}  // namespace ts
