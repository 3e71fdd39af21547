// The C API's knobs and counters of two transports: a network simulator's explicit blackouts,
// limits and per-direction statistics, and a UDP socket's receive budgets and statistics.
// Everything here is a setting or a query of an existing transport handle; creating and
// destroying them is in retcon_net_c.cpp.
#include <cstddef>
#include <vector>

#include "handles.h"
#include "retcon.h"

namespace {

using namespace retcon::capi;

bool is_simulator(const retcon_transport* t) noexcept { return is_transport(t) && t->simulator != nullptr; }
bool is_udp(const retcon_transport* t) noexcept { return is_transport(t) && t->udp != nullptr; }

bool valid_windows(const retcon_blackout_window* windows, uint32_t count) noexcept {
  if (count > RETCON_SIMULATOR_MAX_BLACKOUTS) return false;
  if (count > 0 && windows == nullptr) return false;
  for (uint32_t i = 0; i < count; ++i)
    if (windows[i].start_us >= windows[i].end_us) return false;
  return true;
}

void copy_stats(const retcon::SimulatorStats& s, retcon_simulator_stats* out) noexcept {
  out->sent = s.sent;
  out->delivered = s.delivered;
  out->dropped_loss = s.dropped_loss;
  out->dropped_blackout = s.dropped_blackout;
  out->dropped_bandwidth = s.dropped_bandwidth;
  out->duplicated = s.duplicated;
  out->dropped_capacity = s.dropped_capacity;
  out->budget_exhausted = s.budget_exhausted;
  out->time_budget_stops = s.time_budget_stops;
}

bool wanted_stats(const retcon_simulator_stats* s) noexcept {
  return s == nullptr || known_size(s->size, sizeof *s);
}

}  // namespace

extern "C" {

retcon_result retcon_network_simulator_set_blackouts(retcon_transport* simulator, uint32_t directions,
                                                     const retcon_blackout_window* windows, uint32_t count) {
  if (!is_simulator(simulator)) return RETCON_RESULT_INVALID_ARGUMENT;
  if (directions == 0 || (directions & ~uint32_t{RETCON_LINK_BOTH}) != 0) return RETCON_RESULT_INVALID_ARGUMENT;
  if (!valid_windows(windows, count)) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    // Built before anything changes: an allocation failure leaves both directions as they were.
    std::vector<retcon::BlackoutWindow> list(count);
    for (uint32_t i = 0; i < count; ++i) list[i] = {windows[i].start_us, windows[i].end_us};
    retcon::LinkProfile out = simulator->outgoing_link;
    retcon::LinkProfile in = simulator->incoming_link;
    if (directions & RETCON_LINK_OUTGOING) out.blackouts = list;
    if (directions & RETCON_LINK_INCOMING) in.blackouts = list;
    simulator->outgoing_link = std::move(out);
    simulator->incoming_link = std::move(in);
    simulator->simulator->set_outgoing(simulator->outgoing_link);
    simulator->simulator->set_incoming(simulator->incoming_link);
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_simulator_limits_init(retcon_simulator_limits* limits) {
  if (limits == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  const retcon::SimulatorLimits defaults;
  *limits = retcon_simulator_limits{};
  limits->size = sizeof *limits;
  limits->receive_budget = static_cast<uint32_t>(defaults.receive_budget);
  limits->capacity = static_cast<uint32_t>(defaults.capacity);
  limits->receive_time_budget_us = defaults.receive_time_budget_us;
  return RETCON_RESULT_OK;
}

retcon_result retcon_network_simulator_set_limits(retcon_transport* simulator, const retcon_simulator_limits* limits) {
  if (!is_simulator(simulator) || limits == nullptr || !known_size(limits->size, sizeof *limits))
    return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    retcon::SimulatorLimits l;
    l.receive_budget = limits->receive_budget;
    l.capacity = limits->capacity;
    l.receive_time_budget_us = limits->receive_time_budget_us;
    simulator->simulator->set_limits(l);
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_network_simulator_get_limits(const retcon_transport* simulator, retcon_simulator_limits* limits) {
  if (!is_simulator(simulator) || limits == nullptr || !known_size(limits->size, sizeof *limits))
    return RETCON_RESULT_INVALID_ARGUMENT;
  const retcon::SimulatorLimits& l = simulator->simulator->limits();
  // set_limits takes them from 32-bit fields, so they fit.
  limits->receive_budget = static_cast<uint32_t>(l.receive_budget);
  limits->capacity = static_cast<uint32_t>(l.capacity);
  limits->receive_time_budget_us = l.receive_time_budget_us;
  return RETCON_RESULT_OK;
}

retcon_result retcon_simulator_stats_init(retcon_simulator_stats* stats) {
  if (stats == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *stats = retcon_simulator_stats{};
  stats->size = sizeof *stats;
  return RETCON_RESULT_OK;
}

retcon_result retcon_network_simulator_get_stats(const retcon_transport* simulator, retcon_simulator_stats* outgoing,
                                                 retcon_simulator_stats* incoming) {
  if (!is_simulator(simulator) || !wanted_stats(outgoing) || !wanted_stats(incoming))
    return RETCON_RESULT_INVALID_ARGUMENT;
  if (outgoing) copy_stats(simulator->simulator->outgoing_stats(), outgoing);
  if (incoming) copy_stats(simulator->simulator->incoming_stats(), incoming);
  return RETCON_RESULT_OK;
}

retcon_result retcon_network_simulator_in_flight(const retcon_transport* simulator, uint64_t* datagrams,
                                                 uint64_t* buffer_bytes) {
  if (!is_simulator(simulator)) return RETCON_RESULT_INVALID_ARGUMENT;
  if (datagrams) *datagrams = simulator->simulator->in_flight();
  if (buffer_bytes) *buffer_bytes = simulator->simulator->buffer_bytes();
  return RETCON_RESULT_OK;
}

retcon_result retcon_udp_transport_set_receive_budget(retcon_transport* udp, uint32_t datagrams) {
  if (!is_udp(udp)) return RETCON_RESULT_INVALID_ARGUMENT;
  return to_c(udp->udp->set_receive_budget(datagrams));
}

retcon_result retcon_udp_transport_set_receive_time_budget(retcon_transport* udp, uint64_t microseconds) {
  if (!is_udp(udp)) return RETCON_RESULT_INVALID_ARGUMENT;
  udp->udp->set_receive_time_budget(microseconds);
  return RETCON_RESULT_OK;
}

retcon_result retcon_udp_transport_receive_path(const retcon_transport* udp, uint32_t* out) {
  if (!is_udp(udp) || out == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *out = static_cast<uint32_t>(udp->udp->receive_path());
  return RETCON_RESULT_OK;
}

retcon_result retcon_udp_stats_init(retcon_udp_stats* stats) {
  if (stats == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *stats = retcon_udp_stats{};
  stats->size = sizeof *stats;
  return RETCON_RESULT_OK;
}

retcon_result retcon_udp_transport_get_stats(const retcon_transport* udp, retcon_udp_stats* stats) {
  if (!is_udp(udp) || stats == nullptr || !known_size(stats->size, sizeof *stats))
    return RETCON_RESULT_INVALID_ARGUMENT;
  stats->send_errors = udp->udp->send_errors();
  stats->receive_errors = udp->udp->receive_errors();
  stats->receive_budget_stops = udp->udp->receive_budget_stops();
  stats->system_calls = udp->udp->system_calls();
  return RETCON_RESULT_OK;
}

}  // extern "C"
