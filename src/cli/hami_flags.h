#pragma once
// HAMi's `scheduler` command line (reference hami-dropin.md §2), for `hamisim serve` and the
// `scheduler` entry point: the flags hamisim has no name of its own for, in pflag's syntax
// (`--name=value`, `--name value` for non-booleans, bare booleans, klog's `-v` in every form).
//
// Each flag is either honoured (mapped onto ServeOptions) or accepted without effect, as HAMi
// accepts the flags it ignores: those HAMi does nothing with either (vendor resource-name
// flags, `--debug`, klog's file knobs), and those asking for what hamisim does not do (Go's
// pprof, log files). Each of the latter is noted in ServeOptions::flag_notes, which serve logs
// at start-up (info, or a warning when the flag asked for something not done): accepted, never
// ignored silently. Only a value pflag itself would refuse is an error.
//
// A flag given more than once takes its last value, as pflag does (stringToString merges).

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cli/serve_command.h"
#include "model/result.h"

namespace hamisim::cli {

// Consumes HAMi's flags from `args` into `options` and returns the other arguments, in order,
// for hamisim's own parser. Errors name the flag and the value, as pflag does.
Result<std::vector<std::string>> take_hami_flags(const std::vector<std::string>& args,
                                                 ServeOptions& options);

// The defaults of HAMi's `scheduler` where they differ from `hamisim serve`'s (listeners,
// client rate limits, the Lease namespace, the extender listener, klog's log format), plus
// what the entry point implies: the live path
// from the default client configuration, plain HTTP allowed off loopback as HAMi allows it
// (the live verbs still answer only loopback or certified peers), readiness of the live path.
void apply_hami_defaults(ServeOptions& options);

// One line for --help: the HAMi flag names accepted besides hamisim's own.
std::string hami_flags_help();

// pflag's stringToString syntax: `k=v`, `"k=v"`, or a CSV record `k1=v1,k2=v2`.
Result<std::map<std::string, std::string>> parse_string_to_string(std::string_view text);

}  // namespace hamisim::cli
