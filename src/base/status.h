// Errors as values. Libraries return Status or Expected<T>; only the CLI turns them into
// messages and exit codes (DESIGN.md rule 5).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace hotline {

// A success, or a one-line human message saying what is wrong (naming the file where there is
// one). Cheap to copy when ok.
class Status {
 public:
  Status() = default;
  static Status Error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !failed_; }
  const std::string& message() const { return message_; }

 private:
  explicit Status(std::string message) : failed_(true), message_(std::move(message)) {}
  bool failed_ = false;
  std::string message_;
};

// A value or the Status explaining why there is none.
template <typename T>
class Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}       // NOLINT: implicit by design
  Expected(Status error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<T>(state_); }
  const T& value() const { return std::get<T>(state_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  Status status() const { return ok() ? Status() : std::get<Status>(state_); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace hotline
