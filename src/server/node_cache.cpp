#include "server/node_cache.h"

// Header-only XXH3: no library to link or ship.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <array>

#include "model/decode.h"

namespace hamisim::server {
namespace {

// Where Nodes of one body differ, a sample of their text differs: CA's template copies differ
// in their name (at the start: metadata comes first), real nodes in their name, uid and
// status. Hashing a sample instead of the whole text (~12 KB) saves a pass over every Node of
// every body; equal samples of different texts only cost comparisons, bounded by kMaxPerHash.
uint64_t sample_hash(std::string_view raw) {
  constexpr size_t kHead = 1024, kTail = 512, kWindows = 32, kWindow = 16;
  constexpr size_t kSample = kHead + kWindows * kWindow + kTail;
  if (raw.size() <= kSample) return XXH3_64bits_withSeed(raw.data(), raw.size(), raw.size());
  std::array<char, kSample> sample;
  char* out = sample.data();
  auto take = [&](size_t from, size_t n) { out = std::copy_n(raw.data() + from, n, out); };
  take(0, kHead);
  const size_t middle = raw.size() - kHead - kTail;
  for (size_t i = 0; i < kWindows; ++i) take(kHead + middle * i / kWindows, kWindow);
  take(raw.size() - kTail, kTail);
  return XXH3_64bits_withSeed(sample.data(), sample.size(), raw.size());
}

}  // namespace

Result<NodeCache::Entry> NodeCache::get(std::string_view raw, std::string_view where) {
  const uint64_t hash = sample_hash(raw);
  {
    std::lock_guard lock(mu_);
    if (auto it = entries_.find(hash); it != entries_.end()) {
      for (const Held& held : it->second) {
        if (held.raw == raw) return held.entry;
      }
    }
  }
  auto node = model::decode_node_json_in_buffer(raw, where);
  if (!node) return node.error();
  auto entry = std::make_shared<const fit::KeyedNode>(std::move(node).value());
  if (raw.size() > max_bytes_ / 16) return entry;

  std::lock_guard lock(mu_);
  if (size_ >= max_entries_ || bytes_ + raw.size() > max_bytes_) {
    entries_.clear();
    size_ = 0;
    bytes_ = 0;
  }
  std::vector<Held>& same_sample = entries_[hash];
  for (const Held& held : same_sample) {
    if (held.raw == raw) return held.entry;  // another thread decoded it meanwhile
  }
  if (same_sample.size() >= kMaxPerHash) return entry;
  same_sample.push_back(Held{std::string(raw), entry});
  ++size_;
  bytes_ += raw.size();
  return entry;
}

size_t NodeCache::size() const {
  std::lock_guard lock(mu_);
  return size_;
}

size_t NodeCache::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

}  // namespace hamisim::server
