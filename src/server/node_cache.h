#pragma once
// Decoded Nodes of ExtenderArgs bodies, by their exact JSON text. Cluster Autoscaler calls the
// extender once per pod per template copy, sending the same template Node objects again and
// again; decoding a ~12 KB Node and building its description key costs far more than hashing
// and comparing its bytes. Identical bytes decode to an identical Node, so what a hit gives is
// exactly what decoding would. Thread-safe.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

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
  struct Lookup {
    std::string_view raw;
    uint64_t hash;
  };
  struct RawHash {
    using is_transparent = void;
    size_t operator()(const Lookup& l) const noexcept { return l.hash; }
    size_t operator()(const std::string& raw) const noexcept;
  };
  struct RawEqual {
    using is_transparent = void;
    bool operator()(const std::string& a, const std::string& b) const { return a == b; }
    bool operator()(const Lookup& l, const std::string& b) const { return l.raw == b; }
    bool operator()(const std::string& a, const Lookup& l) const { return a == l.raw; }
  };

  const size_t max_entries_;
  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry, RawHash, RawEqual> entries_;
  size_t bytes_ = 0;
};

}  // namespace hamisim::server
