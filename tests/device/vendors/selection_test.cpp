// The type and UUID selection annotations of every vendor follow one rule (device/selection.h,
// issue #22): a blank value is no constraint; any other value is a constraint whose items are
// trimmed one by one, and a blank item matches nothing, so `","` or `" , "` on a use-key admits
// no device. Each vendor keeps its own way of comparing (UUIDs exactly, types as case-insensitive
// substrings) and HAMi's exceptions (MetaX GPU and Enflame GCU read no UUID key; Cambricon's,
// Biren's and Vastai's type keys exist but are never read).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/selection.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace selection_test {

using device::SelectionList;
using device::TypeSelection;
using device::UuidSelection;

// --- the rule itself -------------------------------------------------------------------------

TEST(SelectionList, BlankValuesAreNoConstraint) {
  // "\xc2\xa0" is U+00A0, white space to Go's strings.TrimSpace.
  for (const char* v : {"", " ", "\t\n\v\f\r ", "\xc2\xa0"}) {
    const SelectionList l = SelectionList::parse(v);
    EXPECT_FALSE(l.constrains()) << "'" << v << "'";
    EXPECT_TRUE(l.items().empty());
  }
}

TEST(SelectionList, ItemsAreTrimmedAndBlankItemsKeptOut) {
  EXPECT_TRUE(SelectionList::parse(",").constrains());
  EXPECT_TRUE(SelectionList::parse(" , ").items().empty());
  EXPECT_TRUE(SelectionList::parse(" , ").constrains());
  EXPECT_EQ(SelectionList::parse("A, ,B").items(), (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(SelectionList::parse(" \tA ,\xc2\xa0"
                                 "B\n")
                .items(),
            (std::vector<std::string>{"A", "B"}));
  // Only the ends of an item are trimmed.
  EXPECT_EQ(SelectionList::parse(" Tesla T4 ").items(), (std::vector<std::string>{"Tesla T4"}));
}

TEST(SelectionList, AbsentOrUnreadKeyIsNoConstraint) {
  model::ObjectMeta meta;
  meta.annotations["k"] = ",";
  EXPECT_TRUE(SelectionList::read(meta, "k").constrains());
  EXPECT_FALSE(SelectionList::read(meta, "other").constrains());
  EXPECT_FALSE(SelectionList::read(meta, "").constrains());
}

TEST(SelectionList, UuidsCompareExactlyAndBlankItemsMatchNothing) {
  const UuidSelection use{SelectionList::parse(" , "), {}};
  EXPECT_FALSE(use.allows("GPU-0"));
  EXPECT_FALSE(use.allows(""));  // not even a device without an ID
  const UuidSelection list{SelectionList::parse("GPU-0, ,GPU-1"), {}};
  EXPECT_TRUE(list.allows("GPU-1"));
  EXPECT_FALSE(list.allows("gpu-1"));
  EXPECT_FALSE(list.allows("GPU-"));
  const UuidSelection nouse{{}, SelectionList::parse(",")};
  EXPECT_TRUE(nouse.allows("GPU-0"));
  EXPECT_TRUE(nouse.allows(""));
  // Both lists apply.
  const UuidSelection both{SelectionList::parse("GPU-0,GPU-1"), SelectionList::parse("GPU-1")};
  EXPECT_TRUE(both.allows("GPU-0"));
  EXPECT_FALSE(both.allows("GPU-1"));
}

TEST(SelectionList, TypesAreCaseInsensitiveSubstringsAndBlankItemsMatchNothing) {
  const TypeSelection use{SelectionList::parse(" , "), {}};
  EXPECT_FALSE(use.allows("NVIDIA-Tesla T4"));
  const TypeSelection t4{SelectionList::parse("a100, ,t4"), {}};
  EXPECT_TRUE(t4.allows("NVIDIA-Tesla T4"));
  EXPECT_FALSE(t4.allows("NVIDIA-Tesla V100"));
  // A blank nouse item would be a substring of every type; it excludes nothing.
  const TypeSelection nouse{{}, SelectionList::parse("V100,")};
  EXPECT_TRUE(nouse.allows("NVIDIA-Tesla T4"));
  EXPECT_FALSE(nouse.allows("NVIDIA-Tesla V100"));
}

// --- every vendor, end to end ---------------------------------------------------------------

// One vendor's node with two devices, the pod resources asking one of them, and the selection
// keys the vendor reads.
struct Vendor {
  std::string name;    // for messages
  std::string vendor;  // request type / PodDevices key
  model::Node node;
  model::Container main;                                       // asks one device
  std::vector<std::pair<std::string, std::string>> uuid_keys;  // (use, nouse) pairs read
  std::pair<std::string, std::string> type_keys;               // empty when not read
  std::vector<std::string> type_words;  // per device (registration order): a type substring
};

std::string json_devices(const std::vector<std::string>& entries) {
  std::string out = "[";
  for (size_t i = 0; i < entries.size(); ++i) out += (i ? "," : "") + entries[i];
  return out + "]";
}

std::string json_device(std::string id, int index, std::string type, int devmem = 32768) {
  return R"({"id":")" + id + R"(","index":)" + std::to_string(index) + R"(,"count":4,"devmem":)" +
         std::to_string(devmem) + R"(,"devcore":100,"type":")" + type + R"(","health":true})";
}

std::vector<Vendor> vendors() {
  std::vector<Vendor> v;
  v.push_back({"NVIDIA",
               "NVIDIA",
               NodeBuilder("nv")
                   .gpus({gpu("GPU-0").with_type("NVIDIA-Tesla T4"),
                          gpu("GPU-1").with_index(1).with_type("NVIDIA A100-SXM4-40GB")})
                   .build(),
               container("main", {{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem", "1000"}}),
               {{"nvidia.com/use-gpuuuid", "nvidia.com/nouse-gpuuuid"}},
               {"nvidia.com/use-gputype", "nvidia.com/nouse-gputype"},
               {"t4", "A100"}});
  v.push_back({"AMD",
               "AMD",
               vendor_node("amd",
                           {{"hami.io/node-amd-register",
                             json_devices({json_device("amd-0", 0, "AMD Instinct MI300X VF"),
                                           json_device("amd-1", 1, "AMD Instinct MI250X")})}},
                           {{"amd.com/gpu", "2"}}),
               container("main", {{"amd.com/gpu", "1"}}),
               {{"amd.com/use-gpu-uuid", "amd.com/nouse-gpu-uuid"}},
               {"amd.com/use-gputype", "amd.com/nouse-gputype"},
               {"mi300", "MI250"}});
  v.push_back({"Hygon",
               "DCU",
               vendor_node("dcu", {{"hami.io/node-dcu-register",
                                    "dcu-0,10,65520,100,DCU-K100_AI,0,true,0,hami-core:"
                                    "dcu-1,10,65520,100,DCU-Z100,0,true,1,hami-core:"}}),
               container("main", {{"hygon.com/dcunum", "1"}}),
               {{"hygon.com/use-gpuuuid", "hygon.com/nouse-gpuuuid"}},
               {"hygon.com/use-dcutype", "hygon.com/nouse-dcutype"},
               {"k100", "Z100"}});
  v.push_back({"Cambricon",
               "MLU",
               vendor_node("mlu", {},
                           {{"cambricon.com/mlu.smlu.vcore", "200"},
                            {"cambricon.com/mlu.smlu.vmemory", "64"}}),
               container("main", {{"cambricon.com/vmlu", "1"}}),
               {{"cambricon.com/use-gpuuuid", "cambricon.com/nouse-gpuuuid"}},
               {},
               {}});
  v.push_back({"Iluvatar",
               "MR-V100",
               vendor_node("ilu", {{"hami.io/node-MR-V100-register",
                                    "ilu-0,10,8192,100,MR-V100,0,true,0,hami-core:"
                                    "ilu-1,10,8192,100,MR-V100,0,true,1,hami-core:"}}),
               container("main", {{"iluvatar.ai/MR-V100-vgpu", "1"}}),
               {{"hami.io/use-MR-V100-uuid", "hami.io/no-use-MR-V100-uuid"}},
               {},
               {}});
  v.push_back({"Ascend",
               "Ascend910B3",
               vendor_node("npu", {{"hami.io/node-register-Ascend910B3",
                                    json_devices({json_device("npu-0", 0, "Ascend910B3"),
                                                  json_device("npu-1", 1, "Ascend910B3")})}}),
               container("main", {{"huawei.com/Ascend910B3", "1"}}),
               {{"hami.io/use-Ascend910B3-uuid", "hami.io/no-use-Ascend910B3-uuid"}},
               {},
               {}});
  {
    model::Node aws = vendor_node(
        "aws", {}, {{"aws.amazon.com/neuron", "2"}, {"aws.amazon.com/neuroncore", "4"}});
    aws.metadata.labels["node.kubernetes.io/instance-type"] = "inf2.24xlarge";
    v.push_back({"AWS Neuron",
                 "AWSNeuron",
                 aws,
                 container("main", {{"aws.amazon.com/neuron", "1"}}),
                 {{"aws.amazon.com/use-neuron-uuid", "aws.amazon.com/nouse-neuron-uuid"}},
                 {},
                 {}});
  }
  v.push_back({"Biren",
               "Biren",
               vendor_node("biren", {{"hami.io/node-biren-register",
                                      json_devices({json_device("br-0", 0, "Biren"),
                                                    json_device("br-1", 1, "Biren")})}}),
               container("main", {{"birentech.com/gpu", "1"}}),
               {{"birentech.com/use-gpuuuid", "birentech.com/nouse-gpuuuid"}},
               {},
               {}});
  v.push_back({"Vastai",
               "Vastai",
               vendor_node("va", {{"hami.io/node-va-register",
                                   json_devices({json_device("va-0", 0, "Vastai"),
                                                 json_device("va-1", 1, "Vastai")})}}),
               container("main", {{"vastaitech.com/va", "1"}}),
               {{"vastaitech.com/use-gpuuuid", "vastaitech.com/nouse-gpuuuid"}},
               {},
               {}});
  v.push_back({"Enflame DRS",
               "Enflame",
               vendor_node("drs", {{"enflame.com/gcu-drs-capacity",
                                    R"({"devices":[{"index":"0","minor":"0","capacity":6},)"
                                    R"({"index":"1","minor":"1","capacity":6}],)"
                                    R"("profiles":{"1g.6gb":"0","3g.20gb":"1","6g.40gb":"2"}})"}}),
               container("main", {{"enflame.com/drs-gcu", "1"}}),
               {{"enflame.com/use-gpuuuid", "enflame.com/nouse-gpuuuid"}},
               {},
               {}});
  // Both Kunlunxin backends read two pairs of keys; each pair alone must follow the rule.
  for (const auto& keys :
       {std::pair<std::string, std::string>{"hami.io/use-xpu-uuid", "hami.io/no-use-xpu-uuid"},
        std::pair<std::string, std::string>{"baidu.com/use-gpuuuid", "baidu.com/nouse-gpuuuid"}}) {
    v.push_back({"Kunlunxin (" + keys.first + ")",
                 "kunlun",
                 vendor_node("kl", {}, {{"kunlunxin.com/xpu", "2"}}),
                 container("main", {{"kunlunxin.com/xpu", "1"}}),
                 {keys},
                 {},
                 {}});
    v.push_back({"Kunlunxin vXPU (" + keys.first + ")",
                 "XPU",
                 vendor_node("xn", {{"hami.io/node-register-xpu",
                                     json_devices({json_device("xpu-0", 0, "XPU", 98304),
                                                   json_device("xpu-1", 1, "XPU", 98304)})}}),
                 container("main", {{"kunlunxin.com/vxpu", "1"}}),
                 {keys},
                 {},
                 {}});
  }
  v.push_back(
      {"MetaX sGPU",
       "Metax-SGPU",
       vendor_node("sgpu",
                   {{"metax-tech.com/node-gpu-devices",
                     R"([{"uuid":"sg-0","model":"sgpu","totalDevCount":16,"totalCompute":100,)"
                     R"("totalVRam":32768,"healthy":true},)"
                     R"({"uuid":"sg-1","model":"sgpu","totalDevCount":16,"totalCompute":100,)"
                     R"("totalVRam":32768,"healthy":true}])"}}),
       container("main", {{"metax-tech.com/sgpu", "1"}, {"metax-tech.com/vcore", "10"}}),
       {{"metax-tech.com/use-gpuuuid", "metax-tech.com/nouse-gpuuuid"}},
       {},
       {}});
  v.push_back({"Moore Threads",
               "Mthreads",
               vendor_node("mt", {},
                           {{"mthreads.com/sgpu-core", "32"}, {"mthreads.com/sgpu-memory", "192"}}),
               container("main", {{"mthreads.com/vgpu", "1"}}),
               {{"mthreads.ai/use-gpuuuid", "mthreads.ai/nouse-gpuuuid"}},
               {},
               {}});
  return v;
}

struct Outcome {
  bool fits = false;
  std::string chosen;  // the device of a fit
  std::string reason;  // the failure of a misfit
};

class VendorSelection : public ::testing::Test {
 protected:
  const device::DeviceRegistry registry_ = chart_registry();

  // The vendor's device IDs in registration order.
  std::vector<std::string> ids(const Vendor& v) const {
    const DescriptionResult inv = read_registered_description(v.node, registry_);
    EXPECT_EQ(inv.state, DescriptionResult::State::kOk) << v.name << ": " << inv.message;
    std::vector<std::string> out;
    for (const device::DeviceInfo& d : inv.description.devices) {
      if (d.device_vendor == v.vendor) out.push_back(d.id);
    }
    return out;
  }

  Outcome run(const Vendor& v, std::map<std::string, std::string> annotations) const {
    PodBuilder b("p");
    b.app(v.main);
    for (auto& [k, val] : annotations) b.annotate(k, val);
    const NodeFit f = fit_on(b.build(), v.node, registry_);
    Outcome out;
    out.fits = f.fits;
    out.reason = f.reason;
    if (f.fits) {
      auto it = f.devices.find(v.vendor);
      if (it != f.devices.end() && !it->second.empty() && !it->second[0].empty()) {
        out.chosen = it->second[0][0].uuid;
      }
    }
    return out;
  }
};

// A fit on `device`.
::testing::AssertionResult fits_on(const Outcome& o, const std::string& device) {
  if (!o.fits) return ::testing::AssertionFailure() << "does not fit: " << o.reason;
  if (o.chosen != device) return ::testing::AssertionFailure() << "fits on " << o.chosen;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult fails_with(const Outcome& o, const std::string& reason) {
  if (o.fits) return ::testing::AssertionFailure() << "fits on " << o.chosen;
  if (o.reason != reason) return ::testing::AssertionFailure() << "fails with " << o.reason;
  return ::testing::AssertionSuccess();
}

TEST_F(VendorSelection, UuidKeysOfEveryVendor) {
  for (const Vendor& v : vendors()) {
    SCOPED_TRACE(v.name);
    const std::vector<std::string> id = ids(v);
    ASSERT_EQ(id.size(), 2u);
    const Outcome base = run(v, {});
    ASSERT_TRUE(base.fits) << base.reason;
    const std::string& pick = base.chosen;
    const std::string& other = pick == id[0] ? id[1] : id[0];
    const std::string none = "2/2 CardUuidMismatch";
    for (const auto& [use, nouse] : v.uuid_keys) {
      SCOPED_TRACE(use);
      // Blank: no constraint.
      for (const char* blank : {"", "  ", " \t "}) {
        EXPECT_TRUE(fits_on(run(v, {{use, blank}}), pick)) << "use '" << blank << "'";
        EXPECT_TRUE(fits_on(run(v, {{nouse, blank}}), pick)) << "nouse '" << blank << "'";
      }
      // Not blank, every item blank: use admits nothing, nouse excludes nothing.
      for (const char* empty_items : {",", " , ", ",,"}) {
        EXPECT_TRUE(fails_with(run(v, {{use, empty_items}}), none)) << "'" << empty_items << "'";
        EXPECT_TRUE(fits_on(run(v, {{nouse, empty_items}}), pick)) << "'" << empty_items << "'";
      }
      // Blank items among real ones are skipped; items are trimmed; matches are exact.
      EXPECT_TRUE(fits_on(run(v, {{use, other + ", ,no-such-device"}}), other));
      EXPECT_TRUE(fits_on(run(v, {{use, " \t" + other + " "}}), other));
      EXPECT_TRUE(fits_on(run(v, {{use, " " + id[0] + " , " + id[1] + " "}}), pick));
      EXPECT_TRUE(fails_with(run(v, {{use, other.substr(0, other.size() - 1)}}), none));
      EXPECT_TRUE(fits_on(run(v, {{nouse, pick + ", ,no-such-device"}}), other));
      EXPECT_TRUE(fits_on(run(v, {{nouse, " " + pick + " "}}), other));
      EXPECT_TRUE(fails_with(run(v, {{nouse, id[0] + " , ," + id[1]}}), none));
      // use and nouse both apply.
      EXPECT_TRUE(fits_on(run(v, {{use, id[0] + "," + id[1]}, {nouse, pick}}), other));
      EXPECT_TRUE(fails_with(run(v, {{use, other}, {nouse, " , " + other}}), none));
    }
  }
}

TEST_F(VendorSelection, TypeKeysOfEveryVendorThatReadsThem) {
  int vendors_with_type_keys = 0;
  for (const Vendor& v : vendors()) {
    if (v.type_keys.first.empty()) continue;
    ++vendors_with_type_keys;
    SCOPED_TRACE(v.name);
    const auto& [use, nouse] = v.type_keys;
    const std::vector<std::string> id = ids(v);
    ASSERT_EQ(id.size(), 2u);
    ASSERT_EQ(v.type_words.size(), 2u);
    const Outcome base = run(v, {});
    ASSERT_TRUE(base.fits) << base.reason;
    const size_t p = base.chosen == id[0] ? 0 : 1;
    const size_t o = 1 - p;
    const std::string none = "2/2 CardTypeMismatch";
    for (const char* blank : {"", "  ", "\n"}) {
      EXPECT_TRUE(fits_on(run(v, {{use, blank}}), id[p])) << "use '" << blank << "'";
      EXPECT_TRUE(fits_on(run(v, {{nouse, blank}}), id[p])) << "nouse '" << blank << "'";
    }
    for (const char* empty_items : {",", " , ", ", ,"}) {
      EXPECT_TRUE(fails_with(run(v, {{use, empty_items}}), none)) << "'" << empty_items << "'";
      EXPECT_TRUE(fits_on(run(v, {{nouse, empty_items}}), id[p])) << "'" << empty_items << "'";
    }
    EXPECT_TRUE(fits_on(run(v, {{use, v.type_words[o] + ", ,no-such-model"}}), id[o]));
    EXPECT_TRUE(fits_on(run(v, {{use, "  " + v.type_words[o] + "\t"}}), id[o]));
    EXPECT_TRUE(fails_with(run(v, {{use, "no-such-model, "}}), none));
    EXPECT_TRUE(fits_on(run(v, {{nouse, v.type_words[p] + ", "}}), id[o]));
    EXPECT_TRUE(fits_on(run(v, {{nouse, " , " + v.type_words[p] + " "}}), id[o]));
    EXPECT_TRUE(fails_with(run(v, {{nouse, v.type_words[0] + " , ," + v.type_words[1]}}), none));
    // The type check comes before the UUID check.
    const std::string uuid_use = v.uuid_keys.front().first;
    EXPECT_TRUE(fails_with(run(v, {{use, ","}, {uuid_use, ","}}), none));
  }
  EXPECT_EQ(vendors_with_type_keys, 3);  // NVIDIA, AMD, Hygon
}

// HAMi's exceptions: keys a backend never reads stay without effect, whatever their value.
TEST_F(VendorSelection, KeysABackendDoesNotReadChangeNothing) {
  struct Unread {
    std::string name;
    model::Node node;
    model::Container main;
    std::vector<std::string> keys;
  };
  const std::vector<Unread> cases = {
      // MetaX GPU: the UUID check always passes (B.10.a), although MetaX sGPU reads these keys.
      {"MetaX GPU",
       vendor_node("mx", {}, {{"metax-tech.com/gpu", "2"}}),
       container("main", {{"metax-tech.com/gpu", "1"}}),
       {"metax-tech.com/use-gpuuuid", "metax-tech.com/nouse-gpuuuid"}},
      // Enflame GCU reads no pod annotation (B.6.a); DRS's keys are not its own.
      {"Enflame GCU",
       vendor_node("gcu", {}, {{"enflame.com/gcu", "2"}}),
       container("main", {{"enflame.com/gcu", "1"}}),
       {"enflame.com/use-gpuuuid", "enflame.com/nouse-gpuuuid"}},
      // Defined in HAMi but never read (Appendix A, B.4, B.12).
      {"Cambricon",
       vendor_node(
           "mlu", {},
           {{"cambricon.com/mlu.smlu.vcore", "200"}, {"cambricon.com/mlu.smlu.vmemory", "64"}}),
       container("main", {{"cambricon.com/vmlu", "1"}}),
       {"cambricon.com/use-mlutype", "cambricon.com/nouse-mlutype"}},
      {"Biren",
       vendor_node("biren", {{"hami.io/node-biren-register",
                              json_devices({json_device("br-0", 0, "Biren"),
                                            json_device("br-1", 1, "Biren")})}}),
       container("main", {{"birentech.com/gpu", "1"}}),
       {"birentech.com/use-biren", "birentech.com/nouse-biren"}},
      {"Vastai",
       vendor_node(
           "va", {{"hami.io/node-va-register", json_devices({json_device("va-0", 0, "Vastai"),
                                                             json_device("va-1", 1, "Vastai")})}}),
       container("main", {{"vastaitech.com/va", "1"}}),
       {"vastaitech.com/use-va", "vastaitech.com/nouse-va"}},
  };
  for (const Unread& c : cases) {
    SCOPED_TRACE(c.name);
    const NodeFit base = fit_on(PodBuilder("p").app(c.main).build(), c.node, registry_);
    ASSERT_TRUE(base.fits) << base.reason;
    for (const std::string& key : c.keys) {
      for (const char* value : {",", " , ", "no-such-device"}) {
        PodBuilder b("p");
        b.app(c.main).annotate(key, value);
        const NodeFit f = fit_on(b.build(), c.node, registry_);
        EXPECT_TRUE(f.fits) << key << ": '" << value << "': " << f.reason;
        EXPECT_EQ(f.devices, base.devices) << key << ": '" << value << "'";
      }
    }
  }
}

}  // namespace selection_test
}  // namespace hamisim::fit::testing
