#include "cli/hami_flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <functional>
#include <string_view>

#include "go/strconv.h"

namespace hamisim::cli {
namespace {

// How a flag's value is read (pflag's value types).
enum class Kind { kBool, kString, kInt, kSeconds, kSeverity, kStringToString };

struct Flag {
  std::string_view name;
  Kind kind;
  // Applies the parsed value; an error says why hamisim refuses it.
  std::function<Status(ServeOptions&, std::string_view text)> apply;
};

Status ok() {
  return ok_status();
}

// A flag hamisim has no use for: accepted as HAMi accepts the flags it ignores, and noted for
// one info line at start-up, so an operator reading the log knows it did nothing (the last
// value given is the one noted, as it is the one HAMi would have used).
std::function<Status(ServeOptions&, std::string_view)> unused(std::string_view flag,
                                                              std::string why) {
  return [flag, why](ServeOptions& o, std::string_view text) -> Status {
    o.flag_notes.set(flag, text, FlagNotes::kInfo, why);
    return ok();
  };
}

// What a flag's value asks for, read as pflag reads it (booleans in Go's spellings).
using AsksNothing = bool (*)(std::string_view);
bool is_false(std::string_view v) {
  bool b = false;
  go::parse_bool(v, &b);
  return !b;
}
bool is_true(std::string_view v) {
  return !is_false(v);
}
bool is_empty(std::string_view v) {
  return v.empty();
}

// A flag asking for something hamisim does not do (Go's pprof, log files): accepted, so a
// values file carrying it still starts, and a warning at start-up says what is not done. A
// value that asks for nothing (`--profiling=false`) leaves no warning, even after one that did.
std::function<Status(ServeOptions&, std::string_view)> not_done(std::string_view flag,
                                                                AsksNothing asks_nothing,
                                                                std::string why) {
  return [flag, asks_nothing, why](ServeOptions& o, std::string_view text) -> Status {
    if (asks_nothing(text)) {
      o.flag_notes.erase(flag);
    } else {
      o.flag_notes.set(flag, text, FlagNotes::kWarning, why);
    }
    return ok();
  };
}

const std::vector<Flag>& hami_only_flags() {
  static const std::vector<Flag> flags = [] {
    const std::string klog_files =
        "hamisim logs to stderr only, as klog does with its default --logtostderr; collect the "
        "container's log";
    std::vector<Flag> f = {
        {"http_bind", Kind::kString,
         [](ServeOptions& o, std::string_view v) {
           o.listen = v;
           return ok();
         }},
        // HAMi after v2.10 serves /filter and /bind on a listener of their own (main.go
        // `--extender-bind`, default 127.0.0.1:9444) and its chart's kube-scheduler calls them
        // there: hamisim listens there too, with every route (docs/live.md).
        {"extender-bind", Kind::kString,
         [](ServeOptions& o, std::string_view v) {
           o.extender_listen = v;
           return ok();
         }},
        {"cert_file", Kind::kString,
         [](ServeOptions& o, std::string_view v) {
           o.tls_cert = v;
           return ok();
         }},
        {"key_file", Kind::kString,
         [](ServeOptions& o, std::string_view v) {
           o.tls_key = v;
           return ok();
         }},
        {"metrics-bind-address", Kind::kString,
         [](ServeOptions& o, std::string_view v) {
           o.metrics_listen = v;
           return ok();
         }},
        {"node-label-selector", Kind::kStringToString, nullptr},  // handled with its merge rule
        {"kube-timeout", Kind::kSeconds,
         [](ServeOptions& o, std::string_view v) {
           int64_t s = 0;
           go::parse_int_base0(v, &s);
           if (s < 0) return Status(make_error(fmt::format("--kube-timeout={}: negative", v)));
           o.kube_timeout_s = static_cast<int>(std::min<int64_t>(s, 86400));
           return ok();
         }},
        {"profiling", Kind::kBool,
         not_done("profiling", is_false,
                  "hamisim is not a Go program and serves no /debug/pprof endpoints; profile "
                  "it with perf instead (docs/performance.md)")},
        {"profiling-bind-address", Kind::kString,
         unused("profiling-bind-address", "hamisim serves no pprof listener")},
        // HAMi after v2.10 requires both to authenticate its device plugin's calls to /refit
        // (NUMA re-fitting); hamisim has no /refit route, so nothing is authenticated with them.
        {"device-plugin-namespace", Kind::kString,
         unused("device-plugin-namespace", "hamisim serves no /refit endpoint")},
        {"device-plugin-service-account", Kind::kString,
         unused("device-plugin-service-account", "hamisim serves no /refit endpoint")},
        // HAMi v2.10 parses --debug and never reads it (hami-dropin.md §2.3).
        {"debug", Kind::kBool, unused("debug", "HAMi parses it and never reads it either")},
        // klog: hamisim logs to stderr only, as klog does with its default --logtostderr.
        {"v", Kind::kInt,
         [](ServeOptions& o, std::string_view v) {
           int64_t n = 0;
           go::parse_int_base0(v, &n);
           if (n < 0 || n > INT32_MAX) {
             return Status(make_error(fmt::format("-v={}: want a level from 0", v)));
           }
           o.verbosity = static_cast<int>(n);
           return ok();
         }},
        {"vmodule", Kind::kString,
         not_done("vmodule", is_empty,
                  "per-file verbosity has no equivalent in hamisim; -v applies")},
        {"logtostderr", Kind::kBool, not_done("logtostderr", is_true, klog_files)},
        {"alsologtostderr", Kind::kBool,
         unused("alsologtostderr", "klog's log files only; hamisim logs to stderr")},
        {"alsologtostderrthreshold", Kind::kSeverity,
         unused("alsologtostderrthreshold", "klog's log files only; hamisim logs to stderr")},
        {"stderrthreshold", Kind::kSeverity,
         unused("stderrthreshold", "klog ignores it under --logtostderr too")},
        {"legacy_stderr_threshold_behavior", Kind::kBool,
         unused("legacy_stderr_threshold_behavior", "klog's log files only")},
        {"log_dir", Kind::kString, not_done("log_dir", is_empty, klog_files)},
        {"log_file", Kind::kString, not_done("log_file", is_empty, klog_files)},
        {"log_file_max_size", Kind::kInt, unused("log_file_max_size", "klog's log files only")},
        {"skip_log_headers", Kind::kBool, unused("skip_log_headers", "klog's log files only")},
        {"one_output", Kind::kBool, unused("one_output", "klog's log files only")},
        {"add_dir_header", Kind::kBool,
         not_done("add_dir_header", is_false, "hamisim's log lines name no source directories")},
        {"skip_headers", Kind::kBool,
         not_done("skip_headers", is_false, "hamisim's log lines always carry their header")},
        {"log_backtrace_at", Kind::kString,
         not_done("log_backtrace_at", is_empty, "hamisim prints no stack traces from log lines")},
        {"sgpu-topology-aware", Kind::kBool,
         unused("sgpu-topology-aware", "the device config decides, in HAMi too")},
    };
    // Vendor resource-name flags: HAMi's device initialisation overwrites them with the
    // device config's values (hami-dropin.md §2.3), so they have no effect there either.
    for (std::string_view name : {"cambricon-mlu-name",
                                  "cambricon-mlu-memory",
                                  "cambricon-mlu-cores",
                                  "dcu-name",
                                  "dcu-memory",
                                  "dcu-cores",
                                  "mthreads-name",
                                  "mthreads-memory",
                                  "mthreads-cores",
                                  "enflame-gcu-resource-name",
                                  "enflame-drs-gcu-resource-name",
                                  "enflame-vgcu-resource-name",
                                  "enflame-gcu-memory-resource-name",
                                  "enflame-gcu-core-resource-name",
                                  "enflame-vgcu-legacy-resource-name",
                                  "enflame-vgcu-percentage-resource-name",
                                  "metax-name",
                                  "metax-vcount",
                                  "metax-vcore",
                                  "metax-vmemory",
                                  "kunlun-name",
                                  "kunlun-vcount",
                                  "kunlun-vmemory"}) {
      f.push_back({name, Kind::kString,
                   unused(name, "the device config's resource names decide, in HAMi too")});
    }
    return f;
  }();
  return flags;
}

const Flag* find_flag(std::string_view name) {
  for (const Flag& f : hami_only_flags()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// pflag's "invalid argument" text.
Error invalid(std::string_view shown, std::string_view value, std::string_view why) {
  return make_error(fmt::format("invalid argument \"{}\" for \"{}\" flag: {}", value, shown, why));
}

Status check_value(const Flag& f, std::string_view shown, std::string_view v) {
  switch (f.kind) {
    case Kind::kBool: {
      bool b = false;
      if (!go::parse_bool(v, &b)) return invalid(shown, v, "strconv.ParseBool: invalid syntax");
      return ok();
    }
    case Kind::kInt:
    case Kind::kSeconds: {
      int64_t n = 0;
      if (!go::parse_int_base0(v, &n)) return invalid(shown, v, "strconv.ParseInt: invalid syntax");
      return ok();
    }
    case Kind::kSeverity: {
      std::string upper(v);
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      for (std::string_view s : {"INFO", "WARNING", "ERROR", "FATAL", "0", "1", "2", "3"}) {
        if (upper == s) return ok();
      }
      return invalid(shown, v, "unknown severity (INFO, WARNING, ERROR, FATAL or 0-3)");
    }
    case Kind::kString:
    case Kind::kStringToString:
      return ok();
  }
  return ok();
}

}  // namespace

void FlagNotes::set(std::string_view flag, std::string_view value, Level level,
                    std::string_view why) {
  for (Note& n : notes) {
    if (n.flag == flag) {
      n = {std::string(flag), std::string(value), level, std::string(why)};
      return;
    }
  }
  notes.push_back({std::string(flag), std::string(value), level, std::string(why)});
}

void FlagNotes::erase(std::string_view flag) {
  std::erase_if(notes, [&](const Note& n) { return n.flag == flag; });
}

Result<std::map<std::string, std::string>> parse_string_to_string(std::string_view text) {
  std::map<std::string, std::string> out;
  if (text.empty()) return out;
  const auto split_pair = [&](std::string_view item) -> Status {
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) {
      return make_error(fmt::format("{} must be formatted as key=value", item));
    }
    out[std::string(item.substr(0, eq))] = std::string(item.substr(eq + 1));
    return ok();
  };
  const size_t equals = std::count(text.begin(), text.end(), '=');
  if (equals == 0) return make_error(fmt::format("{} must be formatted as key=value", text));
  if (equals == 1) {
    // One pair: surrounding quotes trimmed (strings.Trim(val, `"`)).
    std::string_view pair = text;
    while (!pair.empty() && pair.front() == '"') pair.remove_prefix(1);
    while (!pair.empty() && pair.back() == '"') pair.remove_suffix(1);
    if (Status s = split_pair(pair); !s) return s.error();
    return out;
  }
  // One CSV record (encoding/csv): a field may be quoted, "" inside quotes is a quote.
  std::string field;
  size_t i = 0;
  while (i <= text.size()) {
    field.clear();
    if (i < text.size() && text[i] == '"') {
      ++i;
      bool closed = false;
      while (i < text.size()) {
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          closed = true;
          ++i;
          break;
        }
        field += text[i++];
      }
      if (!closed || (i < text.size() && text[i] != ',')) {
        return make_error(fmt::format("{}: bad quoting in the CSV record", text));
      }
    } else {
      while (i < text.size() && text[i] != ',') field += text[i++];
    }
    if (Status s = split_pair(field); !s) return s.error();
    ++i;  // past the comma (or the end)
  }
  return out;
}

Result<std::vector<std::string>> take_hami_flags(const std::vector<std::string>& args,
                                                 ServeOptions& o) {
  std::vector<std::string> rest;
  bool selector_seen = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {  // pflag: the end of flags; what follows is for the other parser
      rest.insert(rest.end(), args.begin() + static_cast<long>(i), args.end());
      break;
    }
    std::string name;
    std::string value;
    bool has_value = false;
    std::string shown;
    if (arg.starts_with("--")) {
      const auto eq = arg.find('=');
      name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        has_value = true;
      }
      shown = "--" + name;
    } else if (arg.starts_with("-v") && arg != "-v") {
      // klog's shorthand: -v=4 and -v4 (pflag gives one-letter Go flags a shorthand).
      name = "v";
      value = arg.substr(arg[2] == '=' ? 3 : 2);
      has_value = true;
      shown = "-v, --v";
    } else if (arg == "-v") {
      name = "v";
      shown = "-v, --v";
    } else {
      rest.push_back(arg);
      continue;
    }
    const Flag* flag = find_flag(name);
    if (flag == nullptr) {
      rest.push_back(arg);
      continue;
    }
    if (name == "v") shown = "-v, --v";  // how pflag names a flag that has a shorthand
    if (!has_value) {
      if (flag->kind == Kind::kBool) {
        value = "true";  // a bare boolean; the next word is never its value (pflag)
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return make_error(fmt::format("flag needs an argument: {}", shown));
      }
    }
    if (Status s = check_value(*flag, shown, value); !s) return s.error();
    if (flag->kind == Kind::kStringToString) {
      auto pairs = parse_string_to_string(value);
      if (!pairs) return invalid(shown, value, pairs.error().message);
      // The first occurrence replaces the default; later ones merge their keys in.
      if (!selector_seen) o.node_label_selector.clear();
      selector_seen = true;
      for (auto& [k, v] : *pairs) o.node_label_selector[k] = v;
      continue;
    }
    if (Status s = flag->apply(o, value); !s) return s.error();
  }
  return rest;
}

std::string hami_flags_help() {
  std::string names;
  for (const Flag& f : hami_only_flags()) {
    if (!names.empty()) names += ", ";
    names += f.name == "v" ? "-v" : "--" + std::string(f.name);
  }
  return "HAMi's scheduler flags are accepted too, in HAMi's syntax (docs/live.md, \"HAMi's "
         "flags\"): " +
         names + ".";
}

void apply_hami_defaults(ServeOptions& o) {
  o.hami_scheduler = true;
  o.component = "scheduler";  // cobra's command name in HAMi's main.go
  o.listen = "127.0.0.1:8080";
  // HAMi after v2.10 serves the extender verbs here by default, and its chart's kube-scheduler
  // calls them here without passing the flag.
  o.extender_listen = "127.0.0.1:9444";
  o.metrics_listen = ":9395";
  o.insecure_http = true;
  o.kube_qps = 5;
  o.kube_burst = 10;
  o.leader_elect_resource_namespace = "";
  o.readyz_scope = "live";
  // HAMi's log lines are klog's: pipelines that parse them keep matching after the swap.
  o.log_format = "klog";
}

}  // namespace hamisim::cli
