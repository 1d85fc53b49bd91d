#include "extender_fixtures.h"

#include "model/json_writer.h"

namespace hamisim::testing {

std::string k80_register(int n, int count, int devmem) {
  model::JsonWriter w;
  w.begin_array();
  for (int i = 0; i < n; ++i) {
    w.begin_object();
    w.key("id").string("GPU-K80-" + std::to_string(i));
    if (i) w.key("index").number(i);
    w.key("count").number(count);
    w.key("devmem").number(devmem);
    w.key("devcore").number(100);
    w.key("type").string("NVIDIA-Tesla K80");
    w.key("mode").string("hami-core");
    w.key("health").boolean(true);
    w.end_object();
  }
  w.end_array();
  return w.take();
}

namespace {
void write_map(model::JsonWriter& w, const Annotations& m) {
  w.begin_object();
  for (const auto& [k, v] : m) w.key(k).string(v);
  w.end_object();
}
}  // namespace

std::string node_json(const std::string& name, const Annotations& annotations,
                      const Annotations& labels) {
  model::JsonWriter w;
  w.begin_object();
  w.key("metadata").begin_object();
  w.key("name").string(name);
  w.key("creationTimestamp").null();
  w.key("labels");
  write_map(w, labels);
  w.key("annotations");
  write_map(w, annotations);
  w.end_object();
  w.key("spec").begin_object().end_object();
  w.key("status").begin_object();
  w.key("allocatable").begin_object().key("cpu").string("8").key("memory").string("32Gi");
  w.key("pods").string("110").end_object();
  w.end_object();
  w.end_object();
  return w.take();
}

std::string pod_json(const std::string& name, const Limits& limits, const Annotations& annotations,
                     const std::string& ns) {
  model::JsonWriter w;
  w.begin_object();
  w.key("metadata").begin_object();
  w.key("name").string(name);
  w.key("namespace").string(ns);
  w.key("uid").string("uid-" + name);
  w.key("annotations");
  write_map(w, annotations);
  w.end_object();
  w.key("spec").begin_object();
  w.key("containers").begin_array().begin_object();
  w.key("name").string("main");
  w.key("resources").begin_object().key("limits").begin_object();
  for (const auto& [k, v] : limits) w.key(k).string(v);
  w.end_object().end_object();
  w.end_object().end_array();
  w.end_object();
  w.end_object();
  return w.take();
}

std::string args_json(const ArgsSpec& spec) {
  model::JsonWriter w;
  w.begin_object();
  if (!spec.pod.empty()) w.key("Pod").raw(spec.pod);
  if (spec.nodes_null) {
    w.key("Nodes").null();
  } else if (!spec.omit_nodes) {
    w.key("Nodes").begin_object();
    w.key("metadata").begin_object().end_object();
    w.key("items").begin_array();
    for (const auto& n : spec.nodes) w.raw(n);
    w.end_array().end_object();
  }
  if (spec.with_node_names) {
    w.key("NodeNames").begin_array();
    for (const auto& n : spec.node_names) w.string(n);
    w.end_array();
  } else {
    w.key("NodeNames").null();
  }
  if (!spec.simulated_pods.empty()) {
    w.key("SimulatedPods").begin_object();
    for (const auto& [node, pods] : spec.simulated_pods) {
      w.key(node).begin_array();
      for (const auto& p : pods) w.raw(p);
      w.end_array();
    }
    w.end_object();
  }
  w.end_object();
  return w.take();
}

std::string placed_pod_json(const std::string& name, const Annotations& annotations) {
  model::JsonWriter w;
  w.begin_object();
  w.key("metadata").begin_object();
  w.key("name").string(name);
  w.key("annotations");
  write_map(w, annotations);
  w.end_object();
  w.end_object();
  return w.take();
}

}  // namespace hamisim::testing
