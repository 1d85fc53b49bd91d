// Docs that cannot drift (issues 25 and 47): every block of README.md and docs/*.md that shows
// a command's output is run and its output compared with what the block shows: ```console
// blocks, plain or ```text transcripts (lines starting `$ `), and a ```sh block followed by the
// block of its output. A block that cannot run here says so with a marker and is listed, not
// skipped silently. docs/configuration.md's help blocks and flag tables are checked against each
// command's --help. The conventions are in docs/contributing.md#examples-in-the-docs.

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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

// One command of a doc and the output lines shown for it.
struct Example {
  size_t line = 0;  // of the `$ ` (or of the ```sh block's first command), 1-based
  std::string command;
  std::vector<std::string> expected;
  bool check = true;  // false: a setup step (`<!-- docs-test: run -->`), its output not shown
};

struct RunBlock {
  std::string file;
  size_t line = 0;  // of the opening fence
  std::vector<Example> examples;
};

// A block showing output that the test does not run, and why (the marker's text).
struct NotRun {
  std::string file;
  size_t line = 0;
  std::string reason;
};

// The examples of one doc file, run in one shell in order (a server started by one block serves
// the next ones, as it does for a reader following the page).
struct DocExamples {
  std::vector<RunBlock> blocks;
  std::vector<NotRun> not_run;
  // Texts a table quotes from the output of the file's examples (`<!-- docs-test: quoted from
  // the output above -->` before it): each `code` of its first column, with its line.
  std::vector<std::pair<size_t, std::string>> quotes;
};

constexpr std::string_view kMarker = "<!-- docs-test: ";

bool is_transcript(const std::vector<std::string>& body) {
  return std::any_of(body.begin(), body.end(), [](const auto& l) { return l.rfind("$ ", 0) == 0; });
}

// `$ ` commands (a trailing backslash, or a next line starting with `> ` as bash's second
// prompt shows it, continues one on the next line) and the lines after each, up to the next
// `$ `, as its output.
std::vector<Example> transcript_examples(const std::vector<std::string>& body, size_t first_line) {
  std::vector<Example> out;
  for (size_t i = 0; i < body.size(); ++i) {
    const std::string& l = body[i];
    if (l.rfind("$ ", 0) == 0) {
      Example ex{first_line + i, l.substr(2), {}, true};
      while (i + 1 < body.size() && ((!ex.command.empty() && ex.command.back() == '\\') ||
                                     body[i + 1].rfind("> ", 0) == 0)) {
        const std::string& next = body[++i];
        ex.command += "\n" + (next.rfind("> ", 0) == 0 ? next.substr(2) : next);
      }
      out.push_back(std::move(ex));
    } else if (!out.empty()) {
      out.back().expected.push_back(l);
    }
  }
  for (auto& ex : out) {
    while (!ex.expected.empty() && ex.expected.back().empty()) ex.expected.pop_back();
  }
  return out;
}

