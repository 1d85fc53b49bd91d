// What decoding costs on the extender's hot path: Quantity parsing, HAMi's register and
// allocation annotations, and ExtenderArgs of one realistic Node (~12 KB, from `hamisim gen`)
// plus a Pod, next to what simdjson alone needs to walk every value of the same bytes (issue
// #8 target: ExtenderArgs decode <= 2x the walk).

#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <string>
#include <vector>

#include "device/codec.h"
#include "extender/extender_protocol.h"
#include "gen/generator.h"
#include "model/decode.h"
#include "model/quantity.h"

namespace {

using namespace hamisim;
namespace od = simdjson::ondemand;

// One generated node (an 8 x A100 hami-core node, seed 1) and one pending pod of it.
struct Sample {
  std::string node_json;
  std::string mig_node_json;
  std::string pod_json;
  std::string running_pod_json;
  std::string body;  // ExtenderArgs {"Pod":..., "Nodes":{"items":[node]}, "NodeNames":null}

  Sample() {
    gen::GenOptions o;
    o.nodes = 2;  // node 0 in gpu-a100-0, node 1 in gpu-a100mig-1
    o.pods_per_node = 20;
    o.pending = 1;
    o.groups = 1;
    o.node_groups = 2;
    auto c = gen::generate(o);
    if (!c) throw std::runtime_error(c.error().message);
    auto objects = model::decode_objects_json(c->cluster_json);
    if (!objects) throw std::runtime_error(objects.error().message);
    node_json = objects->node_json.at(0);
    mig_node_json = objects->node_json.at(1);
    // The pods as objects of their own: re-encoding would change the bytes, so cut them out
    // of the List (the last item is the pending pod, the first pod is running).
    const std::string& all = c->cluster_json;
    auto item = [&](size_t start) {
      int depth = 0;
      bool in_string = false;
      for (size_t i = start; i < all.size(); ++i) {
        const char ch = all[i];
        if (in_string) {
          if (ch == '\\')
            ++i;
          else if (ch == '"')
            in_string = false;
          continue;
        }
        if (ch == '"') in_string = true;
        if (ch == '{') ++depth;
        if (ch == '}' && --depth == 0) return all.substr(start, i - start + 1);
      }
      throw std::runtime_error("unterminated item");
    };
    running_pod_json = item(all.find("{\"apiVersion\":\"v1\",\"kind\":\"Pod\""));
    pod_json = item(all.rfind("{\"apiVersion\":\"v1\",\"kind\":\"Pod\""));
    body = "{\"Pod\":" + pod_json + ",\"Nodes\":{\"metadata\":{},\"items\":[" + node_json +
           "]},\"NodeNames\":null}";
  }
};

const Sample& sample() {
  static const Sample s;
  return s;
}

void BM_QuantityParse(benchmark::State& state) {
  static const std::vector<std::string> inputs = {
      "1", "20000", "100m", "1900Gi", "250", "3860m", "240029838116", "260450164Ki", "1.5", "5e3"};
  for (auto _ : state) {
    for (const auto& s : inputs) {
      auto q = model::Quantity::parse(s);
      benchmark::DoNotOptimize(q);
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * inputs.size()));
}
BENCHMARK(BM_QuantityParse);

std::string annotation_of(const std::string& json, std::string_view key) {
  auto node = model::decode_node_json(json);
  if (!node) throw std::runtime_error(node.error().message);
  const std::string* v = model::find_annotation(node->metadata, key);
  return v ? *v : "";
}

// hami.io/node-nvidia-register of 8 GPUs (hami-core: ~1.3 KB; MIG with 4 profiles: ~5 KB).
void BM_RegisterDecode(benchmark::State& state) {
  const std::string reg =
      annotation_of(state.range(0) ? sample().mig_node_json : sample().node_json,
                    device::kNvidiaRegisterAnnotation);
  for (auto _ : state) {
    auto d = device::decode_register_json(reg);
    if (!d) state.SkipWithError(d.error().message.c_str());
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * reg.size()));
  state.counters["bytes"] = static_cast<double>(reg.size());
}
BENCHMARK(BM_RegisterDecode)->ArgName("mig")->Arg(0)->Arg(1);

// hami.io/vgpu-devices-allocated of a running pod.
void BM_AllocationDecode(benchmark::State& state) {
  auto pod = model::decode_pod_json(sample().running_pod_json);
  const std::string value =
      *model::find_annotation(pod->metadata, device::kNvidiaAllocatedAnnotation);
  for (auto _ : state) {
    auto d = device::decode_pod_devices(value);
    benchmark::DoNotOptimize(d);
  }
  state.counters["bytes"] = static_cast<double>(value.size());
}
BENCHMARK(BM_AllocationDecode);

void BM_NodeDecode(benchmark::State& state) {
  const std::string& json = sample().node_json;
  for (auto _ : state) {
    auto n = model::decode_node_json(json);
    benchmark::DoNotOptimize(n);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
}
BENCHMARK(BM_NodeDecode);

void BM_ExtenderArgsDecode(benchmark::State& state) {
  const std::string& body = sample().body;
  for (auto _ : state) {
    auto a = extender::decode_extender_args(body);
    if (!a) state.SkipWithError(a.error().message.c_str());
    benchmark::DoNotOptimize(a);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
  state.counters["body_bytes"] = static_cast<double>(body.size());
}
BENCHMARK(BM_ExtenderArgsDecode);

// The floor: simdjson On-Demand visiting every value of the same bytes (strings unescaped,
// numbers parsed), copying the body into a padded buffer first as a decoder must.
simdjson::error_code walk(od::value v, size_t& scalars) {
  od::json_type t;
  if (auto e = v.type().get(t)) return e;
  switch (t) {
    case od::json_type::object: {
      od::object o;
      if (auto e = v.get_object().get(o)) return e;
      for (auto field : o) {
        std::string_view key;
        if (auto e = field.unescaped_key().get(key)) return e;
        od::value child;
        if (auto e = field.value().get(child)) return e;
        if (auto e = walk(child, scalars)) return e;
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::array: {
      od::array a;
      if (auto e = v.get_array().get(a)) return e;
      for (auto element : a) {
        od::value child;
        if (auto e = element.get(child)) return e;
        if (auto e = walk(child, scalars)) return e;
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::string: {
      std::string_view s;
      ++scalars;
      return v.get_string().get(s);
    }
    case od::json_type::number: {
      ++scalars;
      double d;
      return v.get_double().get(d);
    }
    case od::json_type::boolean: {
      ++scalars;
      bool b;
      return v.get_bool().get(b);
    }
    case od::json_type::null:
      ++scalars;
      return v.is_null() ? simdjson::SUCCESS : simdjson::INCORRECT_TYPE;
  }
  return simdjson::SUCCESS;
}

void BM_SimdjsonWalk(benchmark::State& state) {
  const std::string& body = sample().body;
  od::parser parser;
  size_t scalars = 0;
  for (auto _ : state) {
    const simdjson::padded_string padded(body);
    od::document doc;
    if (auto e = parser.iterate(padded).get(doc)) state.SkipWithError(simdjson::error_message(e));
    od::value root;
    if (auto e = doc.get_value().get(root)) state.SkipWithError(simdjson::error_message(e));
    scalars = 0;
    if (auto e = walk(root, scalars)) state.SkipWithError(simdjson::error_message(e));
    benchmark::DoNotOptimize(scalars);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
  state.counters["scalars"] = static_cast<double>(scalars);
}
BENCHMARK(BM_SimdjsonWalk);

}  // namespace

BENCHMARK_MAIN();
