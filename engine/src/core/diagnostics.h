// SPDX-License-Identifier: MIT
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gpuplan {

/// One problem with the input: a stable code, the JSON pointer of the field, and English text.
struct Diagnostic {
  std::string code;     ///< e.g. "out_of_range", "unknown_field", "wrong_type"
  std::string path;     ///< JSON pointer, e.g. "/workload/seq_len"
  std::string message;  ///< says the reason and what was given
};

/// A note on a well-formed request: infeasibility reasons, warnings, advice. `params` holds the
/// numbers the message uses, so a page can word it in another language.
struct Note {
  Note() = default;
  Note(std::string c, std::map<std::string, double> p, std::string m, std::string at = "")
      : code(std::move(c)), params(std::move(p)), message(std::move(m)), path(std::move(at)) {}

  std::string code;
  std::map<std::string, double> params;
  std::string message;
  std::string path;  ///< JSON pointer of the request field the note is about, when there is one
};

/// How one reported figure was obtained: the formula in words and the inputs it used.
struct Explanation {
  std::string formula;
  std::map<std::string, double> inputs;
  std::vector<std::string> assumptions;
};

using Diagnostics = std::vector<Diagnostic>;

}  // namespace gpuplan
