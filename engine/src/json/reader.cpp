// SPDX-License-Identifier: MIT
#include "json/reader.h"

#include <cmath>
#include <limits>

namespace gpuplan::json_io {

std::string PointerToken(const std::string& key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Show(const Json& v) {
  // replace: invalid UTF-8 in user input must not make dump() throw.
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (s.size() > 60) s.replace(57, std::string::npos, "...");
  return s;
}

std::string TypeName(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    default:
      return "a number";
  }
}

void ReadContext::Error(std::string code, std::string path, std::string message) const {
  // A hostile request could list a million bad items: report the first hundred, then one line
  // saying there were more, so the answer stays small.
  constexpr size_t kMaxErrors = 100;
  if (diagnostics->size() > kMaxErrors) return;
  if (diagnostics->size() == kMaxErrors) {
    diagnostics->push_back({"too_many_errors", "", "more errors follow; fix these first"});
    return;
  }
  diagnostics->push_back(Diagnostic{std::move(code), std::move(path), std::move(message)});
}

Fields::Fields(const Json* obj, std::string path, const ReadContext& ctx, Json* out)
    : obj_(obj), path_(std::move(path)), ctx_(ctx), out_(out) {
  if (obj_ != nullptr && !obj_->is_object()) {
    ctx_.Error("wrong_type", path_, "must be an object, got " + TypeName(*obj_));
    obj_ = nullptr;
  }
  if (out_ != nullptr && !out_->is_object()) *out_ = Json::object();
}

bool Fields::Has(const char* key) const {
  return obj_ != nullptr && obj_->find(key) != obj_->end();
}

const Json* Fields::Member(const char* key) {
  seen_.insert(key);
  if (obj_ == nullptr) return nullptr;
  const auto it = obj_->find(key);
  return it == obj_->end() ? nullptr : &*it;
}

void Fields::Put(const char* key, const Json& value) {
  if (out_ != nullptr) (*out_)[key] = value;
}

void Fields::Default(const char* key, const Json& value) {
  Put(key, value);
  if (ctx_.defaults != nullptr) ctx_.defaults->push_back(PathOf(key));
}

const Json* Fields::Raw(const char* key) { return Member(key); }

namespace {

std::string IntRequirement(int64_t min) {
  if (min == 1) return "must be a positive integer";
  if (min == 0) return "must be a non-negative integer";
  return "must be an integer of at least " + std::to_string(min);
}

}  // namespace

std::optional<int64_t> Fields::Int(const char* key, int64_t min, int64_t max) {
  const Json* v = Member(key);
  if (v == nullptr) return std::nullopt;
  int64_t value = 0;
  bool too_big = false;
  if (v->is_number_unsigned()) {
    too_big = v->get<uint64_t>() > static_cast<uint64_t>(max);
    value = too_big ? max : v->get<int64_t>();
  } else if (v->is_number_integer()) {
    value = v->get<int64_t>();
  } else if (v->is_number_float()) {
    const double d = v->get<double>();
    if (!std::isfinite(d) || std::floor(d) != d) {
      ctx_.Error("wrong_type", PathOf(key), IntRequirement(min) + ", got " + Show(*v));
      return std::nullopt;
    }
    too_big = d > static_cast<double>(max);
    value = too_big ? max : (d < static_cast<double>(min) ? min - 1 : static_cast<int64_t>(d));
  } else {
    ctx_.Error("wrong_type", PathOf(key), IntRequirement(min) + ", got " + TypeName(*v));
    return std::nullopt;
  }
  if (value < min) {
    ctx_.Error("out_of_range", PathOf(key), IntRequirement(min) + ", got " + Show(*v));
    return std::nullopt;
  }
  if (too_big || value > max) {
    ctx_.Error("out_of_range", PathOf(key),
               "must be at most " + std::to_string(max) + ", got " + Show(*v));
    return std::nullopt;
  }
  Put(key, value);
  return value;
}

int64_t Fields::IntOr(const char* key, int64_t fallback, int64_t min, int64_t max) {
  return ValueOr(key, fallback, [&] { return Int(key, min, max); });
}

std::optional<double> Fields::Number(const char* key, double min, double max) {
  const Json* v = Member(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) {
    ctx_.Error("wrong_type", PathOf(key), "must be a number, got " + TypeName(*v));
    return std::nullopt;
  }
  const double d = v->get<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "must be a number in [%g, %g], got ", min, max);
    ctx_.Error("out_of_range", PathOf(key), buf + Show(*v));
    return std::nullopt;
  }
  Put(key, *v);
  return d;
}

double Fields::NumberOr(const char* key, double fallback, double min, double max) {
  return ValueOr(key, fallback, [&] { return Number(key, min, max); });
}

std::optional<bool> Fields::Bool(const char* key) {
  const Json* v = Member(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) {
    ctx_.Error("wrong_type", PathOf(key), "must be true or false, got " + Show(*v));
    return std::nullopt;
  }
  Put(key, *v);
  return v->get<bool>();
}

bool Fields::BoolOr(const char* key, bool fallback) {
  return ValueOr(key, fallback, [&] { return Bool(key); });
}

std::optional<std::string> Fields::String(const char* key, size_t max_len) {
  const Json* v = Member(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) {
    ctx_.Error("wrong_type", PathOf(key), "must be a string, got " + TypeName(*v));
    return std::nullopt;
  }
  const auto& s = v->get_ref<const std::string&>();
  if (s.empty() || s.size() > max_len) {
    ctx_.Error("out_of_range", PathOf(key),
               "must be a non-empty string of at most " + std::to_string(max_len) + " characters");
    return std::nullopt;
  }
  Put(key, s);
  return s;
}

std::optional<std::string> Fields::Enum(const char* key,
                                        std::initializer_list<const char*> allowed) {
  const Json* v = Member(key);
  if (v == nullptr) return std::nullopt;
  std::string list;
  for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
  if (v->is_string()) {
    const auto& s = v->get_ref<const std::string&>();
    for (const char* a : allowed) {
      if (s == a) {
        Put(key, s);
        return s;
      }
    }
  }
  ctx_.Error(v->is_string() ? "unknown_value" : "wrong_type", PathOf(key),
             "must be one of " + list + ", got " + Show(*v));
  return std::nullopt;
}

std::string Fields::EnumOr(const char* key, const std::string& fallback,
                           std::initializer_list<const char*> allowed) {
  return ValueOr(key, fallback, [&] { return Enum(key, allowed); });
}

void Fields::RejectUnknown() {
  if (obj_ == nullptr) return;
  for (auto it = obj_->begin(); it != obj_->end(); ++it) {
    if (seen_.count(it.key()) == 0) {
      ctx_.Error("unknown_field", PathOf(it.key()), "is not a known field");
    }
  }
}

}  // namespace gpuplan::json_io

namespace gpuplan::json_io {

std::optional<Json> ParseJson(std::string_view text, const std::string& what, Diagnostics* errors,
                              size_t max_bytes) {
  constexpr int kMaxDepth = 64;
  if (text.size() > max_bytes) {
    errors->push_back(
        {"too_large", "", what + " is larger than " + std::to_string(max_bytes >> 20) + " MiB"});
    return std::nullopt;
  }
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxDepth) {
        errors->push_back({"too_deep", "", what + " nests deeper than 64 levels"});
        return std::nullopt;
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  Json doc = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    errors->push_back({"invalid_json", "", what + " is not valid JSON"});
    return std::nullopt;
  }
  return doc;
}

Json ParseValue(const std::string& text) {
  return Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

}  // namespace gpuplan::json_io
