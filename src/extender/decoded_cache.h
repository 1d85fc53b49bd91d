#pragma once
// Decoded objects of ExtenderArgs bodies, by their exact JSON text. Cluster Autoscaler calls the
// extender once per pod per template copy, sending the same template Nodes, and the same Pod,
// again and again; decoding a ~12 KB Node (and building its description key) or a Pod costs
// far more than hashing a sample of its bytes and comparing them. Identical bytes decode to an
// identical object, so what a hit gives is exactly what decoding would: a hit is always a full
// comparison of the text. Thread-safe.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fit/description.h"
#include "model/objects.h"
#include "model/result.h"

namespace hamisim::extender {

// T is fit::KeyedNode (decoded as a Node) or model::Pod.
template <class T>
class DecodedCache {
 public:
  // A full cache (by entries, or by the JSON bytes it holds) starts over: CA names template
  // copies afresh in every loop, so old entries are rarely asked for again, and the copies of
  // one estimate come again within it. An object larger than a sixteenth of max_bytes, or
  // whose text is not strictly valid JSON (which the decoders may still accept), is decoded
  // but not kept. A full cache of 12 KB Nodes holds ~25 MiB (text, decoded objects
  // and their descriptions).
  explicit DecodedCache(size_t max_entries = 1024, size_t max_bytes = size_t{8} << 20)
      : max_entries_(max_entries), max_bytes_(max_bytes) {}

  using Entry = std::shared_ptr<const T>;
  // The object whose JSON text is `raw`, decoded on a miss (errors as
  // model::decode_{node,pod}_json_in_buffer give them, under `where`). `raw` must lie in a
  // buffer with simdjson's padding after it. Whitespace after the object is not part of the
  // text it is kept by.
  Result<Entry> get(std::string_view raw, std::string_view where);

  // A kept object whose text `rest` starts with, and the length of that text; a null entry
  // when there is none. Lets a decoder take an object without first finding where it ends:
  // kept texts are strictly valid JSON objects, so the same bytes at the start of `rest` are
  // that same object. Never decodes. Texts of at least kPrefix bytes are found by a hash of their
  // first kPrefix bytes; shorter ones by looking for their end within the first kPrefix bytes.
  struct Found {
    Entry entry;
    size_t length = 0;
  };
  Found find_at_start(std::string_view rest) const;
  static constexpr size_t kPrefix = 1024;

  size_t size() const;
  size_t bytes() const;  // JSON bytes held

 private:
  struct Held {
    std::string raw;
    Entry entry;
  };
  // Immutable once kept, so texts are compared outside the lock.
  using HeldPtr = std::shared_ptr<const Held>;
  // At most this many kept objects share a hash: a lookup compares a bounded number of texts,
  // whatever bodies a client crafts.
  static constexpr size_t kMaxPerHash = 4;
  using Candidates = std::array<HeldPtr, kMaxPerHash>;

  Candidates candidates(const std::unordered_map<uint64_t, std::vector<HeldPtr>>& index,
                        uint64_t hash) const;
  Entry find(std::string_view raw, uint64_t hash) const;

  const size_t max_entries_;
  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, std::vector<HeldPtr>> entries_;    // by sample hash of raw
  std::unordered_map<uint64_t, std::vector<HeldPtr>> by_prefix_;  // texts of >= kPrefix bytes
  size_t size_ = 0;
  size_t bytes_ = 0;
};

extern template class DecodedCache<fit::KeyedNode>;
extern template class DecodedCache<model::Pod>;
using NodeCache = DecodedCache<fit::KeyedNode>;
using PodCache = DecodedCache<model::Pod>;

// What decode_extender_args may take from earlier bodies.
struct DecodedObjects {
  NodeCache nodes;
  PodCache pods;
};

}  // namespace hamisim::extender
