#pragma once
// HAMi's `scheduler` command line (reference hami-dropin.md §2), for `hamisim serve` and the
// `scheduler` entry point: the flags hamisim has no name of its own for, in pflag's syntax
// (`--name=value`, `--name value` for non-booleans, bare booleans, klog's `-v` in every form).
//
// Each flag is either honoured (mapped onto ServeOptions), accepted because HAMi itself does
// nothing with it (vendor resource-name flags, `--debug`, klog's file-output knobs while
// logging to stderr), or refused with a message saying why: a value hamisim cannot honour is
// never ignored silently.

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
// client rate limits, the Lease namespace), plus what the entry point implies: the live path
// from the default client configuration, plain HTTP allowed off loopback as HAMi allows it
// (the live verbs still answer only loopback or certified peers), readiness of the live path.
void apply_hami_defaults(ServeOptions& options);

// One line for --help: the HAMi flag names accepted besides hamisim's own.
std::string hami_flags_help();

// pflag's stringToString syntax: `k=v`, `"k=v"`, or a CSV record `k1=v1,k2=v2`.
Result<std::map<std::string, std::string>> parse_string_to_string(std::string_view text);

}  // namespace hamisim::cli
