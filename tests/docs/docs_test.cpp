// Docs that cannot drift (issue 25): every ```console block of README.md and docs/*.md is run
// and its output compared with what the block shows, and docs/configuration.md's help blocks
// and flag tables are checked against each command's --help. The conventions are in
// docs/contributing.md#examples-in-the-docs.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "run_process.h"
#include "test_paths.h"

namespace hamisim {
namespace {

namespace fs = std::filesystem;
using testing::describe;

const std::string kRoot = hamisim::testing::source_dir();
const std::string kBin = hamisim::testing::hamisim_bin();

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<fs::path> doc_files() {
  std::vector<fs::path> files{fs::path(kRoot) / "README.md"};
  for (const auto& e : fs::directory_iterator(fs::path(kRoot) / "docs")) {
    if (e.path().extension() == ".md") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// One `$ command` of a console block and the output lines shown under it.
struct Example {
  size_t line = 0;  // of the `$ `, 1-based
  std::string command;
  std::vector<std::string> expected;
};

struct ConsoleBlock {
  std::string file;
  size_t line = 0;  // of the opening fence
  std::vector<Example> examples;
};

std::vector<ConsoleBlock> console_blocks(const fs::path& file) {
  std::vector<ConsoleBlock> out;
  const auto lines = lines_of(read(file));
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] != "```console") continue;
    ConsoleBlock block{fs::relative(file, kRoot).string(), i + 1, {}};
    for (++i; i < lines.size() && lines[i] != "```"; ++i) {
      const std::string& l = lines[i];
      if (l.rfind("$ ", 0) == 0) {
        Example ex{i + 1, l.substr(2), {}};
        // A trailing backslash continues the command on the next line.
        while (!ex.command.empty() && ex.command.back() == '\\' && i + 1 < lines.size()) {
          ex.command += "\n" + lines[++i];
        }
        block.examples.push_back(std::move(ex));
      } else if (!block.examples.empty()) {
        block.examples.back().expected.push_back(l);
      }
    }
    for (auto& ex : block.examples) {
      while (!ex.expected.empty() && ex.expected.back().empty()) ex.expected.pop_back();
    }
    out.push_back(std::move(block));
  }
  return out;
}

// Times, durations, ports, temporary paths and the checkout's path vary between runs and
// machines; they compare as placeholders.
std::string normalize(std::string s, const std::string& work_dir) {
  auto replace_all = [&](const std::string& from, const std::string& to) {
    if (from.empty()) return;
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) {
      s.replace(p, from.size(), to);
    }
  };
  replace_all(work_dir, "<tmp>");
  replace_all(kRoot, "<checkout>");
  static const std::regex kTime(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?)");
  static const std::regex kMs(R"(\b\d+(\.\d+)? ?(ms|µs|us|s)\b)");
  static const std::regex kPort(R"(((127\.0\.0\.1|localhost|\[::1\]):)\d+)");
  static const std::regex kTmp(R"(/tmp/[A-Za-z0-9._/-]+)");
  s = std::regex_replace(s, kTime, "<time>");
  s = std::regex_replace(s, kPort, "$1<port>");
  s = std::regex_replace(s, kTmp, "<tmp>");
  s = std::regex_replace(s, kMs, "<duration>");
  return s;
}

