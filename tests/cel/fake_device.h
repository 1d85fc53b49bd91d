#pragma once
// A Device for tests: attributes and capacities in maps by domain, then name.

#include <map>
#include <string>
#include <utility>

#include "cel/selector.h"
#include "model/quantity.h"

namespace hamisim::cel::testing {

class FakeDevice : public Device {
 public:
  explicit FakeDevice(std::string driver) : driver_(std::move(driver)) {}

  FakeDevice& attr(const std::string& domain, const std::string& id, Attribute value) {
    attributes_[domain][id] = std::move(value);
    return *this;
  }
  FakeDevice& cap(const std::string& domain, const std::string& id, std::string_view quantity) {
    capacity_[domain][id] = model::Quantity::parse(quantity).value();
    return *this;
  }
  FakeDevice& multi(bool v) {
    multi_ = v;
    return *this;
  }

  std::string_view driver() const override { return driver_; }
  bool allow_multiple_allocations() const override { return multi_; }
  const Attribute* attribute(std::string_view domain, std::string_view id) const override {
    return find(attributes_, domain, id);
  }
  const model::Quantity* capacity(std::string_view domain, std::string_view id) const override {
    return find(capacity_, domain, id);
  }
  Names attribute_names() const override { return names(attributes_); }
  Names capacity_names() const override { return names(capacity_); }

 private:
  std::string driver_;
  bool multi_ = false;
  // Lookups by string_view allocate nothing (transparent comparators), so tests can count
  // the evaluator's own allocations.
  template <class V>
  using Domains = std::map<std::string, std::map<std::string, V, std::less<>>, std::less<>>;

  template <class V>
  static const V* find(const Domains<V>& m, std::string_view domain, std::string_view id) {
    auto d = m.find(domain);
    if (d == m.end()) return nullptr;
    auto it = d->second.find(id);
    return it == d->second.end() ? nullptr : &it->second;
  }

  template <class V>
  static Names names(const Domains<V>& m) {
    Names out;
    for (const auto& [domain, ids] : m) {
      for (const auto& [id, value] : ids) out.emplace_back(domain, id);
    }
    return out;
  }

  Domains<Attribute> attributes_;
  Domains<model::Quantity> capacity_;
};

}  // namespace hamisim::cel::testing
