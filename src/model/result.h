#pragma once
// Errors as values: every path that handles input returns Result<T>; exceptions never cross a
// request boundary.

#include <string>
#include <utility>
#include <variant>

namespace hamisim {

// An error names what was wrong and where ("spec.containers[0].resources.limits: ...").
struct Error {
  std::string message;
};

// A value or an error. E is Error on every input path; the cluster sources' API calls carry
// their own error type (state::ApiResult, with the API code).
template <class T, class E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(E error) : v_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  T value_or(T fallback) const& { return ok() ? value() : std::move(fallback); }
  T value_or(T fallback) && { return ok() ? std::move(*this).value() : std::move(fallback); }

  const E& error() const { return std::get<1>(v_); }
  // The error's code, for error types that carry one.
  auto code() const requires requires(const E& e) { e.code; }
  { return error().code; }

 private:
  std::variant<T, E> v_;
};

// Result<void> equivalent.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() {
  return Ok{};
}

inline Error make_error(std::string message) {
  return Error{std::move(message)};
}

}  // namespace hamisim
