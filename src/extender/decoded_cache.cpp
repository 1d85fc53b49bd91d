#include "extender/decoded_cache.h"

#include <simdjson.h>

// Header-only XXH3: no library to link or ship.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "model/decode.h"

namespace hamisim::extender {
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

// Hash of the first kPrefix bytes of a text of at least that many.
uint64_t prefix_hash(std::string_view text) {
  return XXH3_64bits(text.data(), DecodedCache<model::Pod>::kPrefix);
}

std::string_view without_trailing_space(std::string_view raw) {
  while (!raw.empty() && model::is_json_space(raw.back())) raw.remove_suffix(1);
  return raw;
}

// Length of the JSON object at the start of `text` when it ends within its first `limit`
// bytes, else 0. Only strings and brackets are followed, not the rest of the grammar: a length
// found here is only used to compare the text with a kept one, which is a whole object.
size_t object_length(std::string_view text, size_t limit) {
  limit = std::min(limit, text.size());
  if (limit == 0 || text[0] != '{') return 0;
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < limit; ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return i + 1;
    }
  }
  return 0;
}

// Whether `raw` (with simdjson's padding after it) is a strictly valid JSON object. The
// On-Demand decoders accept some malformed texts (a key without a value, in places), and
// whether they do can depend on the bytes after the text; a kept text must decode the same
// wherever it appears, and a body made of kept texts must be valid JSON (find_at_start), so
// only valid texts are kept. simdjson's DOM parser validates everything.
bool is_valid_object(std::string_view raw) {
  thread_local simdjson::dom::parser parser;  // keeps its buffers; not thread-safe
  simdjson::dom::element root;
  if (parser.parse(raw.data(), raw.size(), /*realloc_if_needed=*/false).get(root)) return false;
  return root.is_object();
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
typename DecodedCache<T>::Candidates DecodedCache<T>::candidates(
    const std::unordered_map<uint64_t, std::vector<HeldPtr>>& index, uint64_t hash) const {
  Candidates out;
  std::lock_guard lock(mu_);
  if (auto it = index.find(hash); it != index.end()) {
    std::copy(it->second.begin(), it->second.end(), out.begin());
  }
  return out;
}

template <class T>
typename DecodedCache<T>::Entry DecodedCache<T>::find(std::string_view raw, uint64_t hash) const {
  for (const HeldPtr& held : candidates(entries_, hash)) {
    if (held && held->raw == raw) return held->entry;
  }
  return nullptr;
}

template <class T>
Result<typename DecodedCache<T>::Entry> DecodedCache<T>::get(std::string_view raw,
                                                             std::string_view where) {
  raw = without_trailing_space(raw);
  const uint64_t hash = sample_hash(raw);
  if (Entry hit = find(raw, hash)) return hit;
  auto decoded = decode(raw, where, static_cast<const T*>(nullptr));
  if (!decoded) return decoded.error();
  Entry entry = std::move(decoded).value();
  if (raw.size() > max_bytes_ / 16 || !is_valid_object(raw)) return entry;

  std::lock_guard lock(mu_);
  if (size_ >= max_entries_ || bytes_ + raw.size() > max_bytes_) {
    entries_.clear();
    by_prefix_.clear();
    size_ = 0;
    bytes_ = 0;
  }
  std::vector<HeldPtr>& same_sample = entries_[hash];
  for (const HeldPtr& held : same_sample) {
    if (held->raw == raw) return held->entry;  // another thread decoded it meanwhile
  }
  if (same_sample.size() >= kMaxPerHash) return entry;
  auto held = std::make_shared<const Held>(Held{std::string(raw), entry});
  same_sample.push_back(held);
  if (raw.size() >= kPrefix) {
    std::vector<HeldPtr>& same_prefix = by_prefix_[prefix_hash(raw)];
    if (same_prefix.size() < kMaxPerHash) same_prefix.push_back(std::move(held));
  }
  ++size_;
  bytes_ += raw.size();
  return entry;
}

template <class T>
typename DecodedCache<T>::Found DecodedCache<T>::find_at_start(std::string_view rest) const {
  if (rest.size() >= kPrefix) {
    for (const HeldPtr& held : candidates(by_prefix_, prefix_hash(rest))) {
      if (held && held->raw.size() <= rest.size() &&
          std::memcmp(held->raw.data(), rest.data(), held->raw.size()) == 0) {
        return Found{held->entry, held->raw.size()};
      }
    }
  }
  const size_t length = object_length(rest, kPrefix - 1);
  if (length == 0) return {};
  const std::string_view raw = rest.substr(0, length);
  if (Entry hit = find(raw, sample_hash(raw))) return Found{std::move(hit), length};
  return {};
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

}  // namespace hamisim::extender
