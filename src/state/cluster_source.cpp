#include "state/cluster_source.h"

namespace hamisim::state {

std::string_view to_string(ApiCode code) {
  switch (code) {
    case ApiCode::kNotFound:
      return "NotFound";
    case ApiCode::kConflict:
      return "Conflict";
    case ApiCode::kGone:
      return "Gone";
    case ApiCode::kInvalid:
      return "Invalid";
    case ApiCode::kForbidden:
      return "Forbidden";
    case ApiCode::kUnavailable:
      return "Unavailable";
    case ApiCode::kOther:
      return "Other";
  }
  return "Other";
}

std::string_view to_string(EventType type) {
  switch (type) {
    case EventType::kAdded:
      return "ADDED";
    case EventType::kModified:
      return "MODIFIED";
    case EventType::kDeleted:
      return "DELETED";
  }
  return "ADDED";
}

}  // namespace hamisim::state