// `expected` may hold `...` lines (indented or not: any number of lines, none included) and
// lines ending in
// `...` (a line starting with the text before it).
bool matches(const std::vector<std::string>& expected, size_t ei,
             const std::vector<std::string>& actual, size_t ai) {
  if (ei == expected.size()) return ai == actual.size();
  const std::string& e = expected[ei];
  if (e.find_first_not_of(' ') != std::string::npos &&
      e.substr(e.find_first_not_of(' ')) == "...") {
    for (size_t k = ai; k <= actual.size(); ++k) {
      if (matches(expected, ei + 1, actual, k)) return true;
    }
    return false;
  }
  if (ai == actual.size()) return false;
  const std::string& a = actual[ai];
  const bool prefix = e.size() > 3 && e.compare(e.size() - 3, 3, "...") == 0;
  const bool same = prefix ? a.rfind(e.substr(0, e.size() - 3), 0) == 0 : a == e;
  return same && matches(expected, ei + 1, actual, ai + 1);
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

TEST(Docs, ConsoleExamplesPrintWhatTheDocsShow) {
  const fs::path work = fs::temp_directory_path() / ("hamisim-docs-" + std::to_string(getpid()));
  fs::create_directories(work);
  // Commands run from a scratch directory that sees the checkout's inputs, so an example that
  // writes a file writes it there.
  for (const char* dir : {"examples", "deploy", "docs", "tests", "scripts"}) {
    fs::create_directory_symlink(fs::path(kRoot) / dir, work / dir);
  }
  const std::string bin_dir = fs::path(kBin).parent_path().string();
  size_t examples = 0;
  for (const auto& file : doc_files()) {
    for (const ConsoleBlock& block : console_blocks(file)) {
      // One shell per block (variables carry from one command to the next); a marker line
      // before each command splits the output; stderr goes with stdout, as on a terminal.
      std::string script = "cd " + shell_quote(work.string()) + " && PATH=" + shell_quote(bin_dir) +
                           ":$PATH && exec 2>&1\n";
      for (size_t i = 0; i < block.examples.size(); ++i) {
        // The marker keeps $? for examples such as `echo $?`.
        script +=
            "__rc=$?; printf '\\n@@hamisim-docs " + std::to_string(i) + "@@\\n'; (exit $__rc)\n";
        script += block.examples[i].command + "\n";
      }
      const auto r = testing::run_process({"/bin/sh", "-c", script}, std::chrono::seconds(120));
      ASSERT_TRUE(r.spawn_error.empty() && !r.timed_out) << block.file << ":" << block.line;
      std::map<size_t, std::vector<std::string>> outputs;
      long current = -1;
      for (const auto& l : lines_of(normalize(r.out, work.string()))) {
        if (l.rfind("@@hamisim-docs ", 0) == 0) {
          current = std::stol(l.substr(15));
          continue;
        }
        if (current >= 0) outputs[static_cast<size_t>(current)].push_back(l);
      }
      for (size_t i = 0; i < block.examples.size(); ++i) {
        const Example& ex = block.examples[i];
        ++examples;
        std::vector<std::string> actual = outputs[i];
        if (!actual.empty() && actual.front().empty()) actual.erase(actual.begin());
        while (!actual.empty() && actual.back().empty()) actual.pop_back();
        std::vector<std::string> expected;
        for (const auto& e : ex.expected) expected.push_back(normalize(e, work.string()));
        if (!matches(expected, 0, actual, 0)) {
          std::string shown, got;
          for (const auto& l : ex.expected) shown += "  | " + l + "\n";
          for (const auto& l : actual) got += "  | " + l + "\n";
          ADD_FAILURE() << block.file << ":" << ex.line << ": `" << ex.command
                        << "` prints something else than the docs show.\nshown:\n"
                        << shown << "printed (normalized):\n"
                        << got;
        }
      }
    }
  }
  fs::remove_all(work);
  EXPECT_GT(examples, 10u) << "the docs lost their console examples";
}

// ---- docs/configuration.md against --help ----

struct CommandSection {
  std::string command;  // "plan", "profile check"
  size_t line = 0;
  std::string help;                   // the first fenced block of the section
  std::set<std::string> table;        // flags named in the first column of its tables
  std::vector<std::string> prefixes;  // `--max-inflight-*` rows
};

std::vector<CommandSection> configuration_sections() {
  std::vector<CommandSection> out;
  const auto lines = lines_of(read(fs::path(kRoot) / "docs/configuration.md"));
  static const std::regex kHeading(R"(^## `hamisim ([a-z ]+)`$)");
  static const std::regex kFlag(R"(--[a-z0-9][a-z0-9-]*(\*)?)");
  CommandSection* s = nullptr;
  bool in_block = false, help_done = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    std::smatch m;
    if (!in_block && std::regex_match(l, m, kHeading)) {
      out.push_back({m[1].str(), i + 1, {}, {}, {}});
      s = &out.back();
      help_done = false;
      continue;
    }
    if (!in_block && l.rfind("## ", 0) == 0) s = nullptr;
    if (s == nullptr) continue;
    if (l.rfind("```", 0) == 0) {
      if (in_block) help_done = true;
      in_block = !in_block;
      continue;
    }
    if (in_block) {
      if (!help_done) s->help += l + "\n";
      continue;
    }
    if (l.rfind("| ", 0) == 0) {
      const std::string first = l.substr(2, l.find(" |", 1) - 2);
      for (std::sregex_iterator it(first.begin(), first.end(), kFlag), end; it != end; ++it) {
        std::string flag = (*it)[0].str();
        if (flag.back() == '*') {
          s->prefixes.push_back(flag.substr(0, flag.size() - 1));
        } else {
          s->table.insert(flag);
        }
      }
    }
  }
  return out;
}

