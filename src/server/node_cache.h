#pragma once
// Decoded Nodes of ExtenderArgs bodies, by their exact JSON text. Cluster Autoscaler calls the
// extender once per pod per template copy, sending the same template Node objects again and
// again; decoding a ~12 KB Node and building its description key costs far more than hashing
// and comparing its bytes. Identical bytes decode to an identical Node, so what a hit gives is
// exactly what decoding would: a hit is always a full comparison of the text. Thread-safe.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fit/inventory.h"
#include "model/result.h"

namespace hamisim::server {

class NodeCache {
 public:
  // A full cache (by entries, or by the JSON bytes it holds) starts over: CA names template
  // copies afresh in every loop, so old entries are rarely asked for again. A Node larger
  // than a sixteenth of max_bytes is decoded but not kept.
  explicit NodeCache(size_t max_entries = 2048, size_t max_bytes = size_t{16} << 20)
      : max_entries_(max_entries), max_bytes_(max_bytes) {}

  using Entry = std::shared_ptr<const fit::KeyedNode>;
  // The Node whose JSON object is `raw`, decoded on a miss (errors as
  // model::decode_node_json_in_buffer gives them, under `where`). `raw` must lie in a buffer
  // with simdjson's padding after it.
  Result<Entry> get(std::string_view raw, std::string_view where);

  size_t size() const;
  size_t bytes() const;  // JSON bytes held

 private:
  struct Held {
    std::string raw;
    Entry entry;
  };
  // At most this many kept Nodes share a sample hash: a lookup compares a bounded number of
  // texts, whatever bodies a client crafts.
  static constexpr size_t kMaxPerHash = 4;

  const size_t max_entries_;
  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, std::vector<Held>> entries_;  // by sample_hash(raw)
  size_t size_ = 0;
  size_t bytes_ = 0;
};

}  // namespace hamisim::server