DocExamples doc_examples(const fs::path& file) {
  struct Fenced {
    size_t line;  // of the opening fence, 1-based
    std::string lang;
    std::vector<std::string> body;
    std::string marker;  // the docs-test marker on the line before the fence, without its frame
    size_t end;          // index of the line after the closing fence
  };
  const auto lines = lines_of(read(file));
  std::vector<Fenced> fences;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("```", 0) != 0) continue;
    Fenced f{i + 1, lines[i].substr(3), {}, {}, 0};
    if (i > 0 && lines[i - 1].rfind(kMarker, 0) == 0 && lines[i - 1].ends_with(" -->")) {
      f.marker = lines[i - 1].substr(
          kMarker.size(), lines[i - 1].size() - kMarker.size() - std::string(" -->").size());
    }
    for (++i; i < lines.size() && lines[i].rfind("```", 0) != 0; ++i) f.body.push_back(lines[i]);
    f.end = i + 1;
    fences.push_back(std::move(f));
  }
  auto shows_output = [](const Fenced& f) {
    return (f.lang.empty() || f.lang == "text" || f.lang == "json") && !is_transcript(f.body);
  };
  // The fence right after `f`, with only blank lines between them.
  auto next_of = [&](size_t k) -> const Fenced* {
    if (k + 1 >= fences.size()) return nullptr;
    for (size_t i = fences[k].end; i + 1 < fences[k + 1].line; ++i) {
      if (lines[i].find_first_not_of(' ') != std::string::npos) return nullptr;
    }
    return &fences[k + 1];
  };
  const std::string name = fs::relative(file, kRoot).string();
  DocExamples out;
  // Tables after a marker: their quotes are checked, or they are listed as not run.
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.rfind(kMarker, 0) != 0 || !l.ends_with(" -->") || lines[i + 1].rfind("| ", 0) != 0) {
      continue;
    }
    const std::string marker =
        l.substr(kMarker.size(), l.size() - kMarker.size() - std::string(" -->").size());
    if (marker.rfind("not run: ", 0) == 0) {
      out.not_run.push_back({name, i + 2, marker.substr(std::string("not run: ").size())});
      continue;
    }
    EXPECT_EQ(marker, "quoted from the output above") << name << ":" << i + 1 << ": unknown marker";
    for (size_t r = i + 3; r < lines.size() && lines[r].rfind("| ", 0) == 0; ++r) {
      const std::string first = lines[r].substr(2, lines[r].find(" |", 1) - 2);
      for (size_t a = first.find('`'); a != std::string::npos; a = first.find('`', a)) {
        const size_t b = first.find('`', a + 1);
        if (b == std::string::npos) break;
        out.quotes.emplace_back(r + 1, first.substr(a + 1, b - a - 1));
        a = b + 1;
      }
    }
  }
  for (size_t k = 0; k < fences.size(); ++k) {
    const Fenced& f = fences[k];
    const bool transcript =
        f.lang == "console" || ((f.lang.empty() || f.lang == "text") && is_transcript(f.body));
    const Fenced* output = f.lang == "sh" ? next_of(k) : nullptr;
    const bool sh_with_output = output != nullptr && shows_output(*output);
    if (f.marker.rfind("not run: ", 0) == 0) {
      if (transcript || sh_with_output) {
        out.not_run.push_back({name, f.line, f.marker.substr(std::string("not run: ").size())});
      }
      if (sh_with_output) ++k;
      continue;
    }
    RunBlock block{name, f.line, {}};
    if (transcript) {
      block.examples = transcript_examples(f.body, f.line + 1);
    } else if (sh_with_output) {
      Example ex{f.line + 1, {}, output->body, true};
      for (const auto& l : f.body) ex.command += l + "\n";
      while (!ex.expected.empty() && ex.expected.back().empty()) ex.expected.pop_back();
      block.examples.push_back(std::move(ex));
      ++k;
    } else if (f.lang == "sh" && f.marker == "run") {
      Example ex{f.line + 1, {}, {}, false};
      for (const auto& l : f.body) ex.command += l + "\n";
      block.examples.push_back(std::move(ex));
    } else {
      continue;
    }
    out.blocks.push_back(std::move(block));
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
  replace_all(work_dir + "/tmp/", "/tmp/");  // the examples' /tmp, moved into the scratch directory
  replace_all(work_dir, "<tmp>");
  replace_all(kRoot, "<checkout>");
  static const std::regex kTime(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?)");
  static const std::regex kMs(R"(\b\d+(\.\d+)? ?(ms|µs|us|s)\b)");
  static const std::regex kPort(R"(((127\.0\.0\.1|localhost|\[::1\]):)\d+)");
  static const std::regex kTmp(R"(/tmp/[A-Za-z0-9._/-]+)");
  s = std::regex_replace(s, kTime, "<time>");
  s = std::regex_replace(s, kPort, "$1<port>");
  static const std::regex kPortField(R"((port|Port)=\d+)");
  s = std::regex_replace(s, kPortField, "$1=<port>");
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

// A free loopback port for each port the examples of one file name (127.0.0.1:8080,
// localhost:8443), so runs on one machine (other checkouts' tests) do not collide.
std::map<std::string, std::string> free_ports(const std::vector<RunBlock>& blocks) {
  static const std::regex kAddress(R"((127\.0\.0\.1|localhost):(\d{2,5})\b)");
  std::map<std::string, std::string> out;
  std::vector<int> sockets;
  for (const auto& block : blocks) {
    for (const auto& ex : block.examples) {
      for (std::sregex_iterator it(ex.command.begin(), ex.command.end(), kAddress), end; it != end;
           ++it) {
        const std::string port = (*it)[2].str();
        if (out.count(port)) continue;
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
          ADD_FAILURE() << "no free port: " << std::strerror(errno);
          continue;
        }
        sockets.push_back(fd);
        out[port] = std::to_string(ntohs(a.sin_port));
      }
    }
  }
  for (int fd : sockets) ::close(fd);
  return out;
}

