// serve's device-profile reconciler (src/cli/profile_reconciler.cpp) under DRA: a live source
// over the fake API server gives it the nodes, and each pass compares the nodes' ResourceSlices
// with their profile's. The slices come from an injected lister (one test per Cluster
// Autoscaler category) or from a real paged LIST through the source's client; what is checked
// is what an operator sees: the /metrics text, the log lines and the Node Events.

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/profile_reconciler.h"
#include "cli/resource_slice_list.h"
#include "device/catalog/device_config.h"
#include "dra/decode.h"
#include "engine/engine.h"
#include "fake_apiserver.h"
#include "kube/kube_source.h"
#include "live/live_scheduler.h"
#include "profile/device_profiles.h"
#include "server/metrics.h"
#include "state/object_store.h"

namespace hamisim::cli {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Nodes of group nic-pool (by nodeGroupLabel) promise two NICs with a `speed` attribute.
constexpr char kProfiles[] = R"(apiVersion: hamisim.io/v1
kind: DeviceProfiles
profiles:
  - name: nic-a
    match: {labels: {pool: nic}, nodeGroupLabel: example.com/group}
    dra:
      resourceSlices:
        - apiVersion: resource.k8s.io/v1
          kind: ResourceSlice
          metadata: {name: nics}
          spec:
            driver: nic.example.com
            nodeName: any
            pool: {name: nics, generation: 1, resourceSliceCount: 1}
            devices:
              - {name: nic-0, attributes: {speed: {int: 400}}}
              - {name: nic-1, attributes: {speed: {int: 400}}}
)";

std::string node_json(const std::string& name, const std::string& group) {
  std::string labels = R"("pool":"nic")";
  if (!group.empty()) labels += fmt::format(R"(,"example.com/group":"{}")", group);
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Node","metadata":{{"name":"{}","labels":{{{}}}}},)"
      R"("status":{{"allocatable":{{"cpu":"8","memory":"32Gi","pods":"110"}}}}}})",
      name, labels);
}

// A slice node `node` publishes: `devices` devices named <prefix>-<i>, each with the attributes
// `attributes` (a JSON object's members), in pool `pool` announcing `slice_count` slices.
std::string slice_json(const std::string& name, const std::string& node, int devices,
                       const std::string& attributes = R"("speed":{"int":400})",
                       const std::string& pool = "", int slice_count = 1,
                       const std::string& driver = "nic.example.com") {
  std::string list;
  for (int i = 0; i < devices; ++i) {
    if (i) list += ",";
    list += fmt::format(R"({{"name":"dev-{}","attributes":{{{}}}}})", i, attributes);
  }
  return fmt::format(
      R"({{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{{"name":"{}"}},)"
      R"("spec":{{"driver":"{}","nodeName":"{}","pool":{{"name":"{}","generation":1,)"
      R"("resourceSliceCount":{}}},"devices":[{}]}}}})",
      name, driver, node, pool.empty() ? node : pool, slice_count, list);
}

// spdlog's default logger, writing each message to a string while alive. The fixture holds it
// from before the source's threads start until after they stop: they log too, through the
// default logger, and must never see it swapped under them.
class CapturedLog {
 public:
  CapturedLog() : sink_(std::make_shared<Sink>()), old_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("hamisim", sink_);
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(old_); }
  std::string text() const { return sink_->text(); }
  // How many lines hold `what`.
  int lines_with(const std::string& what) const {
    std::istringstream in(text());
    int n = 0;
    for (std::string line; std::getline(in, line);) n += line.find(what) != std::string::npos;
    return n;
  }

 private:
  // The messages alone, one a line, read under the sink's own lock.
  class Sink : public spdlog::sinks::base_sink<std::mutex> {
   public:
    std::string text() {
      std::lock_guard lock(mutex_);
      return text_;
    }

   protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
      text_.append(msg.payload.data(), msg.payload.size());
      text_ += '\n';
    }
    void flush_() override {}

   private:
    std::string text_;
  };
  std::shared_ptr<Sink> sink_;
  std::shared_ptr<spdlog::logger> old_;
};

