#include "server/decoded_cache.h"

// Header-only XXH3: no library to link or ship.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <array>

#include "model/decode.h"

namespace hamisim::server {
namespace {

// Where objects of one body differ, a sample of their text differs: CA's template copies differ
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

Result<std::shared_ptr<const fit::KeyedNode>> decode(std::string_view raw, std::string_view where,
                                                     const fit::KeyedNode*) {
  auto node = model::decode_node_json_in_buffer(raw, where);
  if (!node) return node.error();
  return std::make_shared<const fit::KeyedNode>(std::move(node).value());
}

Result<std::shared_ptr<const model::Pod>> decode(std::string_view raw, std::string_view where,
                                                 const model::Pod*) {
  auto pod = model::decode_pod_json_in_buffer(raw, where);
  if (!pod) return pod.error();
  return std::make_shared<const model::Pod>(std::move(pod).value());
}

}  // namespace

template <class T>
Result<typename DecodedCache<T>::Entry> DecodedCache<T>::get(std::string_view raw,
                                                             std::string_view where) {
  const uint64_t hash = sample_hash(raw);
  {
    std::lock_guard lock(mu_);
    if (auto it = entries_.find(hash); it != entries_.end()) {
      for (const Held& held : it->second) {
        if (held.raw == raw) return held.entry;
      }
    }
  }
  auto decoded = decode(raw, where, static_cast<const T*>(nullptr));
  if (!decoded) return decoded.error();
  Entry entry = std::move(decoded).value();
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

template <class T>
size_t DecodedCache<T>::size() const {
  std::lock_guard lock(mu_);
  return size_;
}

template <class T>
size_t DecodedCache<T>::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

template class DecodedCache<fit::KeyedNode>;
template class DecodedCache<model::Pod>;

}  // namespace hamisim::server
