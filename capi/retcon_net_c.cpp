// The C API's networking: addresses, transports (UDP, user callbacks, in-memory, simulator),
// peer-to-peer and spectator sessions, and the per-peer queries. Handles that borrow another
// (a session its transport, a simulator its inner transport, an endpoint its network) hold a
// use count on it, so destroying the borrowed one first is WRONG_STATE, not a dangling pointer.
#include <cstring>

#include "handles.h"
#include "network_config_c.h"
#include "retcon.h"

namespace {

using namespace retcon::capi;
using retcon::Result;

void address_to_c(const retcon::PeerAddress& a, retcon_peer_address* out) noexcept {
  out->size = a.size;
  std::memcpy(out->bytes, a.bytes, sizeof out->bytes);
}

retcon::LinkProfile to_cpp(const retcon_link_profile& c) {
  retcon::LinkProfile p;
  p.latency_us = c.latency_us;
  p.jitter_us = c.jitter_us;
  p.loss = c.loss;
  p.duplicate = c.duplicate;
  p.reorder = c.reorder;
  p.reorder_delay_us = c.reorder_delay_us;
  p.bandwidth_bytes_per_s = c.bandwidth_bytes_per_s;
  p.max_queue_delay_us = c.max_queue_delay_us;
  p.blackout_period_us = c.blackout_period_us;
  p.blackout_duration_us = c.blackout_duration_us;
  p.blackout_offset_us = c.blackout_offset_us;
  return p;
}

bool valid_probability(double p) noexcept { return p >= 0.0 && p <= 1.0; }  // false for NaN

bool valid_link(const retcon_link_profile* p) noexcept {
  return p == nullptr || (known_size(p->size, sizeof *p) && valid_probability(p->loss) &&
                          valid_probability(p->duplicate) && valid_probability(p->reorder));
}

// A handle owning `transport` (throws std::bad_alloc, which the caller's guard turns into
// OUT_OF_MEMORY; the transport is freed either way).
std::unique_ptr<retcon_transport> wrap(std::unique_ptr<retcon::Transport> transport) {
  std::unique_ptr<retcon_transport> t(new retcon_transport);
  t->transport = transport.get();
  t->owned = std::move(transport);
  return t;
}

void copy_stats(const retcon::PeerStats& s, retcon_peer_stats* out) noexcept {
  out->state = s.state;
  out->ping_us = s.ping_us;
  out->jitter_us = s.jitter_us;
  out->send_queue_length = s.send_queue_length;
  out->local_frames_ahead = s.local_frames_ahead;
  out->remote_frames_ahead = s.remote_frames_ahead;
  out->bytes_sent = s.bytes_sent;
  out->datagrams_sent = s.datagrams_sent;
  out->bytes_received = s.bytes_received;
  out->datagrams_received = s.datagrams_received;
  out->dropped_truncated = s.dropped_truncated;
  out->dropped_oversized = s.dropped_oversized;
  out->dropped_bad_magic = s.dropped_bad_magic;
  out->dropped_bad_version = s.dropped_bad_version;
  out->dropped_unknown_type = s.dropped_unknown_type;
  out->dropped_malformed = s.dropped_malformed;
  out->dropped_bad_nonce = s.dropped_bad_nonce;
  out->dropped_replayed = s.dropped_replayed;
  out->dropped_out_of_window = s.dropped_out_of_window;
  out->dropped_wrong_state = s.dropped_wrong_state;
  out->send_failures = s.send_failures;
  out->dropped_bad_checksum = s.dropped_bad_checksum;
  for (size_t b = 0; b < sizeof out->lateness_histogram / sizeof out->lateness_histogram[0]; ++b)
    out->lateness_histogram[b] = s.lateness_histogram[b];
  out->lateness_max_frames = s.lateness_max_frames;
  out->late_input_events = s.late_input_events;
  out->desync_states_received = s.desync_states_received;
  out->desync_states_refused_too_large = s.desync_states_refused_too_large;
  out->desync_states_refused_mismatch = s.desync_states_refused_mismatch;
  out->desync_states_refused_unsolicited = s.desync_states_refused_unsolicited;
  out->desync_notices_expired = s.desync_notices_expired;
}

// The checks and the copy shared by the peer and spectator queries; `query` fills a PeerStats.
template <class Query>
retcon_result peer_stats(const retcon_session* session, retcon_peer_stats* out, Query&& query) noexcept {
  if (!is_session(session) || out == nullptr || !known_size(out->size, sizeof *out))
    return RETCON_RESULT_INVALID_ARGUMENT;
  if (session->p2p == nullptr) return RETCON_RESULT_NOT_FOUND;
  return guarded([&] {
    retcon::PeerStats s{};
    if (const Result r = query(&s); r != Result::ok) return to_c(r);
    copy_stats(s, out);
    return RETCON_RESULT_OK;
  });
}

// Shared by the two network session kinds: the transport check and its use count.
template <class Make>
retcon_result create_network_session(const char* function, const retcon_session_config* config,
                                     const retcon_game_callbacks* callbacks, retcon_transport* transport,
                                     uint32_t kind, retcon_session** out, Make&& make) noexcept {
  if (!is_transport(transport)) {
    if (out != nullptr) *out = nullptr;
    return reject(config, function, "transport is NULL or not a live transport");
  }
  return create_session(function, config, callbacks, kind, out, [&](const retcon::SessionConfig& c, retcon_session& s) {
    std::unique_ptr<retcon::P2PSession> session;
    if (const Result r = make(c, &session); r != Result::ok) return r;
    s.p2p = session.get();
    s.impl = std::move(session);
    s.transport = transport;
    ++transport->users;
    return Result::ok;
  });
}

}  // namespace

