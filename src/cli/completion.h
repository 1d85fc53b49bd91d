#pragma once
// `hamisim completion bash|zsh|fish`: shell completion scripts generated from the command line
// parser's own tables (every subcommand, nested ones included, and every flag with whether it
// takes a value and its help text), so they cannot drift from the commands. A flag that takes a
// value completes file names; subcommands and flags complete by name, with their help in zsh
// and fish. HAMi's spellings that `scheduler` also accepts (`--cert_file`, ...) are not
// offered: they are for charts, not people.

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

#include "model/result.h"

namespace hamisim::cli {

// The script for `shell` ("bash", "zsh" or "fish") completing `app`'s program `program`.
Result<std::string> completion_script(const CLI::App& app, std::string_view program,
                                      std::string_view shell);

}  // namespace hamisim::cli