std::vector<std::string> words(const std::string& command) {
  std::vector<std::string> out;
  std::istringstream in(command);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// `hamisim <command> --help` as a user runs it (found on PATH, so Usage says "hamisim").
std::string help_of(const std::string& command) {
  const std::string dir = fs::path(kBin).parent_path().string();
  return testing::run_process(
             {"/bin/sh", "-c",
              "PATH=" + shell_quote(dir) + ":$PATH exec hamisim " + command + " --help"})
      .out;
}

// Every flag --help lists (`-h,--help` aside).
std::set<std::string> help_flags(const std::string& help) {
  std::set<std::string> out;
  static const std::regex kOption(R"(^  (-[a-zA-Z],)?(--[a-z0-9][a-z0-9-]*))");
  for (const auto& l : lines_of(help)) {
    std::smatch m;
    if (std::regex_search(l, m, kOption) && m[2].str() != "--help") out.insert(m[2].str());
  }
  return out;
}

// The subcommands `hamisim --help` lists, "profile" as "profile check".
std::vector<std::string> subcommands() {
  std::vector<std::string> out;
  bool in = false;
  for (const auto& l : lines_of(help_of(""))) {
    if (l == "Subcommands:") {
      in = true;
      continue;
    }
    if (!in || l.size() < 3 || l[0] != ' ') continue;
    std::string name = words(l).front();
    out.push_back(name == "profile" ? "profile check" : name);
  }
  return out;
}

TEST(Docs, ConfigurationMdHasASectionPerSubcommand) {
  std::set<std::string> documented;
  for (const auto& s : configuration_sections()) documented.insert(s.command);
  for (const auto& c : subcommands()) {
    EXPECT_TRUE(documented.count(c))
        << "docs/configuration.md has no \"## `hamisim " << c
        << "`\" section: add one with `hamisim " << c << " --help` and a table of its flags";
  }
}

TEST(Docs, ConfigurationMdHelpBlocksAreWhatHelpPrints) {
  for (const auto& s : configuration_sections()) {
    EXPECT_EQ(s.help, help_of(s.command))
        << "docs/configuration.md:" << s.line << ": the help block of `hamisim " << s.command
        << "` is not what `hamisim " << s.command << " --help` prints; paste its output";
  }
}

// Every flag --help lists has a row in the section's tables (its own or a `--prefix-*` row),
// and every flag a table names is one --help lists.
TEST(Docs, ConfigurationMdFlagTablesListEveryFlagOfHelp) {
  for (const auto& s : configuration_sections()) {
    const std::set<std::string> flags = help_flags(help_of(s.command));
    for (const auto& f : flags) {
      const bool by_prefix = std::any_of(s.prefixes.begin(), s.prefixes.end(),
                                         [&](const auto& p) { return f.rfind(p, 0) == 0; });
      EXPECT_TRUE(s.table.count(f) || by_prefix)
          << "docs/configuration.md:" << s.line << ": `hamisim " << s.command << " --help` lists "
          << f << " but the flag table of \"## `hamisim " << s.command
          << "`\" has no row for it: add `| `" << f << "` | ... |`";
    }
    for (const auto& f : s.table) {
      EXPECT_TRUE(flags.count(f)) << "docs/configuration.md:" << s.line << ": the flag table of "
                                  << "\"## `hamisim " << s.command << "`\" has a row for " << f
                                  << ", which `hamisim " << s.command
                                  << " --help` does not list: remove or rename the row";
    }
  }
}

}  // namespace
}  // namespace hamisim