namespace {
// The network fields that the P2P and spectator configs share, from the C++ defaults.
template <class CConfig>
void set_network_defaults(CConfig* config, const retcon::NetworkConfig& network) {
  config->frame_rate = network.frame_rate;
  config->notify_delay_us = network.notify_delay_us;
  config->disconnect_timeout_us = network.disconnect_timeout_us;
  config->rng_seed = network.rng_seed;
  config->sync_round_trips = network.sync_round_trips;
  config->handshake_timeout_us = network.handshake_timeout_us;
  config->state_transfer = network.state_transfer ? 1u : 0u;
  config->transfer_bytes_per_second = network.transfer_bytes_per_second;
}
}  // namespace

extern "C" {

// ------------------------------------------------------------------------------- addresses

retcon_result retcon_ip_address(const char* host, uint16_t port, retcon_peer_address* out) {
  if (out == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *out = retcon_peer_address{};
  if (host == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    retcon::PeerAddress a;
    const Result r = retcon::make_ip_address(host, port, &a);
    if (r == Result::ok) address_to_c(a, out);
    return to_c(r);
  });
}

// ------------------------------------------------------------------------------- transports

retcon_result retcon_udp_transport_open(const char* host, uint16_t port, retcon_transport** out) {
  return retcon_udp_transport_open_with_receive_path(host, port, RETCON_UDP_RECEIVE_COMPLETION_RING, out);
}

retcon_result retcon_udp_transport_open_with_receive_path(const char* host, uint16_t port, uint32_t preferred,
                                                          retcon_transport** out) {
  if (out == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *out = nullptr;
  if (host == nullptr || preferred > RETCON_UDP_RECEIVE_SINGLE_CALLS) return RETCON_RESULT_INVALID_ARGUMENT;
  // The C values are the C++ enum's, in the same order (pinned in abi_checks.cpp).
  const auto path = static_cast<retcon::UdpTransport::ReceivePath>(preferred);
  return guarded([&] {
    std::unique_ptr<retcon::UdpTransport> udp;
    if (Result r = retcon::UdpTransport::open(host, port, &udp, path); r != Result::ok) return to_c(r);
    retcon::UdpTransport* raw = udp.get();
    std::unique_ptr<retcon_transport> t = wrap(std::move(udp));
    t->udp = raw;
    *out = t.release();
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_transport_callbacks_init(retcon_transport_callbacks* callbacks) {
  if (callbacks == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *callbacks = retcon_transport_callbacks{};
  callbacks->size = sizeof(retcon_transport_callbacks);
  return RETCON_RESULT_OK;
}

retcon_result retcon_callback_transport_create(const retcon_transport_callbacks* callbacks, retcon_transport** out) {
  if (out == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *out = nullptr;
  if (callbacks == nullptr || !known_size(callbacks->size, sizeof *callbacks) || !callbacks->send ||
      !callbacks->receive)
    return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    retcon::TransportCallbacks cb;
    cb.user = callbacks->user;
    cb.send = callbacks->send;  // the same function types in C and C++ (abi_checks.cpp)
    cb.receive = callbacks->receive;
    *out = wrap(std::make_unique<retcon::CallbackTransport>(cb)).release();
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_memory_network_create(retcon_memory_network** out) {
  if (out == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *out = nullptr;
  return guarded([&] {
    *out = new retcon_memory_network;
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_memory_network_destroy(retcon_memory_network* network) {
  if (network == nullptr) return RETCON_RESULT_OK;
  if (!is_memory_network(network)) return RETCON_RESULT_INVALID_ARGUMENT;
  if (network->endpoints > 0) return RETCON_RESULT_WRONG_STATE;
  return guarded([&] {
    network->magic = 0;
    delete network;
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_memory_network_add_endpoint(retcon_memory_network* network, retcon_transport** out) {
  if (out == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *out = nullptr;
  if (!is_memory_network(network)) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    std::unique_ptr<retcon_transport> t(new retcon_transport);
    retcon::InMemoryTransport* endpoint = network->network.add_endpoint();
    t->transport = endpoint;
    t->memory = endpoint;
    t->network = network;
    ++network->endpoints;
    *out = t.release();
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_link_profile_init(retcon_link_profile* profile) {
  if (profile == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  const retcon::LinkProfile defaults;
  *profile = retcon_link_profile{};
  profile->size = sizeof *profile;
  profile->latency_us = defaults.latency_us;
  profile->jitter_us = defaults.jitter_us;
  profile->loss = defaults.loss;
  profile->duplicate = defaults.duplicate;
  profile->reorder = defaults.reorder;
  profile->reorder_delay_us = defaults.reorder_delay_us;
  profile->bandwidth_bytes_per_s = defaults.bandwidth_bytes_per_s;
  profile->max_queue_delay_us = defaults.max_queue_delay_us;
  profile->blackout_period_us = defaults.blackout_period_us;
  profile->blackout_duration_us = defaults.blackout_duration_us;
  profile->blackout_offset_us = defaults.blackout_offset_us;
  return RETCON_RESULT_OK;
}

retcon_result retcon_network_simulator_create(retcon_transport* inner, uint64_t seed, retcon_transport** out) {
  if (out == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *out = nullptr;
  if (!is_transport(inner)) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    auto sim = std::make_unique<retcon::NetworkSimulator>(*inner->transport, seed);
    retcon::NetworkSimulator* raw = sim.get();
    std::unique_ptr<retcon_transport> t = wrap(std::move(sim));
    t->simulator = raw;
    t->inner = inner;
    ++inner->users;
    *out = t.release();
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_network_simulator_set_links(retcon_transport* simulator, const retcon_link_profile* outgoing,
                                                 const retcon_link_profile* incoming) {
  if (!is_transport(simulator) || simulator->simulator == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  if (!valid_link(outgoing) || !valid_link(incoming)) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    // The explicit blackouts (retcon_network_simulator_set_blackouts) stay as they were.
    if (outgoing) {
      retcon::LinkProfile p = to_cpp(*outgoing);
      p.blackouts = simulator->outgoing_link.blackouts;
      simulator->outgoing_link = std::move(p);
      simulator->simulator->set_outgoing(simulator->outgoing_link);
    }
    if (incoming) {
      retcon::LinkProfile p = to_cpp(*incoming);
      p.blackouts = simulator->incoming_link.blackouts;
      simulator->incoming_link = std::move(p);
      simulator->simulator->set_incoming(simulator->incoming_link);
    }
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_network_simulator_set_time(retcon_transport* simulator, uint64_t now_us) {
  if (!is_transport(simulator) || simulator->simulator == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    TransportScope scope(*simulator);  // due datagrams go out through the inner transport
    simulator->simulator->set_time(now_us);
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_transport_address(const retcon_transport* transport, retcon_peer_address* out) {
  if (out == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *out = retcon_peer_address{};
  if (!is_transport(transport)) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    if (transport->udp) address_to_c(transport->udp->local_address(), out);
    else if (transport->memory) address_to_c(transport->memory->address(), out);
    else return RETCON_RESULT_NOT_FOUND;
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_transport_destroy(retcon_transport* transport) {
  if (transport == nullptr) return RETCON_RESULT_OK;
  if (!is_transport(transport)) return RETCON_RESULT_INVALID_ARGUMENT;
  if (transport->users > 0 || transport->busy > 0) return RETCON_RESULT_WRONG_STATE;
  return guarded([&] {
    delete transport;
    return RETCON_RESULT_OK;
  });
}

// ------------------------------------------------------------------------------- sessions

retcon_result retcon_p2p_config_init(retcon_p2p_config* config) {
  if (config == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  const retcon::P2PConfig defaults;
  *config = retcon_p2p_config{};
  config->size = sizeof *config;
  set_network_defaults(config, defaults.network);
  config->desync_interval = defaults.desync_interval;
  config->late_input_threshold = defaults.late_input_threshold;
  config->adaptive_delay_rtt_percent = defaults.adaptive_delay_rule.rtt_percent;
  config->adaptive_delay_min_frames = defaults.adaptive_delay_rule.min_frames;
  config->adaptive_delay_max_frames = defaults.adaptive_delay_rule.max_frames;
  config->input_batch_frames = defaults.network.input_batch_frames;
  config->loss_hold_frames = defaults.network.loss_hold_frames;
  for (uint32_t& kind : config->player_kinds) kind = RETCON_PLAYER_LOCAL;
  return RETCON_RESULT_OK;
}

retcon_result retcon_spectator_config_init(retcon_spectator_config* config) {
  if (config == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  const retcon::SpectatorConfig defaults;
  *config = retcon_spectator_config{};
  config->size = sizeof *config;
  set_network_defaults(config, defaults.network);
  config->catchup_threshold = defaults.catchup_threshold;
  config->catchup_max_frames = defaults.catchup_max_frames;
  return RETCON_RESULT_OK;
}

retcon_result retcon_peer_stats_init(retcon_peer_stats* stats) {
  if (stats == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *stats = retcon_peer_stats{};
  stats->size = sizeof *stats;
  return RETCON_RESULT_OK;
}

retcon_result retcon_p2p_session_create(const retcon_session_config* config, const retcon_p2p_config* p2p,
                                        const retcon_game_callbacks* callbacks, retcon_transport* transport,
                                        retcon_session** out) {
  static constexpr const char* kFunction = "retcon_p2p_session_create";
  if (out != nullptr) *out = nullptr;
  if (p2p == nullptr) return reject(config, kFunction, "p2p is NULL");
  if (!known_size(p2p->size, sizeof *p2p))
    return reject(config, kFunction, "p2p->size is not sizeof(retcon_p2p_config): fill it with retcon_p2p_config_init");
  if (p2p->num_spectators > RETCON_MAX_SPECTATORS)
    return reject(config, kFunction, "num_spectators must be 0..32");
  return create_network_session(
      kFunction, config, callbacks, transport, RETCON_SESSION_P2P, out,
      [&](const retcon::SessionConfig& session, std::unique_ptr<retcon::P2PSession>* made) {
        retcon::P2PConfig c;
        c.session = session;
        p2p_config_from_c(*p2p, transport->transport, &c);
        if (const char* why = retcon::validate_p2p_config(c)) {
          reject(config, kFunction, why);  // logs the reason
          return Result::invalid_argument;
        }
        return retcon::create_p2p_session(c, made);
      });
}

retcon_result retcon_spectator_session_create(const retcon_session_config* config,
                                              const retcon_spectator_config* spectator,
                                              const retcon_game_callbacks* callbacks, retcon_transport* transport,
                                              retcon_session** out) {
  static constexpr const char* kFunction = "retcon_spectator_session_create";
  if (out != nullptr) *out = nullptr;
  if (spectator == nullptr) return reject(config, kFunction, "spectator is NULL");
  if (!known_size(spectator->size, sizeof *spectator))
    return reject(config, kFunction,
                  "spectator->size is not sizeof(retcon_spectator_config): fill it with retcon_spectator_config_init");
  return create_network_session(
      kFunction, config, callbacks, transport, RETCON_SESSION_SPECTATOR, out,
      [&](const retcon::SessionConfig& session, std::unique_ptr<retcon::P2PSession>* made) {
        retcon::SpectatorConfig c;
        c.session = session;
        spectator_config_from_c(*spectator, transport->transport, &c);
        if (const char* why = retcon::validate_spectator_config(c)) {
          reject(config, kFunction, why);  // logs the reason
          return Result::invalid_argument;
        }
        return retcon::create_spectator_session(c, made);
      });
}

retcon_result retcon_session_is_running(const retcon_session* session, uint32_t* running) {
  if (!is_session(session) || running == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    *running = session->p2p ? uint32_t(session->p2p->running()) : 1u;
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_session_frames_to_wait(const retcon_session* session, int32_t* frames) {
  if (!is_session(session) || frames == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    *frames = session->p2p ? session->p2p->frames_to_wait() : 0;
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_session_should_wait(const retcon_session* session, uint32_t* wait) {
  if (!is_session(session) || wait == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    *wait = session->p2p ? uint32_t(session->p2p->should_wait()) : 0u;
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_session_should_catch_up(const retcon_session* session, uint32_t* extra) {
  if (!is_session(session) || extra == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    *extra = session->p2p ? uint32_t(session->p2p->should_catch_up()) : 0u;
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_adaptive_delay_rule_init(retcon_adaptive_delay_rule* rule) {
  if (rule == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  const retcon::AdaptiveDelayRule defaults;
  *rule = retcon_adaptive_delay_rule{};
  rule->size = sizeof *rule;
  rule->rtt_percent = defaults.rtt_percent;
  rule->min_frames = defaults.min_frames;
  rule->max_frames = defaults.max_frames;
  return RETCON_RESULT_OK;
}

retcon_result retcon_delay_choice_init(retcon_delay_choice* choice) {
  if (choice == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *choice = retcon_delay_choice{};
  choice->size = sizeof *choice;
  return RETCON_RESULT_OK;
}

retcon_result retcon_session_choose_input_delay(retcon_session* session, const retcon_adaptive_delay_rule* rule,
                                                retcon_delay_choice* choice) {
  if (retcon_result r = check_mutable(session); r != RETCON_RESULT_OK) return r;
  if (rule == nullptr || choice == nullptr || !known_size(rule->size, sizeof *rule) ||
      !known_size(choice->size, sizeof *choice))
    return RETCON_RESULT_INVALID_ARGUMENT;
  if (session->p2p == nullptr) return RETCON_RESULT_WRONG_STATE;
  return guarded([&] {
    CallbackScope scope(*session);  // input_delay_chosen reaches on_event
    retcon::AdaptiveDelayRule r;
    r.rtt_percent = rule->rtt_percent;
    r.min_frames = rule->min_frames;
    r.max_frames = rule->max_frames;
    retcon::DelayChoice c;
    if (const Result result = session->p2p->choose_input_delay(r, &c); result != Result::ok) return to_c(result);
    choice->delay = c.delay;
    choice->previous = c.previous;
    choice->peers = c.peers;
    choice->median_rtt_us = c.median_rtt_us;
    for (uint32_t p = 0; p < RETCON_MAX_PLAYERS; ++p) choice->rtt_us[p] = c.rtt_us[p];
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_session_apply_input_delay(retcon_session* session, const retcon_adaptive_delay_rule* rule,
                                              int32_t frame, retcon_delay_choice* choice) {
  if (retcon_result r = check_mutable(session); r != RETCON_RESULT_OK) return r;
  if (rule == nullptr || choice == nullptr || !known_size(rule->size, sizeof *rule) ||
      !known_size(choice->size, sizeof *choice))
    return RETCON_RESULT_INVALID_ARGUMENT;
  if (session->p2p == nullptr) return RETCON_RESULT_WRONG_STATE;
  return guarded([&] {
    CallbackScope scope(*session);  // input_delay_chosen / input_delay_applied reach on_event
    retcon::AdaptiveDelayRule r;
    r.rtt_percent = rule->rtt_percent;
    r.min_frames = rule->min_frames;
    r.max_frames = rule->max_frames;
    retcon::DelayChoice c;
    const Result result = session->p2p->apply_input_delay(r, frame, &c);
    choice->frame = c.frame;
    if (result != Result::ok) return to_c(result);
    choice->delay = c.delay;
    choice->previous = c.previous;
    choice->peers = c.peers;
    choice->median_rtt_us = c.median_rtt_us;
    for (uint32_t p = 0; p < RETCON_MAX_PLAYERS; ++p) choice->rtt_us[p] = c.rtt_us[p];
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_session_between_rounds(retcon_session* session) {
  if (retcon_result r = check_mutable(session); r != RETCON_RESULT_OK) return r;
  if (session->p2p == nullptr) return RETCON_RESULT_WRONG_STATE;
  return guarded([&] {
    CallbackScope scope(*session);
    return to_c(session->p2p->between_rounds());
  });
}

retcon_result retcon_session_answer_rejoin(retcon_session* session, int32_t player, uint32_t accept) {
  if (retcon_result r = check_mutable(session); r != RETCON_RESULT_OK) return r;
  if (session->p2p == nullptr) return RETCON_RESULT_UNSUPPORTED;
  return guarded([&] {
    CallbackScope scope(*session);
    return to_c(session->p2p->answer_rejoin(retcon::PlayerIndex(player), accept != 0));
  });
}

retcon_result retcon_session_send_decision(retcon_session* session, const void* bytes, size_t size, int32_t frame,
                                          int32_t* earliest) {
  if (earliest != nullptr) *earliest = RETCON_NULL_FRAME;
  if (retcon_result r = check_mutable(session); r != RETCON_RESULT_OK) return r;
  if (session->p2p == nullptr) return RETCON_RESULT_WRONG_STATE;
  return guarded([&] {
    CallbackScope scope(*session);  // a refusal is logged through the game's logger
    return to_c(session->p2p->send_decision(bytes, size, frame, earliest));
  });
}

int32_t retcon_session_earliest_decision_frame(const retcon_session* session) {
  if (!is_session(session) || session->p2p == nullptr) return RETCON_NULL_FRAME;
  return session->p2p->earliest_decision_frame();
}

retcon_result retcon_session_disconnect_player(retcon_session* session, int32_t player) {
  if (retcon_result r = check_mutable(session); r != RETCON_RESULT_OK) return r;
  if (session->p2p == nullptr) return RETCON_RESULT_WRONG_STATE;
  return guarded([&] {
    CallbackScope scope(*session);  // the disconnected event reaches on_event from here
    return to_c(session->p2p->disconnect_player(player));
  });
}

retcon_result retcon_session_get_peer_stats(const retcon_session* session, int32_t player, retcon_peer_stats* stats) {
  return peer_stats(session, stats, [&](retcon::PeerStats* s) { return session->p2p->peer_stats(player, s); });
}

retcon_result retcon_session_dropped_unknown_address(const retcon_session* session, uint64_t* count) {
  if (!is_session(session) || count == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *count = session->p2p ? session->p2p->dropped_unknown_address() : 0;
  return RETCON_RESULT_OK;
}

retcon_result retcon_memory_network_dropped_unknown_address(const retcon_memory_network* network, uint64_t* count) {
  if (!is_memory_network(network) || count == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *count = network->network.dropped_unknown_address();
  return RETCON_RESULT_OK;
}

retcon_result retcon_session_get_spectator_stats(const retcon_session* session, uint32_t index,
                                                 retcon_peer_stats* stats) {
  return peer_stats(session, stats, [&](retcon::PeerStats* s) { return session->p2p->spectator_stats(index, s); });
}

}  // extern "C"
