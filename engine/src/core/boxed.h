// SPDX-License-Identifier: MIT
// An optional value kept on the heap: the size of a pointer when empty. For the parts of a
// result that most rows lack but that are large when present (a whole request): held inline
// by std::optional they made every plan row three times its size, and a plan over a large
// catalog touched that much more memory.
#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace gpuplan {

template <class T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(const Boxed& other) : p_(other.p_ ? std::make_unique<T>(*other.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) p_ = other.p_ ? std::make_unique<T>(*other.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  ~Boxed() = default;

  Boxed& operator=(T value) {
    p_ = std::make_unique<T>(std::move(value));
    return *this;
  }
  Boxed& operator=(std::optional<T> value) {
    p_ = value ? std::make_unique<T>(std::move(*value)) : nullptr;
    return *this;
  }

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  const T& operator*() const { return *p_; }
  T& operator*() { return *p_; }
  const T* operator->() const { return p_.get(); }
  T* operator->() { return p_.get(); }

 private:
  std::unique_ptr<T> p_;
};

}  // namespace gpuplan
