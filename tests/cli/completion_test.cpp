// `hamisim completion bash|zsh|fish` (issue #47): scripts generated from the parser's own
// tables. Every subcommand and flag `--help` lists is in every script; each script is valid
// for its shell, and completes commands, flags and file names when the shell runs it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "run_process.h"
#include "test_paths.h"

namespace hamisim {
namespace completion_test {

using testing::describe;
using ::testing::HasSubstr;
using testing::ProcessResult;

const std::string kBin = hamisim::testing::hamisim_bin();

ProcessResult sh(const std::string& script) {
  return testing::run_process({"/bin/bash", "-c", script});
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string help_of(const std::string& command) {
  return sh("'" + kBin + "' " + command + " --help").out;
}

// The subcommands `--help` lists under "Subcommands:".
std::vector<std::string> subcommands_of(const std::string& command) {
  std::vector<std::string> out;
  bool in = false;
  for (const auto& l : lines_of(help_of(command))) {
    if (l == "Subcommands:") {
      in = true;
    } else if (in && l.size() > 2 && l[0] == ' ') {
      std::istringstream words(l);
      std::string name;
      words >> name;
      out.push_back(name);
    }
  }
  return out;
}

// Every command path ("plan", "profile check") and the flags its --help lists.
std::vector<std::pair<std::string, std::set<std::string>>> commands_and_flags() {
  std::vector<std::pair<std::string, std::set<std::string>>> out;
  std::vector<std::string> todo{""};
  static const std::regex kOption(R"(^  (-([a-zA-Z]),)?(--[a-z0-9][a-z0-9-]*))");
  while (!todo.empty()) {
    const std::string c = todo.back();
    todo.pop_back();
    std::set<std::string> flags;
    for (const auto& l : lines_of(help_of(c))) {
      std::smatch m;
      if (std::regex_search(l, m, kOption)) {
        flags.insert(m[3].str());
        if (m[2].matched) flags.insert("-" + m[2].str());
      }
    }
    out.emplace_back(c, flags);
    for (const auto& s : subcommands_of(c)) todo.push_back(c.empty() ? s : c + " " + s);
  }
  return out;
}

TEST(Completion, EverySubcommandAndFlagOfHelpIsInEveryScript) {
  const auto commands = commands_and_flags();
  ASSERT_GT(commands.size(), 9u);  // hamisim, its subcommands, profile's
  for (const char* shell : {"bash", "zsh", "fish"}) {
    const auto r = sh("'" + kBin + "' completion " + shell);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    size_t flags = 0;
    for (const auto& [command, names] : commands) {
      if (!command.empty()) {
        // bash and zsh walk the words typed through "<command so far>:<word>"; fish offers
        // each subcommand with -a.
        const size_t space = command.rfind(' ');
        const std::string last = space == std::string::npos ? command : command.substr(space + 1);
        const std::string parent = space == std::string::npos ? "" : command.substr(0, space);
        const std::string want =
            std::string(shell) == "fish" ? "-a '" + last + "'" : "'" + parent + ":" + last + "'";
        EXPECT_THAT(r.out, HasSubstr(want)) << shell << ": subcommand " << command;
      }
      for (const auto& f : names) {
        ++flags;
        // bash and zsh name flags as typed; fish by their long or short name.
        const std::string want =
            std::string(shell) == "fish"
                ? (f.rfind("--", 0) == 0 ? "-l '" + f.substr(2) + "'" : "-s '" + f.substr(1) + "'")
                : f;
        EXPECT_THAT(r.out, HasSubstr(want)) << shell << ": " << command << " " << f;
      }
    }
    EXPECT_GT(flags, 100u);
  }
}

TEST(Completion, EachScriptIsValidForItsShell) {
  auto r = sh("'" + kBin + "' completion bash | bash -n");
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  for (const auto& [shell, check] : std::vector<std::pair<std::string, std::string>>{
           {"zsh", "zsh -n"}, {"fish", "fish --no-execute"}}) {
    if (sh("command -v " + shell.substr(0, shell.find(' '))).exit_code != 0) {
      // scripts/install-deps.sh installs both; say so rather than pass in silence.
      ADD_FAILURE() << shell << " is not installed: its script cannot be checked";
      continue;
    }
    r = sh("'" + kBin + "' completion " + shell + " > /tmp/hamisim-completion-$$ && " + check +
           " /tmp/hamisim-completion-$$; s=$?; rm -f /tmp/hamisim-completion-$$; exit $s");
    EXPECT_EQ(r.exit_code, 0) << shell << ": " << describe(r);
  }
}

// What bash offers for the words typed (the last one being completed).
std::string bash_completes(const std::string& words) {
  const auto r = sh("cd '" + std::string(hamisim::testing::source_dir()) + "' && source <('" +
                    kBin + "' completion bash) && COMP_WORDS=(" + words +
                    ") && COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) && { _hamisim; true; } && "
                    "for w in \"${COMPREPLY[@]}\"; do echo \"$w\"; done");
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  return r.out;
}

TEST(Completion, BashCompletesCommandsFlagsAndFileValues) {
  EXPECT_EQ(bash_completes("hamisim pl"), "plan\n");
  EXPECT_EQ(bash_completes("hamisim profile ''"), "check\nslices\n");
  EXPECT_EQ(bash_completes("hamisim profile check --st"), "--strict\n");
  EXPECT_EQ(bash_completes("hamisim plan --clu"), "--cluster\n");
  EXPECT_EQ(bash_completes("hamisim completion ''"), "");
  // A flag that takes a value completes file names; a flag without one does not.
  EXPECT_EQ(bash_completes("hamisim plan --cluster exa"), "examples\n");
  EXPECT_EQ(bash_completes("hamisim plan --strict exa"), "");
}

TEST(Completion, ZshAndFishCompleteTheSame) {
  // zsh: the completion function with zsh's helpers replaced by ones that print what they are
  // given (the real ones need an interactive shell).
  const std::string zsh =
      "compdef() { :; }; _files() { print FILES; }; "
      "_describe() { print -l -- \"${(@P)4}\"; }; source <('" +
      kBin + "' completion zsh); ";
  auto r = sh("zsh -c '" + std::regex_replace(zsh, std::regex("'"), "'\\''") +
              "words=(hamisim plan --clu); CURRENT=3; _hamisim'");
  EXPECT_THAT(r.out, HasSubstr("--cluster:Nodes, pods")) << describe(r);
  r = sh("zsh -c '" + std::regex_replace(zsh, std::regex("'"), "'\\''") +
         "words=(hamisim plan --cluster x); CURRENT=4; _hamisim'");
  EXPECT_EQ(r.out, "FILES\n") << describe(r);
  r = sh("zsh -c '" + std::regex_replace(zsh, std::regex("'"), "'\\''") +
         "words=(hamisim profile c); CURRENT=3; _hamisim'");
  EXPECT_THAT(r.out, HasSubstr("check:Compare real nodes")) << describe(r);
  // fish completes for real without a terminal.
  r = sh("fish -c \"'" + kBin +
         "' completion fish | source; complete -C 'hamisim profile check --st'\"");
  EXPECT_THAT(r.out, HasSubstr("--strict\t")) << describe(r);
  r = sh("fish -c \"'" + kBin + "' completion fish | source; complete -C 'hamisim pl'\"");
  EXPECT_THAT(r.out, HasSubstr("plan\t")) << describe(r);
}

TEST(Completion, AnUnknownShellExits2NamingTheShells) {
  const auto r = sh("'" + kBin + "' completion tcsh");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "hamisim completion: unknown shell \"tcsh\"; hamisim completes bash, zsh and fish\n");
}

}  // namespace completion_test
}  // namespace hamisim