template <class F>
bool eventually(F&& condition) {
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < until) {
    if (condition()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return condition();
}

// The nodes on the fake API server, a live scheduler over a KubeSource watching them, and a
// reconciler over that.
class ProfileReconcilerTest : public ::testing::Test {
 protected:
  void start(const std::vector<std::string>& nodes) {
    std::string list = R"({"apiVersion":"v1","kind":"List","items":[)";
    for (size_t i = 0; i < nodes.size(); ++i) list += (i ? "," : "") + nodes[i];
    ASSERT_TRUE(store_.load(list + "]}"));
    server_ = std::make_unique<::hamisim::testing::FakeApiServer>(store_);
    ASSERT_TRUE(server_->start());
    kube::KubeConfig config;
    config.server = server_->url();
    kube::KubeSourceOptions source_options;
    source_options.lease_name = "";
    source_options.event_flush_timeout = 500ms;
    auto source = kube::KubeSource::create(config, kube::ClientOptions{}, source_options);
    ASSERT_TRUE(source) << source.error().message;
    source_ = std::move(source).value();
    live_ = std::make_unique<live::LiveScheduler>(registry_, *source_, live::LiveOptions{});
    live_->start();
    ASSERT_TRUE(eventually(
        [&] { return live_->synced() && live_->observed_nodes().size() == nodes.size(); }));
    auto profiles = profile::parse_device_profiles(kProfiles, "profiles.yaml", registry_);
    ASSERT_TRUE(profiles) << profiles.error().message;
    profiles_ = std::make_shared<profile::DeviceProfiles>(std::move(profiles).value());
    engine_ = std::make_unique<engine::Engine>(registry_, profiles_);
  }
  void TearDown() override {
    reconciler_.reset();
    if (live_) live_->stop();
  }

  void make_reconciler(SliceLister lister) {
    reconciler_ = std::make_unique<ProfileReconciler>(registry_, profiles_, *engine_, *live_,
                                                      metrics_, 1h, std::move(lister));
  }
  // A reconciler listing the slices from the fake API server as serve does, through a client
  // that takes one slice a page.
  void list_one_slice_a_page() {
    kube::KubeConfig config;
    config.server = server_->url();
    kube::ClientOptions options;
    options.list_page_size = 1;
    auto client = kube::KubeClient::create(config, options);
    ASSERT_TRUE(client) << client.error().message;
    paged_client_ = std::move(client).value();
    make_reconciler([&c = *paged_client_](const std::atomic<bool>& cancel) {
      return list_resource_slices(c, &cancel);
    });
  }
  // A lister that returns the slices of `*json` as they are then (decoded strictly, as a LIST
  // would be).
  void inject(const std::vector<std::string>* json) {
    make_reconciler([json](const std::atomic<bool>&) -> Result<std::vector<dra::ResourceSlice>> {
      std::vector<dra::ResourceSlice> out;
      for (const auto& j : *json) {
        auto s = dra::decode_resource_slice(j);
        if (!s) return make_error(s.error().message);
        out.push_back(std::move(s).value());
      }
      return out;
    });
  }
  // The series of hamisim_dra_template_mismatch in /metrics, in exposition order.
  std::vector<std::string> dra_series() const {
    std::istringstream in(metrics_.render());
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with("hamisim_dra_template_mismatch{")) out.push_back(line);
    }
    return out;
  }
  // The DeviceProfileMismatch Events in the store, oldest first: "node: message".
  std::vector<std::string> mismatch_events() const {
    std::vector<std::string> out;
    for (const auto& e : store_.list(state::Kind::kEvent, "default").items) {
      if (e.json.find("\"DeviceProfileMismatch\"") == std::string::npos) continue;
      out.push_back(e.json);
    }
    return out;
  }

  static std::vector<std::string> four(const std::string& group, const std::string& driver,
                                       int extra, int missing, int mismatch, int unknown) {
    auto line = [&](const char* type, int n) {
      return fmt::format(
          R"(hamisim_dra_template_mismatch{{node_group="{}",driver="{}",mismatch_type="{}"}} {})",
          group, driver, type, n);
    };
    // Series are rendered sorted by label values: extra, mismatch, missing, unknown.
    return {line("extra", extra), line("mismatch", mismatch), line("missing", missing),
            line("unknown", unknown)};
  }

  CapturedLog log_;  // first: outlives every thread below
  device::DeviceRegistry registry_ = device::build_registry({});
  state::ObjectStore store_;
  std::unique_ptr<::hamisim::testing::FakeApiServer> server_;
  std::unique_ptr<kube::KubeSource> source_;
  std::unique_ptr<live::LiveScheduler> live_;
  std::shared_ptr<profile::DeviceProfiles> profiles_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<kube::KubeClient> paged_client_;
  server::MetricsRegistry metrics_;
  std::unique_ptr<ProfileReconciler> reconciler_;
};

