// SPDX-License-Identifier: MIT
// `gpuplan limits`: the reverse questions for one card, count and layout.
#pragma once

#include <string>

#include "json/catalog_io.h"
#include "json/request_io.h"
#include "plan/limits.h"

namespace gpuplan::json_io {

/// Per purpose (pretrain, full_finetune, lora, qlora, inference), the catalog's largest model
/// that runs on at most the request's count of its card in some layout `plan` finds, with the
/// request's lengths, precision, targets and framework where the purpose matches its own.
Json LargestModels(const LoadedCatalog& catalog, const ParsedRequest& pr);

/// The limits result: the request's own limits and the largest models.
Json LimitsToJson(const ParsedRequest& pr, const Limits& limits, const Json& models,
                  const std::string& catalog_version);

}  // namespace gpuplan::json_io