// The command as it runs here: its loopback ports moved to free ones, /tmp moved into the
// scratch directory.
std::string rewrite(std::string command, const std::map<std::string, std::string>& ports,
                    const std::string& work) {
  static const std::regex kAddress(R"((127\.0\.0\.1|localhost):(\d{2,5})\b)");
  std::string out;
  auto last = command.cbegin();
  for (std::sregex_iterator it(command.begin(), command.end(), kAddress), end; it != end; ++it) {
    out.append(last, (*it)[0].first);
    out += (*it)[1].str() + ":" + ports.at((*it)[2].str());
    last = (*it)[0].second;
  }
  out.append(last, command.cend());
  for (size_t p = out.find("/tmp/"); p != std::string::npos;
       p = out.find("/tmp/", p + work.size() + 5)) {
    out.replace(p, 5, work + "/tmp/");
  }
  return out;
}

// A quote as a pattern: `<file>`-style placeholders and `...` stand for any text.
std::regex quote_pattern(const std::string& quote) {
  static const std::regex kWild(R"(<[a-z][a-z -]*>|\.\.\.)");
  std::string out;
  auto last = quote.cbegin();
  auto escape = [&out](std::string::const_iterator b, std::string::const_iterator e) {
    for (auto c = b; c != e; ++c) {
      if (std::strchr("\\^$.|?*+()[]{}", *c) != nullptr) out += '\\';
      out += *c;
    }
  };
  for (std::sregex_iterator it(quote.begin(), quote.end(), kWild), end; it != end; ++it) {
    escape(last, (*it)[0].first);
    out += ".*";
    last = (*it)[0].second;
  }
  escape(last, quote.cend());
  return std::regex(out);
}