TEST_F(ProfileReconcilerTest, NodesThatPublishWhatTheProfilePromisesReadZeroInEveryCategory) {
  ASSERT_NO_FATAL_FAILURE(start({node_json("n1", "nic-pool")}));
  // Pool and device names differ from the profile's: CA compares neither.
  std::vector<std::string> slices = {slice_json("n1-nic", "n1", 2)};
  inject(&slices);
  reconciler_->run_once();
  EXPECT_EQ(dra_series(), four("nic-pool", "nic.example.com", 0, 0, 0, 0));
  EXPECT_THAT(metrics_.render(),
              HasSubstr("hamisim_profile_mismatching_nodes{profile=\"nic-a\"} 0"));
}

TEST_F(ProfileReconcilerTest, ANodeWithoutThePromisedDevicesIsMissing) {
  ASSERT_NO_FATAL_FAILURE(start({node_json("n1", "nic-pool"), node_json("n2", "nic-pool")}));
  std::vector<std::string> slices = {slice_json("n1-nic", "n1", 2)};  // n2 publishes none
  inject(&slices);
  reconciler_->run_once();
  EXPECT_EQ(dra_series(), four("nic-pool", "nic.example.com", 0, 1, 0, 0));
  EXPECT_THAT(metrics_.render(),
              HasSubstr("hamisim_profile_mismatching_nodes{profile=\"nic-a\"} 1"));
}

TEST_F(ProfileReconcilerTest, DevicesTheProfileDoesNotPromiseAreExtra) {
  ASSERT_NO_FATAL_FAILURE(start({node_json("n1", "nic-pool")}));
  // The promised pool, and a second pool of devices with other attribute names.
  std::vector<std::string> slices = {slice_json("n1-nic", "n1", 2),
                                     slice_json("n1-dpu", "n1", 1, R"("cores":{"int":8})", "dpu")};
  inject(&slices);
  reconciler_->run_once();
  EXPECT_EQ(dra_series(), four("nic-pool", "nic.example.com", 1, 0, 0, 0));
}

TEST_F(ProfileReconcilerTest, ADeviceGroupOfAnotherCountIsAMismatch) {
  ASSERT_NO_FATAL_FAILURE(start({node_json("n1", "nic-pool")}));
  std::vector<std::string> slices = {slice_json("n1-nic", "n1", 3)};  // three NICs, not two
  inject(&slices);
  reconciler_->run_once();
  EXPECT_EQ(dra_series(), four("nic-pool", "nic.example.com", 0, 0, 1, 0));
}

// CA reserves `unknown`; hamisim counts there the nodes whose pools of the driver are changing
// (here one slice of the two the pool announces), which are not compared.
TEST_F(ProfileReconcilerTest, ANodeWhosePoolIsIncompleteIsUnknown) {
  ASSERT_NO_FATAL_FAILURE(start({node_json("n1", "nic-pool")}));
  std::vector<std::string> slices = {slice_json("n1-nic", "n1", 2, R"("speed":{"int":400})", "",
                                                /*slice_count=*/2)};
  inject(&slices);
  reconciler_->run_once();
  EXPECT_EQ(dra_series(), four("nic-pool", "nic.example.com", 0, 0, 0, 1));
  // Not a mismatch: no log line, no Event.
  EXPECT_THAT(metrics_.render(),
              HasSubstr("hamisim_profile_mismatching_nodes{profile=\"nic-a\"} 0"));
}

