#pragma once
// Strict decoding of the resource.k8s.io objects (objects.h) from JSON, as the API server's
// strict field validation reads them: keys match exactly, a repeated key is an error, and so is
// a field hamisim does not know. A simulator that skipped a field it does not understand
// could place a pod where the real scheduler would not; docs/dra.md lists the fields that are
// read and dropped because they do not affect placement. Values are validated with the API's
// rules that matter to placement (names, exactly-one-of members, counts, request policies,
// semantic versions; ../shared/reference/dra.md §1.9).
//
// Every error starts with the field path, prefixed with `path` ("items[4].spec.devices[0].
// capacity[memory].requestPolicy.default: ...").
//
// Versions: v1 and v1beta2 share one shape; v1beta1 and v1alpha3 wrap a device's fields in
// `basic` and write a request's fields flat (they are moved into `exactly`, or kept as
// `firstAvailable`); v1alpha3 writes a capacity as a bare quantity.

#include <string_view>

#include <vector>

#include "dra/objects.h"
#include "model/decode.h"
#include "model/result.h"

namespace hamisim::dra {

// The kinds this decoder reads, by apiVersion and kind.
bool is_dra_kind(std::string_view api_version, std::string_view kind);

// Decodes one object of a DRA kind and appends it to `out`. `json` needs no padding.
Status decode_object(std::string_view json, std::string_view path, Objects& out);

// Every DRA item a cluster input kept (model::ObjectSet::dra_objects), appended to `out`;
// errors name the item. The DeviceTaintRules among them are applied to the slices
// (apply_device_taint_rules), so the slices read as kube-scheduler 1.37 sees them.
Status decode_objects(const std::vector<model::RawObject>& items, Objects& out);

// Adds each DeviceTaintRule's taint to the devices of `objects.slices` it selects (by driver,
// pool and device name), as kube-scheduler's ResourceSlice tracker does before allocating.
// Call once, after every object is decoded.
void apply_device_taint_rules(Objects& objects);

// One kind, for tests and tools that expect it ("expected kind ResourceSlice, got ...").
Result<ResourceSlice> decode_resource_slice(std::string_view json);
Result<DeviceClass> decode_device_class(std::string_view json);
Result<ResourceClaim> decode_resource_claim(std::string_view json);
Result<ResourceClaimTemplate> decode_resource_claim_template(std::string_view json);

}  // namespace hamisim::dra
