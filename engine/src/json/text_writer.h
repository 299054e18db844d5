// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace gpuplan::json_io {

/// x to six significant digits, as a lean plan writes its figures: the double nearest the
/// decimal printf's "%.6g" makes of it.
double SixSignificantDigits(double x);

/// Whole bytes: v rounded, or -1 beyond 2^53 (9 PB, not exact in JavaScript) or not finite.
int64_t RoundBytes(double v);

/// Writes JSON text straight into a string, for the answers written on every keystroke (the
/// lean plan): building them as nlohmann objects first was most of a plan's time.
/// Its text is byte for byte what nlohmann's compact dump of the same values gives (a test
/// holds it to that), so the caller writes an object's keys in sorted order, as nlohmann's
/// std::map keeps them. The string holds every value written at the top level once it is
/// complete; inside one, text gathers in the writer's own buffer first.
class TextWriter {
 public:
  explicit TextWriter(std::string* out) : out_(out) {}
  TextWriter(const TextWriter&) = delete;
  TextWriter& operator=(const TextWriter&) = delete;
  ~TextWriter() { Flush(); }

  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  /// An object's next key, one of the engine's own names (written as it is); its value follows.
  void Key(std::string_view key);

  void String(std::string_view s);
  void Bool(bool b);
  void Int(int64_t v);
  /// A figure to six significant digits (SixSignificantDigits), written as a whole number when
  /// it is one; a figure that is not finite is remembered (Finiteness) and written as null.
  void Figure(double v);
  /// Whole bytes; beyond 2^53 (9 PB) or not finite is remembered as Bytes() in result_io does.
  void Bytes(double v);
  /// A double as nlohmann writes one, unrounded: the shortest text that reads back as it,
  /// ".0" on a whole number; one that is not finite is remembered and written as null.
  void Double(double v);
  /// A value that is already JSON text (nlohmann's compact dump).
  void Raw(std::string_view json);

  /// 0: every figure finite; 1: some too large; 2: some not a number (a bug).
  int Finiteness() const { return finiteness_; }
  /// Marks the answer as holding such a figure, for values written by Raw.
  void NoteFiniteness(int f) { finiteness_ = f > finiteness_ ? f : finiteness_; }

 private:
  void Open(char c);
  void Close(char c);
  void BeforeValue();
  /// After a value: a complete top-level one goes to the string.
  void AfterValue() {
    if (depth_ == 0) Flush();
  }
  void Flush() {
    out_->append(buf_, used_);
    used_ = 0;
  }
  // Bytes go to the buffer, not through the string: in WebAssembly each append and push_back
  // of a string is a call into libc++, and they were a tenth of the page default's plan.
  void Put(char c) {
    if (used_ == kBuffer) Flush();
    buf_[used_++] = c;
  }
  void Put(const char* p, size_t n) {
    if (n > kBuffer - used_) {
      Flush();
      if (n > kBuffer) {
        out_->append(p, n);
        return;
      }
    }
    std::memcpy(buf_ + used_, p, n);
    used_ += n;
  }
  void Put(std::string_view s) { Put(s.data(), s.size()); }
  void PutString(std::string_view s);
  void PutInt(int64_t v);

  // The lean plan nests six deep; deeper nesting would lose its commas (the round-trip test
  // of tests/unit/json/lean_plan_test.cpp would see it).
  static constexpr int kMaxDepth = 32;
  static constexpr size_t kBuffer = 4096;
  std::string* out_;
  char buf_[kBuffer] = {};
  size_t used_ = 0;
  bool first_[kMaxDepth] = {};
  int depth_ = 0;
  bool after_key_ = false;
  int finiteness_ = 0;
};

}  // namespace gpuplan::json_io