TEST(Docs, ExamplesPrintWhatTheDocsShow) {
  const fs::path work = fs::temp_directory_path() / ("hamisim-docs-" + std::to_string(getpid()));
  fs::remove_all(work);
  fs::create_directories(work / "tmp");
  // Commands run from a scratch directory that sees the checkout's inputs, so an example that
  // writes a file writes it there.
  for (const char* dir : {"examples", "deploy", "docs", "tests", "scripts"}) {
    fs::create_directory_symlink(fs::path(kRoot) / dir, work / dir);
  }
  const std::string bin_dir = fs::path(kBin).parent_path().string();
  size_t examples = 0, not_run = 0, servers = 0;
  for (const auto& file : doc_files()) {
    const DocExamples doc = doc_examples(file);
    for (const NotRun& n : doc.not_run) {
      ++not_run;
      EXPECT_FALSE(n.reason.empty()) << n.file << ":" << n.line << ": say why it is not run";
      std::printf("not run: %s:%zu: %s\n", n.file.c_str(), n.line, n.reason.c_str());
    }
    EXPECT_TRUE(doc.quotes.empty() || !doc.blocks.empty())
        << file << ": a table quotes the output above, but nothing above runs";
    if (doc.blocks.empty()) continue;
    const auto ports = free_ports(doc.blocks);
    // One bash for the file (variables and servers carry from one block to the next, as for a
    // reader); a marker line before each command splits the output; stderr goes with stdout,
    // as on a terminal. A command ending in `&` (a server) logs into a file of its own, shown
    // once it says it is listening; what it logs later is shown after the command during which
    // it was written (`kill %1; wait` shows its shutdown), so background lines never land in
    // another command's output at random.
    std::string script = "cd " + shell_quote(work.string()) + " && PATH=" + shell_quote(bin_dir) +
                         ":$PATH && exec 2>&1\n__bg=\n";
    std::vector<const Example*> all;
    size_t servers_here = 0;
    auto flush_logs = [&] {
      std::string out = "__rc=$?\n";
      for (size_t n = 0; n < servers_here; ++n) {
        const std::string log =
            shell_quote((work / ("bg-" + std::to_string(servers + n) + ".log")).string());
        const std::string off = "__off" + std::to_string(servers + n);
        out += "tail -c +$((" + off + "+1)) " + log + "; " + off + "=$(wc -c < " + log + ")\n";
      }
      return out + "(exit $__rc)\n";
    };
    for (const RunBlock& block : doc.blocks) {
      for (const Example& ex : block.examples) {
        const size_t i = all.size();
        all.push_back(&ex);
        // The marker keeps $? for examples such as `echo $?`.
        script +=
            "__rc=$?; printf '\\n@@hamisim-docs " + std::to_string(i) + "@@\\n'; (exit $__rc)\n";
        std::string command = rewrite(ex.command, ports, work.string());
        while (!command.empty() && (command.back() == '\n' || command.back() == ' '))
          command.pop_back();
        if (!command.empty() && command.back() == '&') {
          command.pop_back();
          const std::string n = std::to_string(servers + servers_here++);
          const std::string log = shell_quote((work / ("bg-" + n + ".log")).string());
          // Created first: the job's own redirection happens in the child, maybe after the grep.
          script += ": > " + log + "\n" + command + " >> " + log + " 2>&1 &\n__bg=\"$__bg $!\"\n";
          script += "for __i in $(seq 400); do grep -q ': listening' " + log +
                    " && break; kill -0 $! 2>/dev/null || break; sleep 0.05; done\n";
          script += "cat " + log + "; __off" + n + "=$(wc -c < " + log + ")\n";
        } else {
          script += command + "\n" + flush_logs();
        }
      }
    }
    script += "kill $__bg 2>/dev/null; wait\n";
    servers += servers_here;
    const auto r = testing::run_process({"/bin/bash", "-c", script}, std::chrono::seconds(300));
    ASSERT_TRUE(r.spawn_error.empty() && !r.timed_out) << file << ": " << describe(r);
    std::map<size_t, std::vector<std::string>> outputs;
    long current = -1;
    for (const auto& l : lines_of(normalize(r.out, work.string()))) {
      if (l.rfind("@@hamisim-docs ", 0) == 0) {
        current = std::stol(l.substr(15));
        continue;
      }
      if (current >= 0) outputs[static_cast<size_t>(current)].push_back(l);
    }
    // Every quote of a marked table is in what the examples printed (their own text as run,
    // before the placeholders the comparison uses).
    const auto printed = lines_of(r.out);
    for (const auto& [line, quote] : doc.quotes) {
      const std::regex pattern = quote_pattern(quote);
      const bool found = std::any_of(printed.begin(), printed.end(), [&](const std::string& l) {
        return std::regex_search(l, pattern);
      });
      EXPECT_TRUE(found) << fs::relative(file, kRoot).string() << ":" << line << ": `" << quote
                         << "` is quoted from the output above, but no example printed it";
    }
    size_t i = 0;
    for (const RunBlock& block : doc.blocks) {
      for (const Example& ex : block.examples) {
        std::vector<std::string> actual = outputs[i++];
        if (!ex.check) continue;
        ++examples;
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
  std::printf("%zu examples run, %zu blocks not run (marked)\n", examples, not_run);
  EXPECT_GT(examples, 10u) << "the docs lost their examples";
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
