#include "model/strict_json.h"

#include <boost/json/basic_parser_impl.hpp>

#include <cmath>
#include <string>
#include <unordered_set>
#include <vector>

namespace hamisim::model {
namespace {

namespace json = boost::json;

// A Boost.JSON parser handler that builds nothing: it tracks where it is (for the error
// message) and each open object's keys.
class StrictHandler {
 public:
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);

  explicit StrictHandler(const StrictJsonOptions& options) : options_(options) {}

  // The offence that stopped the parser, if one of ours did.
  const std::string& problem() const { return problem_; }

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }

  bool on_object_begin(json::error_code&) {
    frames_.push_back(Frame{true, {}, 0, {}});
    return true;
  }
  bool on_object_end(std::size_t, json::error_code&) {
    frames_.pop_back();
    return value_done();
  }
  bool on_array_begin(json::error_code&) {
    frames_.push_back(Frame{false, {}, 0, {}});
    return true;
  }
  bool on_array_end(std::size_t, json::error_code&) {
    frames_.pop_back();
    return value_done();
  }

  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    key_.append(s.data(), s.size());
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code& ec) {
    key_.append(s.data(), s.size());
    Frame& f = frames_.back();
    f.key = std::move(key_);
    key_.clear();
    if (options_.unique_keys && !f.keys.insert(f.key).second) {
      return fail(ec, "duplicate key \"" + f.key + "\" at " + where(frames_.size() - 1));
    }
    return true;
  }

  bool on_string_part(json::string_view, std::size_t, json::error_code&) { return true; }
  bool on_string(json::string_view, std::size_t, json::error_code&) { return value_done(); }
  bool on_number_part(json::string_view s, json::error_code&) {
    number_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t, json::string_view, json::error_code&) { return number_done(); }
  bool on_uint64(std::uint64_t, json::string_view, json::error_code&) { return number_done(); }
  bool on_double(double d, json::string_view s, json::error_code& ec) {
    if (options_.finite_numbers && !std::isfinite(d)) {
      number_.append(s.data(), s.size());
      if (number_.size() > 40) number_ = number_.substr(0, 37) + "...";
      return fail(
          ec, "number " + number_ + " is out of range of a float64 at " + where(frames_.size()));
    }
    return number_done();
  }
  bool on_bool(bool, json::error_code&) { return value_done(); }
  bool on_null(json::error_code&) { return value_done(); }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }

 private:
  struct Frame {
    bool is_object;
    std::string key;  // the current member's (objects)
    size_t index;     // the current element's (arrays)
    std::unordered_set<std::string> keys;
  };

  bool number_done() {
    number_.clear();
    return value_done();
  }
  // A value ended: the array it is in moves on to its next element.
  bool value_done() {
    if (!frames_.empty() && !frames_.back().is_object) ++frames_.back().index;
    return true;
  }

  // The path of the value the first `depth` frames lead to.
  std::string where(size_t depth) const {
    std::string path;
    for (size_t i = 0; i < depth; ++i) {
      const Frame& f = frames_[i];
      if (f.is_object) {
        if (!path.empty()) path += '.';
        path += f.key;
      } else {
        path += '[' + std::to_string(f.index) + ']';
      }
    }
    return path.empty() ? "the top level" : path;
  }

  bool fail(json::error_code& ec, std::string problem) {
    problem_ = std::move(problem);
    // Any error stops the parser; the message is ours.
    ec = json::make_error_code(json::error::extra_data);
    return false;
  }

  const StrictJsonOptions& options_;
  std::vector<Frame> frames_;
  std::string key_;
  std::string number_;
  std::string problem_;
};

}  // namespace

Status check_strict_json(std::string_view text, const StrictJsonOptions& options) {
  json::parse_options parse_options;
  parse_options.max_depth = options.max_depth;
  json::basic_parser<StrictHandler> parser(parse_options, options);
  json::error_code ec;
  const size_t used = parser.write_some(false, text.data(), text.size(), ec);
  if (!ec) return ok_status();
  if (!parser.handler().problem().empty()) return make_error(parser.handler().problem());
  return make_error("invalid JSON: " + ec.message() + " at offset " + std::to_string(used));
}

}  // namespace hamisim::model