// A node whose group the node does not tell (no nodeGroupLabel label) is counted under its
// profile's name; a difference that went away reads 0, and a node group whose nodes are gone
// loses its series.
TEST_F(ProfileReconcilerTest, SeriesFollowTheLastPass) {
  ASSERT_NO_FATAL_FAILURE(start({node_json("n1", "nic-pool"), node_json("n9", "")}));
  std::vector<std::string> slices = {slice_json("n9-nic", "n9", 3)};
  inject(&slices);
  reconciler_->run_once();
  auto want = four("nic-a", "nic.example.com", 0, 0, 1, 0);
  for (auto& l : four("nic-pool", "nic.example.com", 0, 1, 0, 0)) want.push_back(l);
  EXPECT_EQ(dra_series(), want);

  slices = {slice_json("n1-nic", "n1", 2), slice_json("n9-nic", "n9", 2)};
  reconciler_->run_once();
  want = four("nic-a", "nic.example.com", 0, 0, 0, 0);
  for (auto& l : four("nic-pool", "nic.example.com", 0, 0, 0, 0)) want.push_back(l);
  EXPECT_EQ(dra_series(), want);

  ASSERT_TRUE(store_.remove(state::Kind::kNode, "", "n9"));
  ASSERT_TRUE(eventually([&] { return live_->observed_nodes().size() == 1; }));
  reconciler_->run_once();
  EXPECT_EQ(dra_series(), four("nic-pool", "nic.example.com", 0, 0, 0, 0));
}

// A DRA difference is logged and filed as a Warning Event on the Node when it appears or
// changes, not on every pass.
TEST_F(ProfileReconcilerTest, ADifferenceIsLoggedAndFiledOnceUntilItChanges) {
  ASSERT_NO_FATAL_FAILURE(start({node_json("n1", "nic-pool")}));
  std::vector<std::string> slices;  // n1 publishes nothing
  inject(&slices);
  reconciler_->run_once();
  reconciler_->run_once();
  EXPECT_EQ(log_.lines_with("node n1 does not match device profile nic-a: DRA nic.example.com: 1 "
                            "missing, 0 extra, 0 mismatch"),
            1)
      << log_.text();
  ASSERT_TRUE(eventually([&] { return mismatch_events().size() == 1; }));

  // Changed: a second Event. Events go out in order, so once it is in the store a repeat of
  // the first would be there too.
  slices = {slice_json("n1-nic", "n1", 3)};
  reconciler_->run_once();
  ASSERT_TRUE(eventually([&] { return mismatch_events().size() >= 2; }));
  const auto events = mismatch_events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_THAT(events[0], HasSubstr(R"("kind":"Node")"));
  EXPECT_THAT(events[0], HasSubstr(R"("name":"n1")"));
  EXPECT_THAT(events[0], HasSubstr("devices differ from device profile nic-a: DRA "
                                   "nic.example.com: 1 missing, 0 extra, 0 mismatch"));
  EXPECT_THAT(events[1], HasSubstr("0 missing, 0 extra, 1 mismatch"));
}

// A LIST that fails clears every DRA series (a stale alert must not linger on numbers nobody
// measured) and is logged once, not every pass; the next good LIST brings the series back.
TEST_F(ProfileReconcilerTest, AFailingListClearsTheSeriesAndWarnsOnce) {
  ASSERT_NO_FATAL_FAILURE(start({node_json("n1", "nic-pool")}));
  bool fail = false;
  make_reconciler([&](const std::atomic<bool>&) -> Result<std::vector<dra::ResourceSlice>> {
    if (fail) return make_error("LIST the slice list: 503 Service Unavailable");
    return std::vector<dra::ResourceSlice>{};
  });
  reconciler_->run_once();
  EXPECT_EQ(dra_series(), four("nic-pool", "nic.example.com", 0, 1, 0, 0));

  fail = true;
  reconciler_->run_once();
  reconciler_->run_once();
  EXPECT_TRUE(dra_series().empty());
  EXPECT_THAT(metrics_.render(), Not(HasSubstr("hamisim_dra_template_mismatch")));
  EXPECT_EQ(log_.lines_with("ResourceSlices not compared with device profiles: LIST the slice "
                            "list: 503 Service Unavailable"),
            1)
      << log_.text();

  fail = false;
  reconciler_->run_once();
  EXPECT_EQ(dra_series(), four("nic-pool", "nic.example.com", 0, 1, 0, 0));
  EXPECT_EQ(log_.lines_with("ResourceSlices listed again"), 1) << log_.text();
}

