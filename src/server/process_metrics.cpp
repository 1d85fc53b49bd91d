#include "server/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#ifndef HAMISIM_VERSION
#define HAMISIM_VERSION ""
#endif
#ifndef HAMISIM_REVISION
#define HAMISIM_REVISION ""
#endif
#ifndef HAMISIM_BUILD_DATE
#define HAMISIM_BUILD_DATE ""
#endif

namespace hamisim::server {
namespace {

std::string compiler_name() {
#if defined(__clang__)
  return fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return fmt::format("gcc {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

std::string platform_name() {
#if defined(__x86_64__)
  return "linux/amd64";
#elif defined(__aarch64__)
  return "linux/arm64";
#else
  return "linux/unknown";
#endif
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Stat {
  double cpu_ticks = 0;
  double start_ticks = 0;  // since boot
  double vsize = 0;
  double rss_pages = 0;
  double threads = 0;
};

// /proc/<pid>/stat: the fields after the command name, which is in parentheses and may hold
// spaces or parentheses itself (so the last ')' ends it).
std::optional<Stat> parse_stat(std::string_view text) {
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> fields;  // fields[0] is field 3 (state)
  size_t i = close + 1;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    size_t j = text.find(' ', i);
    if (j == std::string_view::npos) j = text.size();
    if (j > i) fields.push_back(text.substr(i, j - i));
    i = j;
  }
  auto number = [&](size_t field) -> std::optional<double> {
    if (field < 3 || field - 3 >= fields.size()) return std::nullopt;
    std::string_view f = fields[field - 3];
    long long v = 0;
    auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
    if (ec != std::errc()) return std::nullopt;
    return static_cast<double>(v);
  };
  auto utime = number(14), stime = number(15), threads = number(20), start = number(22),
       vsize = number(23), rss = number(24);
  if (!utime || !stime || !threads || !start || !vsize || !rss) return std::nullopt;
  return Stat{*utime + *stime, *start, *vsize, *rss, *threads};
}

std::optional<double> boot_time(std::string_view proc_stat) {
  const size_t at = proc_stat.find("\nbtime ");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = proc_stat.substr(at + 7);
  long long v = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
  if (ec != std::errc()) return std::nullopt;
  return static_cast<double>(v);
}

std::optional<double> open_fds(const std::string& proc) {
  DIR* dir = ::opendir((proc + "/fd").c_str());
  if (dir == nullptr) return std::nullopt;
  double n = 0;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(dir);
  return n;
}

}  // namespace

const BuildInfo& build_info() {
  static const BuildInfo info{HAMISIM_VERSION, HAMISIM_REVISION, HAMISIM_BUILD_DATE,
                              compiler_name(), platform_name()};
  return info;
}

void export_build_info(MetricsRegistry& metrics) {
  const BuildInfo& b = build_info();
  metrics
      .gauge("hamisim_build_info",
             "hamisim build metadata exposed as labels with a constant value of 1.",
             {"version", "revision", "build_date", "compiler", "platform"})
      .labels({b.version, b.revision, b.build_date, b.compiler, b.platform})
      .set(1);
}

void export_hami_build_info(MetricsRegistry& metrics) {
  const BuildInfo& b = build_info();
  // HAMi's labels; go_version is empty: no Go toolchain built this binary.
  metrics
      .gauge("hami_build_info", "hami build metadata exposed as labels with a constant value of 1.",
             {"build_date", "compiler", "go_version", "platform", "revision", "version"})
      .labels({b.build_date, b.compiler, "", b.platform, b.revision, b.version})
      .set(1);
}

void export_process_metrics(MetricsRegistry& metrics, std::string proc, std::string proc_stat) {
  auto& cpu =
      metrics.snapshot("process_cpu_seconds_total",
                       "Total user and system CPU time spent in seconds.", MetricType::kCounter);
  auto& rss = metrics.snapshot("process_resident_memory_bytes", "Resident memory size in bytes.",
                               MetricType::kGauge);
  auto& vsize = metrics.snapshot("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                                 MetricType::kGauge);
  auto& fds =
      metrics.snapshot("process_open_fds", "Number of open file descriptors.", MetricType::kGauge);
  auto& max_fds = metrics.snapshot("process_max_fds", "Maximum number of open file descriptors.",
                                   MetricType::kGauge);
  auto& start = metrics.snapshot("process_start_time_seconds",
                                 "Start time of the process since unix epoch in seconds.",
                                 MetricType::kGauge);
  auto& threads = metrics.snapshot("process_threads", "Number of OS threads in the process.",
                                   MetricType::kGauge);
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  metrics.add_collector([=, &cpu, &rss, &vsize, &fds, &max_fds, &start, &threads] {
    auto one = [](std::optional<double> v) {
      std::vector<SnapshotFamily::Sample> s;
      if (v) s.push_back({{}, *v});
      return s;
    };
    std::optional<Stat> stat;
    if (auto text = read_file(proc + "/stat")) stat = parse_stat(*text);
    std::optional<double> boot;
    if (auto text = read_file(proc_stat)) boot = boot_time("\n" + *text);
    cpu.replace(one(stat ? std::optional(stat->cpu_ticks / ticks) : std::nullopt));
    rss.replace(one(stat ? std::optional(stat->rss_pages * page) : std::nullopt));
    vsize.replace(one(stat ? std::optional(stat->vsize) : std::nullopt));
    threads.replace(one(stat ? std::optional(stat->threads) : std::nullopt));
    start.replace(
        one(stat && boot ? std::optional(*boot + stat->start_ticks / ticks) : std::nullopt));
    fds.replace(one(open_fds(proc)));
    rlimit limit{};
    std::optional<double> max;
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      max = static_cast<double>(limit.rlim_cur);
    }
    max_fds.replace(one(max));
  });
}

}  // namespace hamisim::server
