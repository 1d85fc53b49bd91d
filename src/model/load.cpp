// Loading objects from files: one file, a directory of *.json/*.yaml/*.yml files, or stdin.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "model/decode.h"

namespace hamisim::model {
namespace {

constexpr size_t kMaxFileBytes = size_t{256} << 20;

}  // namespace

std::string display_name(const std::string& path) {
  return path == "-" ? std::string("<stdin>") : path;
}

Result<std::string> read_file(const std::string& given) {
  const bool is_stdin = given == "-";
  const std::string path = display_name(given);
  const int fd = is_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error("cannot open " + path + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() {
      if (fd != STDIN_FILENO) ::close(fd);
    }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return make_error("cannot stat " + path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return make_error("cannot read " + path + ": is a directory");
  if (st.st_size > static_cast<off_t>(kMaxFileBytes)) {
    return make_error("cannot read " + path + ": larger than " +
                      std::to_string(kMaxFileBytes >> 20) + " MiB");
  }
  std::string out;
  // Room for simdjson's padding: decode_objects reads JSON in place instead of copying it.
  out.reserve(static_cast<size_t>(st.st_size) + kJsonPadding);
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error("cannot read " + path + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    // Files whose size stat does not know (pipes, /proc) are capped as they are read.
    if (out.size() > kMaxFileBytes) {
      return make_error("cannot read " + path + ": larger than " +
                        std::to_string(kMaxFileBytes >> 20) + " MiB");
    }
  }
  // The padding's bytes are zeroes, as in simdjson's own padded strings.
  const size_t size = out.size();
  out.append(kJsonPadding, '\0');
  out.resize(size);
  return out;
}

Result<std::vector<std::string>> input_files(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool is_dir = path != "-" && fs::is_directory(path, ec);
  std::vector<std::string> files;
  if (is_dir) {
    fs::directory_iterator it(path, ec);
    if (ec) return make_error("cannot list " + path + ": " + ec.message());
    for (const fs::directory_iterator end; it != end; it.increment(ec)) {
      if (ec) return make_error("cannot list " + path + ": " + ec.message());
      const fs::path& p = it->path();
      const std::string ext = p.extension().string();
      if (ext != ".json" && ext != ".yaml" && ext != ".yml") continue;
      std::error_code file_ec;
      if (!it->is_regular_file(file_ec)) continue;
      files.push_back(p.string());
    }
    if (ec) return make_error("cannot list " + path + ": " + ec.message());
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  return files;
}

Result<ObjectSet> load_objects(const std::string& path, const DecodeKinds& kinds) {
  auto files = input_files(path);
  if (!files) return files.error();
  ObjectSet all;
  for (const auto& file : *files) {
    auto text = read_file(file);
    if (!text) return text.error();
    auto set = decode_objects(*text, kinds);
    if (!set) return make_error(display_name(file) + ": " + set.error().message);
    const std::string name = display_name(file);
    for (SkippedItem& item : set->skipped) {
      item.path = name + (item.path.empty() ? "" : ": " + item.path);
    }
    for (RawObject& object : set->dra_objects) {
      object.path = name + (object.path.empty() ? "" : ": " + object.path);
    }
    all.append(std::move(*set));
  }
  return all;
}

}  // namespace hamisim::model
