// SPDX-License-Identifier: MIT
// Field-by-field reading of a JSON object that never throws: every problem becomes a Diagnostic
// with the field's JSON pointer, and every value read (or defaulted) is written to a
// normalised copy, so the caller sees exactly what was assumed.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostics.h"

namespace gpuplan::json_io {

using Json = nlohmann::json;

/// Escapes one reference token of a JSON pointer (RFC 6901: ~ -> ~0, / -> ~1).
std::string PointerToken(const std::string& key);
/// A short, safe rendering of a value for messages.
std::string Show(const Json& v);
/// A JSON type name for messages ("a string", "an array", ...).
std::string TypeName(const Json& v);

/// Shared state of one read: the diagnostics and the list of defaulted fields.
struct ReadContext {
  Diagnostics* diagnostics;
  std::vector<std::string>* defaults;  ///< JSON pointers of fields filled by a default; may be null
  void Error(std::string code, std::string path, std::string message) const;
};

/// Reads the members of one JSON object.
class Fields {
 public:
  /// `obj` must outlive this reader; when it is not an object, an error is recorded once and
  /// every read returns nothing. `out` (may be null) receives the normalised members.
  Fields(const Json* obj, std::string path, const ReadContext& ctx, Json* out);

  bool ok() const { return obj_ != nullptr; }
  bool Has(const char* key) const;
  std::string PathOf(const std::string& key) const { return path_ + "/" + PointerToken(key); }

  /// Integer in [min, max]; a float with no fraction is accepted.
  std::optional<int64_t> Int(const char* key, int64_t min, int64_t max);
  int64_t IntOr(const char* key, int64_t fallback, int64_t min, int64_t max);
  /// Finite number in [min, max].
  std::optional<double> Number(const char* key, double min, double max);
  double NumberOr(const char* key, double fallback, double min, double max);
  std::optional<bool> Bool(const char* key);
  bool BoolOr(const char* key, bool fallback);
  std::optional<std::string> String(const char* key, size_t max_len = 200);
  /// One of `allowed`.
  std::optional<std::string> Enum(const char* key, std::initializer_list<const char*> allowed);
  std::string EnumOr(const char* key, const std::string& fallback,
                     std::initializer_list<const char*> allowed);
  /// The raw member, marked as known; null when absent. Not copied to the normalised output.
  const Json* Raw(const char* key);
  /// Marks a key as known without reading it.
  void Accept(const char* key) { seen_.insert(key); }
  /// Records an unknown_field error for every member not read.
  void RejectUnknown();
  /// Normalised output object (may be null).
  Json* out() { return out_; }
  void Default(const char* key, const Json& value);

 private:
  /// The member read by `read` when present, else `fallback`, recorded as a default.
  template <typename T, typename Read>
  T ValueOr(const char* key, const T& fallback, Read read) {
    if (!Has(key)) {
      seen_.insert(key);
      Default(key, fallback);
      return fallback;
    }
    return read().value_or(fallback);
  }

  const Json* Member(const char* key);
  void Put(const char* key, const Json& value);

  const Json* obj_;
  std::string path_;
  ReadContext ctx_;
  Json* out_;
  std::set<std::string> seen_;
};

}  // namespace gpuplan::json_io

namespace gpuplan::json_io {

/// Parses JSON text without exceptions. Nesting deeper than 64 levels or text over `max_bytes`
/// is refused before parsing: the recursive parser would otherwise exhaust the (WASM) stack.
/// A JSON value the engine wrote itself (a lever's or remedy's new value); discarded when it is
/// not JSON. One parser instantiation for the whole engine keeps the WebAssembly small.
Json ParseValue(const std::string& text);

std::optional<Json> ParseJson(std::string_view text, const std::string& what, Diagnostics* errors,
                              size_t max_bytes = size_t{8} << 20);

}  // namespace gpuplan::json_io
