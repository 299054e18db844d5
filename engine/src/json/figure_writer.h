// SPDX-License-Identifier: MIT
// One writer for the answer's figures (physics/figures.h) in both forms: the full answer,
// built as nlohmann JSON, and the lean plan, written straight to text. Both walk the same rows
// through the same code, so the two forms agree by construction; they differ only in what the
// sink does with a figure (the lean text rounds it to six significant digits) and in the rows
// the full answer alone carries.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "json/reader.h"
#include "json/text_writer.h"
#include "physics/figures.h"

namespace gpuplan::json_io {

/// Which answer is written.
enum class Answer : uint8_t { kFull, kLean };

/// Where an answer's values go: the calls a JSON writer makes, keys in sorted order.
class AnswerSink {
 public:
  virtual ~AnswerSink() = default;
  virtual void BeginObject() = 0;
  virtual void EndObject() = 0;
  virtual void Key(std::string_view key) = 0;
  virtual void Figure(double v) = 0;
  virtual void Bytes(double v) = 0;
  virtual void Int(int64_t v) = 0;
  virtual void Bool(bool b) = 0;
  virtual void String(std::string_view s) = 0;
  virtual void Null() = 0;
};

/// The lean plan's text (TextWriter's rounding of figures and bytes).
class TextSink final : public AnswerSink {
 public:
  explicit TextSink(TextWriter* w) : w_(w) {}
  void BeginObject() override { w_->BeginObject(); }
  void EndObject() override { w_->EndObject(); }
  void Key(std::string_view key) override { w_->Key(key); }
  void Figure(double v) override { w_->Figure(v); }
  void Bytes(double v) override { w_->Bytes(v); }
  void Int(int64_t v) override { w_->Int(v); }
  void Bool(bool b) override { w_->Bool(b); }
  void String(std::string_view s) override { w_->String(s); }
  void Null() override { w_->Raw("null"); }

 private:
  TextWriter* w_;
};

/// The full answer as nlohmann JSON: figures as computed, bytes whole (result_io's Bytes).
class JsonSink final : public AnswerSink {
 public:
  explicit JsonSink(Json* root) : root_(root) {}
  void BeginObject() override { open_.push_back(Place(Json::object())); }
  void EndObject() override { open_.pop_back(); }
  void Key(std::string_view key) override { key_ = key; }
  void Figure(double v) override { Place(v); }
  void Bytes(double v) override;
  void Int(int64_t v) override { Place(v); }
  void Bool(bool b) override { Place(b); }
  void String(std::string_view s) override { Place(std::string(s)); }
  void Null() override { Place(nullptr); }

 private:
  Json* Place(Json v);
  Json* root_;
  std::vector<Json*> open_;
  std::string key_;
};

/// The rows under `prefix` ("/performance/") present in this answer, as one object whose
/// members nest as their pointers do. False, writing nothing, when none is present.
bool WriteFigures(AnswerSink* sink, const Estimate& e, std::string_view prefix, Answer answer);

/// The same object built as nlohmann JSON (the full answer); {} when none is present.
Json FiguresJson(const Estimate& e, std::string_view prefix);

/// The table itself, for the page (web/figures.js): {pointer: {unit, band, headline,
/// full_only}}, band and the flags only where they apply.
Json FigureTableJson();

}  // namespace gpuplan::json_io
