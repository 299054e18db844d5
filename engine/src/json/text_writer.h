// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuplan::json_io {

/// x to six significant digits, as a lean plan writes its figures: the double nearest the
/// decimal printf's "%.6g" makes of it.
double SixSignificantDigits(double x);

/// Whole bytes: v rounded, or -1 beyond 2^53 (9 PB, not exact in JavaScript) or not finite.
int64_t RoundBytes(double v);

/// Writes JSON text straight into a string, for the answers written on every keystroke (the
/// lean plan): building them as nlohmann objects first was most of a plan's time (issue #18).
/// Its text is byte for byte what nlohmann's compact dump of the same values gives (a test
/// holds it to that), so the caller writes an object's keys in sorted order, as nlohmann's
/// std::map keeps them.
class TextWriter {
 public:
  explicit TextWriter(std::string* out) : out_(out) {}

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

  // The lean plan nests six deep; deeper nesting would lose its commas (the round-trip test
  // of tests/unit/lean_plan_test.cpp would see it).
  static constexpr int kMaxDepth = 32;
  std::string* out_;
  bool first_[kMaxDepth] = {};
  int depth_ = 0;
  bool after_key_ = false;
  int finiteness_ = 0;
};

}  // namespace gpuplan::json_io
