#include "server/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

namespace hamisim::server {
namespace {

bool valid_metric_name(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool valid_label_name(std::string_view s) {
  if (s.empty() || s.starts_with("__") || s == "le") return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

void append_escaped(std::string& out, std::string_view s, bool quote) {
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

void append_number(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    // Go's strconv.FormatFloat(v, 'g', -1, 64), which client_golang uses: the shortest digits
    // that round-trip, in exponent form when the decimal exponent is < -4 or >= 6 (the
    // exponent with a sign and at least two digits: 1.048576e+06, 5e-05).
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    std::string_view sci(buf, end - buf);
    const size_t e = sci.find('e');
    int exponent = 0;
    std::from_chars(sci.data() + e + (sci[e + 1] == '+' ? 2 : 1), sci.data() + sci.size(),
                    exponent);
    if (v == 0 || (exponent >= -4 && exponent < 6)) {
      auto [fend, fec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
      out.append(buf, fend);
    } else {
      out += sci;
    }
  }
}

// `{a="x",b="y"` plus an optional extra label, closed with `}`; nothing when there are no
// labels at all.
void append_labels(std::string& out, const std::vector<std::string>& names,
                   const std::vector<std::string>& values, std::string_view extra_name = {},
                   std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) return;
  out += '{';
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    out += names[i];
    out += "=\"";
    append_escaped(out, values[i], true);
    out += '"';
  }
  if (!extra_name.empty()) {
    if (!names.empty()) out += ',';
    out += extra_name;
    out += "=\"";
    out += extra_value;
    out += '"';
  }
  out += '}';
}

void append_labels(std::string& out, const std::vector<std::string>& names,
                   const LabelValues& values) {
  if (names.empty()) return;
  out += '{';
  size_t i = 0;
  values.for_each([&](std::string_view value) {
    if (i) out += ',';
    out += names[i++];
    out += "=\"";
    append_escaped(out, value, true);
    out += '"';
  });
  out += '}';
}

void append_header(std::string& out, const detail::FamilyBase& f, std::string_view type) {
  out += "# HELP ";
  out += f.name();
  out += ' ';
  append_escaped(out, f.help(), false);
  out += "\n# TYPE ";
  out += f.name();
  out += ' ';
  out += type;
  out += '\n';
}

template <class A, class B>
bool lexicographic_less(const A& a, const B& b) {
  return std::lexicographical_compare(
      a.begin(), a.end(), b.begin(), b.end(),
      [](const auto& x, const auto& y) { return std::string_view(x) < std::string_view(y); });
}

}  // namespace

// --- Histogram ---

Histogram::Histogram(std::span<const double> upper_bounds)
    : bounds_(upper_bounds.begin(), upper_bounds.end()),
      buckets_(new std::atomic<uint64_t>[upper_bounds.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void Histogram::observe(double v) {
  // Prometheus buckets are inclusive upper bounds: v lands in the first bound >= v.
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.cumulative.reserve(bounds_.size() + 1);
  uint64_t total = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    total += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative.push_back(total);
  }
  // The count is derived from the buckets so that a scrape is always self-consistent.
  s.count = total;
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

// --- families ---

namespace detail {

bool LabelValuesLess::operator()(const std::vector<std::string>& a,
                                 const std::vector<std::string>& b) const {
  return a < b;
}
bool LabelValuesLess::operator()(const std::vector<std::string>& a,
                                 std::span<const std::string_view> b) const {
  return lexicographic_less(a, b);
}
bool LabelValuesLess::operator()(std::span<const std::string_view> a,
                                 const std::vector<std::string>& b) const {
  return lexicographic_less(a, b);
}

FamilyBase::FamilyBase(std::string name, std::string help, Type type,
                       std::vector<std::string> label_names)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)) {
  if (!valid_metric_name(name_)) throw std::invalid_argument("invalid metric name: " + name_);
  for (const auto& l : label_names_) {
    if (!valid_label_name(l)) {
      throw std::invalid_argument(fmt::format("metric {}: invalid label name: {}", name_, l));
    }
  }
}

void FamilyBase::check_arity(size_t n) const {
  if (n != label_names_.size()) {
    throw std::invalid_argument(fmt::format("metric {}: {} label values given, {} expected", name_,
                                            n, label_names_.size()));
  }
}

}  // namespace detail

void CounterFamily::render(std::string& out) const {
  append_header(out, *this, "counter");
  for_each([&](const std::vector<std::string>& values, const Counter& c) {
    out += name();
    append_labels(out, label_names(), values);
    fmt::format_to(std::back_inserter(out), " {}\n", c.value());
  });
}

void GaugeFamily::render(std::string& out) const {
  append_header(out, *this, "gauge");
  for_each([&](const std::vector<std::string>& values, const Gauge& g) {
    out += name();
    append_labels(out, label_names(), values);
    out += ' ';
    append_number(out, g.value());
    out += '\n';
  });
}

HistogramFamily::HistogramFamily(std::string name, std::string help,
                                 std::vector<std::string> label_names,
                                 std::vector<double> upper_bounds)
    : Family(std::move(name), std::move(help), Type::kHistogram, std::move(label_names)),
      bounds_(std::move(upper_bounds)) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (!std::isfinite(bounds_[i]) || (i > 0 && !(bounds_[i - 1] < bounds_[i]))) {
      throw std::invalid_argument(
          fmt::format("metric {}: bucket bounds must be finite and increasing", this->name()));
    }
  }
}

