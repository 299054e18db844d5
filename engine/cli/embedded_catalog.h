// SPDX-License-Identifier: MIT
#pragma once

namespace gpuplan {

/// catalog/gpus.json as it was at build time.
const char* EmbeddedGpusJson();
/// catalog/models.json as it was at build time.
const char* EmbeddedModelsJson();

}  // namespace gpuplan
