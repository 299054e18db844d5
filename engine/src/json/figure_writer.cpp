// SPDX-License-Identifier: MIT
#include "json/figure_writer.h"

#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <string>

namespace gpuplan::json_io {
namespace {

struct Cell {
  const FigureRow* row;
  FigureValue value;
};

// The answer's sections' rows, found once (a lean plan writes every section of every row);
// null for any other prefix.
const std::vector<const FigureRow*>* Section(std::string_view prefix) {
  static const std::map<std::string, std::vector<const FigureRow*>, std::less<>> kSections = [] {
    std::map<std::string, std::vector<const FigureRow*>, std::less<>> m;
    for (const char* p : {"/cost/", "/framework/", "/performance/", "/power/", "/reliability/"}) {
      m.emplace(p, FiguresUnder(p));
    }
    return m;
  }();
  const auto it = kSections.find(prefix);
  return it != kSections.end() ? &it->second : nullptr;
}

void WriteValue(AnswerSink* s, const Cell& c) {
  if (!c.value.present) {
    s->Null();
    return;
  }
  switch (c.row->write) {
    case Write::kFigure:
      s->Figure(c.value.number);
      break;
    case Write::kBytes:
      s->Bytes(c.value.number);
      break;
    case Write::kInt:
      s->Int(static_cast<int64_t>(c.value.number));
      break;
    case Write::kBool:
      s->Bool(c.value.number != 0);
      break;
    case Write::kText:
      s->String(c.value.text);
      break;
  }
}

// Cells [begin, end), every pointer beginning with the `depth` characters already written, as
// one object: a key per next segment, an object where pointers go deeper.
void WriteCells(AnswerSink* s, const Cell* begin, const Cell* end, size_t depth) {
  s->BeginObject();
  for (const Cell* c = begin; c != end;) {
    const std::string_view rest = std::string_view(c->row->pointer).substr(depth);
    const size_t slash = rest.find('/');
    s->Key(rest.substr(0, slash));
    if (slash == std::string_view::npos) {
      WriteValue(s, *c);
      ++c;
      continue;
    }
    const std::string_view group = rest.substr(0, slash + 1);  // "offer/"
    const Cell* g = c;
    while (g != end && std::string_view(g->row->pointer).substr(depth, group.size()) == group) ++g;
    WriteCells(s, c, g, depth + group.size());
    c = g;
  }
  s->EndObject();
}

}  // namespace

void JsonSink::Bytes(double v) {
  // As result_io's Bytes: whole bytes; beyond 2^53 or not finite, infinity (out of range);
  // not a number stays NaN (a bug the envelope refuses).
  constexpr double kMaxBytes = 9007199254740992.0;
  if (std::isnan(v)) {
    Place(std::numeric_limits<double>::quiet_NaN());
  } else if (!std::isfinite(v) || std::fabs(v) > kMaxBytes) {
    Place(std::numeric_limits<double>::infinity());
  } else {
    Place(static_cast<int64_t>(std::llround(v)));
  }
}

Json* JsonSink::Place(Json v) {
  if (open_.empty()) {
    *root_ = std::move(v);
    return root_;
  }
  Json& slot = (*open_.back())[key_];
  slot = std::move(v);
  return &slot;
}

bool WriteFigures(AnswerSink* sink, const Estimate& e, std::string_view prefix, Answer answer) {
  // A section holds a dozen rows; the largest, cost, 12.
  std::array<Cell, 32> cells;
  size_t n = 0;
  std::vector<const FigureRow*> other;
  const std::vector<const FigureRow*>* rows = Section(prefix);
  if (rows == nullptr) {
    other = FiguresUnder(prefix);
    rows = &other;
  }
  for (const FigureRow* row : *rows) {
    if (answer == Answer::kLean && row->form == Form::kFullOnly) continue;
    const FigureValue v = row->get(e);
    const bool null = answer == Answer::kFull && v.null_in_full;
    if ((v.present || null) && n < cells.size()) cells[n++] = {row, v};
  }
  if (n == 0) return false;
  WriteCells(sink, cells.data(), cells.data() + n, prefix.size());
  return true;
}

Json FiguresJson(const Estimate& e, std::string_view prefix) {
  Json out = Json::object();
  JsonSink sink(&out);
  WriteFigures(&sink, e, prefix, Answer::kFull);
  return out;
}

Json FigureTableJson() {
  Json out = Json::object();
  for (const FigureRow& r : FigureTable()) {
    Json row = {{"unit", UnitName(r.unit)}};
    if (r.band != nullptr) row["band"] = r.band;
    if (r.headline) row["headline"] = true;
    if (r.form == Form::kFullOnly) row["full_only"] = true;
    out[r.pointer] = std::move(row);
  }
  return out;
}

}  // namespace gpuplan::json_io