void HistogramFamily::render(std::string& out) const {
  append_header(out, *this, "histogram");
  std::string le;
  for_each([&](const std::vector<std::string>& values, const Histogram& h) {
    Histogram::Snapshot s = h.snapshot();
    for (size_t i = 0; i <= bounds_.size(); ++i) {
      le.clear();
      append_number(le, i < bounds_.size() ? bounds_[i] : INFINITY);
      out += name();
      out += "_bucket";
      append_labels(out, label_names(), values, "le", le);
      fmt::format_to(std::back_inserter(out), " {}\n", s.cumulative[i]);
    }
    out += name();
    out += "_sum";
    append_labels(out, label_names(), values);
    out += ' ';
    append_number(out, s.sum);
    out += '\n';
    out += name();
    out += "_count";
    append_labels(out, label_names(), values);
    fmt::format_to(std::back_inserter(out), " {}\n", s.count);
  });
}

// --- snapshot families ---

LabelValues::LabelValues(std::initializer_list<std::string_view> values) {
  size_t bytes = 0;
  for (std::string_view v : values) bytes += v.size() + 2;
  bytes_.reserve(bytes);
  for (std::string_view v : values) add(v);
}

LabelValues& LabelValues::add(std::string_view value) {
  for (size_t nul = value.find('\0'); nul != std::string_view::npos; nul = value.find('\0')) {
    bytes_.append(value.data(), nul);
    bytes_.append("\0\xff", 2);
    value.remove_prefix(nul + 1);
  }
  bytes_.append(value);
  bytes_.append("\0\1", 2);
  ++count_;
  return *this;
}

SnapshotFamily::SnapshotFamily(std::string name, std::string help, Type type,
                               std::vector<std::string> label_names)
    : FamilyBase(std::move(name), std::move(help), type, std::move(label_names)) {
  if (type == Type::kHistogram) {
    throw std::invalid_argument(
        fmt::format("metric {}: a snapshot family cannot be a histogram", this->name()));
  }
}

void SnapshotFamily::replace(std::vector<Sample> samples) {
  for (const Sample& sample : samples) check_arity(sample.labels.size());
  const auto by_labels = [](const Sample& a, const Sample& b) { return a.labels < b.labels; };
  // Collectors that merge their samples hand them over sorted already.
  if (!std::is_sorted(samples.begin(), samples.end(), by_labels)) {
    std::sort(samples.begin(), samples.end(), by_labels);
  }
  for (size_t i = 1; i < samples.size(); ++i) {
    if (samples[i - 1].labels == samples[i].labels) {
      throw std::invalid_argument(
          fmt::format("metric {}: two series with the same label values", name()));
    }
  }
  std::lock_guard lock(mu_);
  samples_ = std::move(samples);
}

void SnapshotFamily::replace_summing(std::vector<Sample> samples) {
  // Sorted and summed in place: at 30,000 pods a HAMi scrape holds ~120,000 samples, and
  // summing through a map of copied label vectors was most of its time and transient memory.
  std::sort(samples.begin(), samples.end(),
            [](const Sample& a, const Sample& b) { return a.labels < b.labels; });
  size_t kept = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (kept > 0 && samples[kept - 1].labels == samples[i].labels) {
      samples[kept - 1].value += samples[i].value;
    } else {
      if (kept != i) samples[kept] = std::move(samples[i]);
      ++kept;
    }
  }
  samples.resize(kept);
  replace(std::move(samples));
}

