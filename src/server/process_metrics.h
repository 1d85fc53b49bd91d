#pragma once
// The standard process_* families (as Prometheus' client libraries export them, read from
// /proc at each scrape) and the build-info families.

#include <string>
#include <string_view>

#include "server/metrics.h"

namespace hamisim::server {

struct BuildInfo {
  std::string version;     // project version, "0.1.0"
  std::string revision;    // git commit at configure time, empty outside a checkout
  std::string build_date;  // that commit's date, "YYYYMMDD-hh:mm:ss" (UTC), as HAMi writes it
  std::string compiler;    // "gcc 12.2.0"
  std::string platform;    // "linux/amd64"
};
const BuildInfo& build_info();

// hamisim_build_info{version,revision,build_date,compiler,platform} 1.
void export_build_info(MetricsRegistry& metrics);
// HAMi's hami_build_info{build_date,compiler,go_version,platform,revision,version} 1 (reference
// hami-dropin.md §6), which HAMi's dashboards read; go_version is empty.
void export_hami_build_info(MetricsRegistry& metrics);

// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_open_fds, process_max_fds, process_start_time_seconds and process_threads, read at
// each scrape from `proc` (the process's /proc/<pid> directory) and `proc_stat` (/proc/stat,
// for the boot time). A figure that cannot be read is left out of that scrape.
void export_process_metrics(MetricsRegistry& metrics, std::string proc = "/proc/self",
                            std::string proc_stat = "/proc/stat");

}  // namespace hamisim::server
