// SPDX-License-Identifier: MIT
// Fleet planning: a team's training, evaluation and serving together. For each
// card type that can run every workload: the pools sized for daily use and for the peak, how
// busy each card is, whether serving and batch work should share a pool, and what it costs.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "model/hardware.h"
#include "plan/question.h"

namespace gpuplan {

/// One recurring need of the team.
struct FleetWorkload {
  std::string name;
  Question request;             ///< as for plan (its gpu and parallel are chosen per card type)
  double every_days = 1;        ///< batch work: one run every this many days
  double requests_per_run = 0;  ///< offline inference: sequences each run generates
  std::array<double, 24> concurrency_by_hour{};  ///< online serving: the day's curve
  bool online = false;                           ///< serving with a daily curve
};

/// Money in the user's currency: their own hourly prices, else the catalog's USD converted.
struct FleetMoney {
  std::string currency = "USD";
  double per_usd = 1;                    ///< units of `currency` per US dollar
  std::map<std::string, double> hourly;  ///< card id -> price per card-hour, in currency
};

/// Buying instead of renting: purchase spread over the years of use, plus power.
struct FleetOwnership {
  bool given = false;
  std::map<std::string, double> purchase;  ///< card id -> price per card (with its server share)
  double years = 3;
  double power_per_kwh = 0;  ///< in currency
  double pue = 1.4;          ///< facility power / IT power
};

struct FleetRequest {
  std::vector<FleetWorkload> workloads;
  double growth = 1;  ///< demand multiplier over the planning horizon (six months' growth)
  FleetMoney money;
  FleetOwnership ownership;
};

/// An idle card's draw as a share of its board power (an assumption: H100-class boards idle
/// at roughly 60-100 W of 700).
inline constexpr double kIdlePowerFraction = 0.15;

/// One workload on one card type.
struct FleetShare {
  std::string name;
  bool online = false;
  int64_t cards_at_peak = 0;                ///< while it runs (serving: at the busiest hour)
  double card_hours_per_day = 0;            ///< batch: runs x cards x hours / every_days
  double run_s = 0;                         ///< batch: one run
  std::array<int64_t, 24> cards_by_hour{};  ///< online: replicas x GPUs per replica
  int64_t jobs_per_card = 1;                ///< small jobs that fit side by side on one card
  std::string setup;                        ///< the plan's setup, in words
};

/// One card type's fleet.
struct FleetOption {
  GpuSpec gpu;
  std::vector<FleetShare> shares;
  int64_t serving_peak_cards = 0;
  int64_t serving_min_cards = 0;
  double serving_card_hours_per_day = 0;
  int64_t batch_cards = 0;  ///< sized for daily use, at least the largest batch job
  double batch_card_hours_per_day = 0;
  int64_t owned_cards = 0;  ///< serving peak + batch pool (separate pools)
  double serving_utilization = 0;
  double batch_utilization = 0;
  Note share_verdict;  ///< keep_separate or share_off_peak, from the numbers
  bool priced = false;
  double own_per_month = 0;   ///< owned pool: rental price all hours, or the cost of ownership
  double rent_per_month = 0;  ///< rented capacity that follows the curve
  bool tco = false;           ///< own_per_month is purchase + power (ownership given)
  double purchase_per_month = 0;
  double power_per_month = 0;
};

struct FleetRejection {
  std::string gpu_id;
  std::string workload;
  std::string reason;
};

struct FleetResult {
  std::vector<FleetOption> options;  ///< cheapest owned fleet first (fewest cards unpriced)
  std::vector<FleetRejection> rejected;
  std::vector<Note> advice;
};

/// Days per month for the monthly figures.
inline constexpr double kDaysPerMonth = 30.4;

/// Plans the fleet over `cards`. Pure.
FleetResult PlanFleet(const FleetRequest& f, const std::vector<GpuSpec>& cards);

}  // namespace gpuplan