void SnapshotFamily::render(std::string& out) const {
  std::lock_guard lock(mu_);
  if (samples_.empty()) return;
  append_header(out, *this, type() == Type::kCounter ? "counter" : "gauge");
  for (const Sample& sample : samples_) {
    out += name();
    append_labels(out, label_names(), sample.labels);
    out += ' ';
    append_number(out, sample.value);
    out += '\n';
  }
}

// --- registry ---

MetricsRegistry::MetricsRegistry() = default;
MetricsRegistry::~MetricsRegistry() = default;

namespace {
template <class F>
F& find_or_add(std::shared_mutex& mu,
               std::map<std::string, std::unique_ptr<detail::FamilyBase>, std::less<>>& families,
               std::string_view name, detail::FamilyBase::Type type,
               const std::vector<std::string>& label_names, auto&& make) {
  std::unique_lock lock(mu);
  auto it = families.find(name);
  if (it == families.end()) {
    it = families.emplace(std::string(name), make()).first;
  } else if (it->second->type() != type || it->second->label_names() != label_names ||
             dynamic_cast<F*>(it->second.get()) == nullptr) {
    throw std::invalid_argument(
        fmt::format("metric {} already registered with another type or labels", name));
  }
  return static_cast<F&>(*it->second);
}
}  // namespace

CounterFamily& MetricsRegistry::counter(std::string_view name, std::string_view help,
                                        std::vector<std::string> label_names) {
  return find_or_add<CounterFamily>(
      mu_, families_, name, detail::FamilyBase::Type::kCounter, label_names, [&] {
        return std::make_unique<CounterFamily>(std::string(name), std::string(help),
                                               detail::FamilyBase::Type::kCounter, label_names);
      });
}

GaugeFamily& MetricsRegistry::gauge(std::string_view name, std::string_view help,
                                    std::vector<std::string> label_names) {
  return find_or_add<GaugeFamily>(
      mu_, families_, name, detail::FamilyBase::Type::kGauge, label_names, [&] {
        return std::make_unique<GaugeFamily>(std::string(name), std::string(help),
                                             detail::FamilyBase::Type::kGauge, label_names);
      });
}

HistogramFamily& MetricsRegistry::histogram(std::string_view name, std::string_view help,
                                            std::vector<std::string> label_names,
                                            std::span<const double> upper_bounds) {
  auto& f = find_or_add<HistogramFamily>(
      mu_, families_, name, detail::FamilyBase::Type::kHistogram, label_names, [&] {
        return std::make_unique<HistogramFamily>(
            std::string(name), std::string(help), label_names,
            std::vector<double>(upper_bounds.begin(), upper_bounds.end()));
      });
  if (!std::equal(f.upper_bounds().begin(), f.upper_bounds().end(), upper_bounds.begin(),
                  upper_bounds.end())) {
    throw std::invalid_argument(
        fmt::format("metric {} already registered with other buckets", name));
  }
  return f;
}

SnapshotFamily& MetricsRegistry::snapshot(std::string_view name, std::string_view help,
                                          MetricType type, std::vector<std::string> label_names) {
  return find_or_add<SnapshotFamily>(mu_, families_, name, type, label_names, [&] {
    return std::make_unique<SnapshotFamily>(std::string(name), std::string(help), type,
                                            label_names);
  });
}

void MetricsRegistry::add_collector(std::function<void()> collect) {
  std::lock_guard lock(collectors_mu_);
  collectors_.push_back(std::move(collect));
}

std::string MetricsRegistry::render() const {
  {
    std::lock_guard collecting(collectors_mu_);
    for (const auto& collect : collectors_) collect();
  }
  // Sized by the last scrape: at 30,000 pods the text is ~26 MB, and growing it by doubling
  // copied it several times and left blocks of every size behind in the heap.
  std::string out;
  out.reserve(last_render_size_.load(std::memory_order_relaxed) * 9 / 8);
  std::shared_lock lock(mu_);
  for (const auto& [name, family] : families_) family->render(out);
  last_render_size_.store(out.size(), std::memory_order_relaxed);
  return out;
}

}  // namespace hamisim::server
