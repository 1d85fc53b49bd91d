#pragma once
// Prometheus metrics (text exposition format 0.0.4).
//
// Families are registered once (usually at startup) and hand out series by label values. A
// series is a stable object: look it up once and keep the reference, and the hot path is a
// single relaxed atomic add. Looking a series up by label values takes a shared lock on the
// family, so even un-cached lookups do not serialize readers.
//
// Families that mirror state owned elsewhere (the live path's devices, the process's /proc
// figures) are SnapshotFamily: a collector replaces all their series at each scrape, so a
// series of something that is gone disappears.
//
// Values print as Go's client_golang prints them (shortest form, exponent notation from 1e+06
// and below 1e-04), so hami_* series read byte for byte as HAMi's.
//
// Registration mistakes (bad names, the same name registered with another type or other label
// names, a wrong number of label values) are programming errors and throw
// std::invalid_argument; they never depend on request input.

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hamisim::server {

class Counter {
 public:
  void inc(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void add(double v) { value_.fetch_add(v, std::memory_order_relaxed); }
  void sub(double v) { value_.fetch_sub(v, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Histogram {
 public:
  // `upper_bounds` must be strictly increasing and finite; +Inf is implicit.
  explicit Histogram(std::span<const double> upper_bounds);

  void observe(double v);

  struct Snapshot {
    std::vector<uint64_t> cumulative;  // one per upper bound, then +Inf (== count)
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot snapshot() const;
  std::span<const double> upper_bounds() const { return bounds_; }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // bounds_.size() + 1 (last is +Inf)
  std::atomic<double> sum_{0.0};
};

// Latency buckets from 50µs to 10s.
inline constexpr double kLatencyBuckets[] = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                             0.005,   0.01,   0.025,   0.05,   0.1,   0.25,
                                             0.5,     1,      2.5,     5,      10};

namespace detail {
// Series keyed by label values; lookups accept string_views without allocating.
struct LabelValuesLess {
  using is_transparent = void;
  bool operator()(const std::vector<std::string>& a, const std::vector<std::string>& b) const;
  bool operator()(const std::vector<std::string>& a, std::span<const std::string_view> b) const;
  bool operator()(std::span<const std::string_view> a, const std::vector<std::string>& b) const;
};

class FamilyBase {
 public:
  enum class Type { kCounter, kGauge, kHistogram };
  FamilyBase(std::string name, std::string help, Type type, std::vector<std::string> label_names);
  virtual ~FamilyBase() = default;

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  Type type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  virtual void render(std::string& out) const = 0;

 protected:
  void check_arity(size_t n) const;

 private:
  std::string name_, help_;
  Type type_;
  std::vector<std::string> label_names_;
};

template <class Series>
class Family : public FamilyBase {
 public:
  using FamilyBase::FamilyBase;

  // The series for these label values (in the order of the family's label names), created on
  // first use. The reference stays valid for the registry's lifetime.
  Series& labels(std::span<const std::string_view> values);
  Series& labels(std::initializer_list<std::string_view> values) {
    return labels(std::span<const std::string_view>(values.begin(), values.size()));
  }

 protected:
  virtual std::unique_ptr<Series> make_series() const = 0;
  template <class F>
  void for_each(F&& f) const {
    std::shared_lock lock(mu_);
    for (const auto& [values, series] : series_) f(values, *series);
  }

 private:
  mutable std::shared_mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<Series>, LabelValuesLess> series_;
};
}  // namespace detail

class CounterFamily : public detail::Family<Counter> {
 public:
  using Family::Family;
  void render(std::string& out) const override;

 protected:
  std::unique_ptr<Counter> make_series() const override { return std::make_unique<Counter>(); }
};

class GaugeFamily : public detail::Family<Gauge> {
 public:
  using Family::Family;
  void render(std::string& out) const override;

 protected:
  std::unique_ptr<Gauge> make_series() const override { return std::make_unique<Gauge>(); }
};

class HistogramFamily : public detail::Family<Histogram> {
 public:
  HistogramFamily(std::string name, std::string help, std::vector<std::string> label_names,
                  std::vector<double> upper_bounds);
  void render(std::string& out) const override;
  const std::vector<double>& upper_bounds() const { return bounds_; }

 protected:
  std::unique_ptr<Histogram> make_series() const override {
    return std::make_unique<Histogram>(bounds_);
  }

 private:
  std::vector<double> bounds_;
};

// The label values of one series of a SnapshotFamily, in the order of the family's label names,
// kept in one string: a scrape of HAMi's families at 30,000 pods builds ~120,000 series, and a
// vector of strings each made allocation most of the scrape's time. Two encodings compare as
// their values do one by one (client_golang's order of series), and equal values encode
// equally: each value is written with its NUL bytes as 0x00 0xFF and ends with 0x00 0x01.
class LabelValues {
 public:
  LabelValues() = default;
  LabelValues(std::initializer_list<std::string_view> values);
  LabelValues& add(std::string_view value);
  size_t size() const { return count_; }
  // Calls f(std::string_view) with each value in turn.
  template <class F>
  void for_each(F&& f) const;
  friend bool operator==(const LabelValues&, const LabelValues&) = default;
  friend bool operator<(const LabelValues& a, const LabelValues& b) { return a.bytes_ < b.bytes_; }

 private:
  std::string bytes_;
  size_t count_ = 0;
};

// Series replaced as a whole by a collector at each scrape (state owned elsewhere). A family
// with no series is left out of the exposition, as client_golang leaves it out.
class SnapshotFamily : public detail::FamilyBase {
 public:
  struct Sample {
    LabelValues labels;
    double value = 0;
  };
  SnapshotFamily(std::string name, std::string help, Type type,
                 std::vector<std::string> label_names);
  // Replaces every series. Samples in any order; two with the same label values are a
  // programming error (the scrape would be invalid) and so is a wrong number of labels.
  void replace(std::vector<Sample> samples);
  // The same, with samples of equal label values added up into one series.
  void replace_summing(std::vector<Sample> samples);
  void render(std::string& out) const override;

 private:
  mutable std::mutex mu_;
  std::vector<Sample> samples_;  // sorted by label values
};

using MetricType = detail::FamilyBase::Type;

// Thread-safe. Registering a name again with the same type and label names (and buckets)
// returns the existing family, so independent components can share a metric.
class MetricsRegistry {
 public:
  MetricsRegistry();
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  CounterFamily& counter(std::string_view name, std::string_view help,
                         std::vector<std::string> label_names = {});
  GaugeFamily& gauge(std::string_view name, std::string_view help,
                     std::vector<std::string> label_names = {});
  HistogramFamily& histogram(std::string_view name, std::string_view help,
                             std::vector<std::string> label_names,
                             std::span<const double> upper_bounds = kLatencyBuckets);

  // A family whose series a collector replaces at each scrape (type kGauge or kCounter).
  SnapshotFamily& snapshot(std::string_view name, std::string_view help, MetricType type,
                           std::vector<std::string> label_names = {});

  // Runs before every render, to refresh gauges that mirror state owned elsewhere (the live
  // path's nodes and allocations) only when someone scrapes. Must not call render().
  void add_collector(std::function<void()> collect);

  // Prometheus text format 0.0.4; families sorted by name, series by label values.
  std::string render() const;

  static constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

 private:
  mutable std::shared_mutex mu_;
  std::map<std::string, std::unique_ptr<detail::FamilyBase>, std::less<>> families_;
  mutable std::mutex collectors_mu_;  // also serializes collection between concurrent scrapes
  std::vector<std::function<void()>> collectors_;
  mutable std::atomic<size_t> last_render_size_{0};
};

// --- template implementation ---

template <class F>
void LabelValues::for_each(F&& f) const {
  std::string unescaped;  // only for a value with NUL bytes in it
  const char* p = bytes_.data();
  const char* const end = p + bytes_.size();
  while (p < end) {
    // Every 0x00 is followed by 0x01 (the value's end) or 0xFF (a NUL of the value).
    const char* nul = static_cast<const char*>(std::memchr(p, 0, end - p));
    if (nul[1] == '\1') {
      f(std::string_view(p, nul - p));
    } else {
      unescaped.clear();
      for (; nul[1] != '\1'; nul = static_cast<const char*>(std::memchr(p, 0, end - p))) {
        unescaped.append(p, nul + 1);
        p = nul + 2;
      }
      unescaped.append(p, nul);
      f(std::string_view(unescaped));
    }
    p = nul + 2;
  }
}

namespace detail {
template <class Series>
Series& Family<Series>::labels(std::span<const std::string_view> values) {
  check_arity(values.size());
  {
    std::shared_lock lock(mu_);
    auto it = series_.find(values);
    if (it != series_.end()) return *it->second;
  }
  std::unique_lock lock(mu_);
  auto it = series_.find(values);
  if (it != series_.end()) return *it->second;
  std::vector<std::string> key(values.begin(), values.end());
  return *series_.emplace(std::move(key), make_series()).first->second;
}
}  // namespace detail

}  // namespace hamisim::server