// Through the source's own client, as serve wires it: a paged LIST from the fake API server
// (one slice per page).
TEST_F(ProfileReconcilerTest, SlicesAreListedPageByPageThroughTheSourcesClient) {
  ASSERT_NO_FATAL_FAILURE(start({node_json("n1", "nic-pool"), node_json("n2", "nic-pool")}));
  ASSERT_TRUE(server_->serve_resource_slices(
      {slice_json("n1-nic", "n1", 2), slice_json("n2-nic", "n2", 1)}));
  ASSERT_NO_FATAL_FAILURE(list_one_slice_a_page());
  reconciler_->run_once();
  EXPECT_EQ(dra_series(), four("nic-pool", "nic.example.com", 0, 0, 1, 0));
  EXPECT_EQ(server_->request_count("LIST", kResourceSlicesPath), 2);
}

TEST_F(ProfileReconcilerTest, AClusterThatServesNoSlicesIsAWarningAndNoSeries) {
  ASSERT_NO_FATAL_FAILURE(start({node_json("n1", "nic-pool")}));
  make_reconciler([&c = source_->client()](const std::atomic<bool>& cancel) {
    return list_resource_slices(c, &cancel);
  });
  reconciler_->run_once();
  reconciler_->run_once();
  EXPECT_TRUE(dra_series().empty());
  EXPECT_EQ(log_.lines_with("ResourceSlices not compared with device profiles"), 1) << log_.text();
  EXPECT_THAT(log_.text(), HasSubstr("404"));
}

TEST_F(ProfileReconcilerTest, AMalformedSliceInTheListIsNamedAndNothingIsCompared) {
  ASSERT_NO_FATAL_FAILURE(start({node_json("n1", "nic-pool")}));
  std::string bad = slice_json("n1-zz", "n1", 1);
  bad.replace(bad.find("\"resourceSliceCount\":1"), 22, "\"resourceSliceCount\":0");
  ASSERT_TRUE(server_->serve_resource_slices({slice_json("n1-nic", "n1", 2), bad}));
  // On the second page, where it is the first item: named by its place in the whole list.
  ASSERT_NO_FATAL_FAILURE(list_one_slice_a_page());
  reconciler_->run_once();
  EXPECT_TRUE(dra_series().empty());
  EXPECT_EQ(log_.lines_with("ResourceSlices not compared with device profiles: the slice list: "
                            "items[1]: spec.pool.resourceSliceCount: must be greater than zero ("),
            1)
      << log_.text();
}

// Without a profile in DRA form nothing is compared, so the cluster is never asked.
TEST_F(ProfileReconcilerTest, NoDraProfileNoList) {
  ASSERT_NO_FATAL_FAILURE(start({node_json("n1", "nic-pool")}));
  auto plain = profile::parse_device_profiles(
      "apiVersion: hamisim.io/v1\nkind: DeviceProfiles\nprofiles:\n  - name: a100\n"
      "    match: {labels: {pool: nic}}\n"
      "    devices: [{count: 1, split: 10, devmem: 81920, type: NVIDIA A100-SXM4-80GB}]\n",
      "profiles.yaml", registry_);
  ASSERT_TRUE(plain) << plain.error().message;
  profiles_ = std::make_shared<profile::DeviceProfiles>(std::move(plain).value());
  int lists = 0;
  make_reconciler([&](const std::atomic<bool>&) -> Result<std::vector<dra::ResourceSlice>> {
    ++lists;
    return std::vector<dra::ResourceSlice>{};
  });
  reconciler_->run_once();
  EXPECT_EQ(lists, 0);
  EXPECT_TRUE(dra_series().empty());
}

}  // namespace
}  // namespace hamisim::cli
