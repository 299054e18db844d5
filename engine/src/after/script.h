// SPDX-License-Identifier: MIT
// The measurement script: a runnable PyTorch program that rebuilds the request's
// model with random weights, runs its workload under its settings on one GPU (or, under
// torchrun, data parallel over several), and prints what
// it measured next to what the engine estimated.
#pragma once

#include <string>
#include <string_view>

#include "physics/estimate.h"
#include "plan/question.h"

namespace gpuplan {

/// The Python source for `r`, with `one_gpu` (the engine's estimate of the same request on one
/// GPU, what the script measures when run alone) and `layout` (the request's own multi-GPU
/// layout, what it measures under torchrun with as many processes; null for one GPU) embedded
/// for comparison. Pure: text in, text out.
std::string MeasurementScript(const Question& q, const Estimate& one_gpu, const Estimate* layout,
                              std::string_view engine_version, std::string_view catalog_version);

/// The single-GPU request the script measures: the same job without parallelism (a multi-GPU
/// layout is reported in the script's settings but measured one rank at a time).
Setup OneGpu(const Setup& r);

}  // namespace gpuplan
