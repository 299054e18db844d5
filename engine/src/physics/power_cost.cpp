// SPDX-License-Identifier: MIT
// Board and site power of the job, and what it costs at the card's or the request's price.
#include <cmath>
#include <string>

#include "physics/estimate_parts.h"

namespace gpuplan {

using text::D;

void AddPower(const Setup& r, Estimate* e) {
  PowerEstimate& p = e->power;
  const GpuSpec& g = r.gpu;
  const double per_gpu = g.board_power_w * (1 + kNodeOverheadFraction);
  p.gpu_watts = g.board_power_w;
  p.node_watts = per_gpu * D(e->gpus_per_node_used);
  p.total_watts = per_gpu * D(r.parallel.gpus);
  p.nodes = (r.parallel.gpus + g.gpus_per_node - 1) / g.gpus_per_node;
  if (!e->describe) return;
  if (e->with_explain) {
    const std::vector<std::string> overhead = {
        "servers draw 0.8x their GPU boards again for CPUs, memory, NICs and fans (DGX H100: "
        "10.2 kW for 5.6 kW of GPUs)"};
    e->explain["/power/gpu_watts"] = {
        "the card's board power", {{"board_power_w", g.board_power_w}}, {}};
    e->explain["/power/node_watts"] = {"board power x 1.8 x GPUs in one node",
                                       {{"gpus_in_node", D(e->gpus_per_node_used)}},
                                       overhead};
    e->explain["/power/total_watts"] = {
        "board power x 1.8 x GPUs of the job", {{"gpus", D(r.parallel.gpus)}}, overhead};
  }
  const Targets& site = r.targets;
  // A site that cannot feed or cool a card makes it throttle.
  if (site.node_power_w > 0 && p.node_watts > site.node_power_w) {
    e->warnings.push_back(Note{"node_power_over_limit",
                               {{"node_watts", p.node_watts}, {"limit_w", site.node_power_w}},
                               "a node draws about " + std::to_string(std::lround(p.node_watts)) +
                                   " W, above the site's " +
                                   std::to_string(std::lround(site.node_power_w)) +
                                   " W per node: cards will throttle or the node will not fit",
                               "/constraints/node_power_w"});
  }
  if (site.rack_power_w > 0) {
    p.nodes_per_rack = static_cast<int64_t>(site.rack_power_w / std::max(1.0, p.node_watts));
    if (p.nodes_per_rack == 0) {
      e->warnings.push_back(Note{"rack_power_below_one_node",
                                 {{"node_watts", p.node_watts}, {"rack_w", site.rack_power_w}},
                                 "one node draws more than a rack's power budget",
                                 "/constraints/rack_power_w"});
    }
  }
  if (site.cooling == "air" && g.cooling == "liquid") {
    e->warnings.push_back(Note{"cooling_mismatch",
                               {},
                               g.name + " needs liquid cooling; the site offers air only",
                               "/constraints/cooling"});
  }
}

void AddCost(const Setup& r, Estimate* e) {
  CostEstimate& c = e->cost;
  c.market = r.pricing.market.market;
  const double price = r.pricing.usd_per_gpu_hour >= 0 ? r.pricing.usd_per_gpu_hour
                                                       : r.gpu.usd_per_hour.value_or(-1);
  if (price < 0) return;
  c.priced = true;
  if (r.pricing.usd_per_gpu_hour < 0) {
    c.supply = r.gpu.supply;
    c.offer = r.gpu.offer;
  }
  c.usd_per_gpu_hour = price;
  c.usd_per_hour = price * D(r.parallel.gpus);
  double tokens_per_s = 0;
  if (e->has_training) {
    c.usd_total = c.usd_per_hour * e->training.time_s / 3600;
    tokens_per_s = e->training.tokens_per_s;
  } else if (e->has_serving) {
    tokens_per_s = e->serving.at_request.decode_tokens_per_s_total;
  }
  c.usd_per_million_tokens = tokens_per_s > 0 ? c.usd_per_hour / (tokens_per_s * 3600) * 1e6 : -1;
  if (!e->with_explain) return;
  e->explain["/cost/usd_per_hour"] = {
      "price per GPU-hour x gpus",
      {{"usd_per_gpu_hour", price}},
      {r.pricing.usd_per_gpu_hour >= 0
           ? "the request's price"
           : "the lowest rental the catalog lists in the market " + c.market +
                 ", converted at its exchange rate (cost/offer names it)"}};
  e->explain["/cost/usd_per_million_tokens"] = {
      e->has_training
          ? "usd_per_hour / (training tokens per hour) x 10^6"
          : "usd_per_hour / (output tokens per hour at the requested concurrency) x 10^6",
      {},
      {}};
}

}  // namespace gpuplan
