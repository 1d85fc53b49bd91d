#pragma once
// A Device for tests: attributes and capacities in maps, filed by (domain, name).

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
    attributes_[{domain, id}] = std::move(value);
    return *this;
  }
  FakeDevice& cap(const std::string& domain, const std::string& id, std::string_view quantity) {
    capacity_[{domain, id}] = model::Quantity::parse(quantity).value();
    return *this;
  }
  FakeDevice& multi(bool v) {
    multi_ = v;
    return *this;
  }

  std::string_view driver() const override { return driver_; }
  bool allow_multiple_allocations() const override { return multi_; }
  const Attribute* attribute(std::string_view domain, std::string_view id) const override {
    auto it = attributes_.find({std::string(domain), std::string(id)});
    return it == attributes_.end() ? nullptr : &it->second;
  }
  const model::Quantity* capacity(std::string_view domain, std::string_view id) const override {
    auto it = capacity_.find({std::string(domain), std::string(id)});
    return it == capacity_.end() ? nullptr : &it->second;
  }

 private:
  std::string driver_;
  bool multi_ = false;
  std::map<std::pair<std::string, std::string>, Attribute> attributes_;
  std::map<std::pair<std::string, std::string>, model::Quantity> capacity_;
};

}  // namespace hamisim::cel::testing
