// SPDX-License-Identifier: MIT
// The usual monitoring targets for a well-sized run, against what nvidia-smi and the allocator
// reported.
#include <string>

#include "after/calibration_steps.h"
#include "core/format.h"

namespace gpuplan::calibration {
namespace {

using text::Fmt;

void Add(const char* code, double value, double target, bool met, const std::string& text,
         std::vector<Note>* out) {
  out->push_back(
      Note{code, {{"value", value}, {"target", target}, {"met", met ? 1.0 : 0.0}}, text});
}

}  // namespace

double MemoryShare(const Setup& r, const Measurement& m) {
  if (m.gpu_memory_share >= 0) return m.gpu_memory_share;
  if (m.peak_reserved_bytes > 0 && r.gpu.CapacityBytes() > 0) {
    return m.peak_reserved_bytes / r.gpu.CapacityBytes();
  }
  return -1;
}

void Yardstick(Context* c) {
  const Measurement& m = c->measured;
  std::vector<Note>* out = &c->out.yardstick;
  const double share = MemoryShare(c->request, m);
  if (share >= 0) {
    Add("memory_share", share, kTargetMemoryShare, share >= kTargetMemoryShare,
        "GPU memory at peak " + Fmt("%.0f%%", share * 100) +
            " (target 85%+: below it, a "
            "larger batch or a smaller card would serve)",
        out);
  }
  if (m.gpu_utilization >= 0) {
    Add("gpu_utilization", m.gpu_utilization, kTargetUtilization,
        m.gpu_utilization >= kTargetUtilization,
        "GPU utilisation " + Fmt("%.0f%%", m.gpu_utilization * 100) +
            " (target 90%+: below it, the card waits for data or communication)",
        out);
  }
  if (m.host_ram_share >= 0) {
    Add("host_ram_share", m.host_ram_share, kHostRamHigh, m.host_ram_share <= kHostRamHigh,
        "host RAM " + Fmt("%.0f%%", m.host_ram_share * 100) +
            " (target 70-80%: above it, loaders and the page cache start to swap)",
        out);
  }
}

}  // namespace gpuplan::calibration
