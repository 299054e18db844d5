// SPDX-License-Identifier: MIT
// The measurement script (MISSION M16): a runnable PyTorch program that rebuilds the request's
// model with random weights, runs its workload under its settings on one GPU, and prints what
// it measured next to what the engine estimated.
#pragma once

#include <string>
#include <string_view>

#include "gpuplan/estimate.h"
#include "gpuplan/request.h"

namespace gpuplan {

/// The Python source for `r`, with `one_gpu` (the engine's estimate of the same request on one
/// GPU, which is what the script measures) embedded for comparison. Pure: text in, text out.
std::string MeasurementScript(const Request& r, const Estimate& one_gpu,
                              std::string_view engine_version, std::string_view catalog_version);

/// The single-GPU request the script measures: the same job without parallelism (a multi-GPU
/// layout is reported in the script's settings but measured one rank at a time).
Request OneGpu(const Request& r);

}  // namespace gpuplan
