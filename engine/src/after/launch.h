// SPDX-License-Identifier: MIT
// Launch-ready output: the command line, and the configuration file where the
// framework takes one, that runs a fixed setup the way the engine estimated it.
#pragma once

#include <string>
#include <vector>

#include "physics/estimate.h"
#include "plan/question.h"

namespace gpuplan {

struct LaunchFile {
  std::string name;
  std::string text;
};

struct Launch {
  std::string
      framework;        ///< the profile the command is for (the request's, else vllm/pytorch_fsdp)
  std::string command;  ///< one shell command, lines joined with " \\\n  "
  std::vector<LaunchFile> files;
  std::vector<std::string> notes;  ///< what the command leaves to the user, in words
};

/// Pure. `e` is the setup's estimate (serving: its max_concurrency sizes the batch).
Launch LaunchFor(const Question& q, const Estimate& e);

}  // namespace gpuplan
