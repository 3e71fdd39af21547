// Re-entrancy through the C API: every entry point that can run a callback (game callbacks,
// the logger, a transport's callbacks) refuses to destroy the handle it is running on from
// inside that callback (RETCON_RESULT_WRONG_STATE), as retcon.h promises; the handle stays
// usable afterwards. Run under the ASan build (-DRETCON_SANITIZE=ON), a use-after-free here
// is a crash, not a silent pass.
#include <cstring>
#include <deque>
#include <vector>

#include <gtest/gtest.h>

#include "capi/c_test_game.h"
#include "retcon.h"

namespace retcon::test {
namespace {

// What a callback tried, and what it got.
struct Attempt {
  retcon_session* session = nullptr;      // to destroy from the callback
  retcon_transport* transport = nullptr;  // to destroy from the callback
  bool armed = false;
  int tries = 0;
  retcon_result session_result = RETCON_RESULT_OK;
  retcon_result transport_result = RETCON_RESULT_OK;
  std::vector<uint32_t> events;

  void fire() {
    if (!armed) return;
    ++tries;
    if (session) session_result = retcon_session_destroy(session);
    if (transport) transport_result = retcon_transport_destroy(transport);
  }
};

// A game whose on_event (or advance) tries to destroy things.
struct Game {
  ctg_game game;
  Attempt* attempt = nullptr;
  bool on_advance = false;
  void (*extra)(Game*) = nullptr;  // also run from on_event when set
};

void event_hook(void* user, const retcon_event* e) {
  auto* g = static_cast<Game*>(user);
  g->attempt->events.push_back(e->type);
  if (!g->on_advance) g->attempt->fire();
  if (g->extra) g->extra(g);
}
size_t save_hook(void* user, int32_t frame, uint8_t* buffer, size_t capacity) {
  ctg_game* game = &static_cast<Game*>(user)->game;
  retcon_game_callbacks cb;
  retcon_game_callbacks_init(&cb);
  ctg_bind(game, &cb, 0);
  return cb.save_state(game, frame, buffer, capacity);
}
void load_hook(void* user, int32_t frame, const uint8_t* buffer, size_t length) {
  ctg_game* game = &static_cast<Game*>(user)->game;
  retcon_game_callbacks cb;
  retcon_game_callbacks_init(&cb);
  ctg_bind(game, &cb, 0);
  cb.load_state(game, frame, buffer, length);
}
void advance_hook(void* user, int32_t frame, const retcon_frame_inputs* inputs, uint32_t flags) {
  auto* g = static_cast<Game*>(user);
  retcon_game_callbacks cb;
  retcon_game_callbacks_init(&cb);
  ctg_bind(&g->game, &cb, 0);
  cb.advance_frame(&g->game, frame, inputs, flags);
  if (g->on_advance) g->attempt->fire();
}
void log_hook(void* user, uint32_t, const char*) { static_cast<Attempt*>(user)->fire(); }
uint64_t checksum_hook(void* user, int32_t frame, const uint8_t* buffer, size_t length) {
  auto* g = static_cast<Game*>(user);
  g->attempt->fire();
  return ctg_checksum(&g->game, frame, buffer, length);
}

// Datagrams between user transports: one mailbox per address byte.
struct Mailboxes {
  struct Datagram {
    uint8_t from;
    std::vector<uint8_t> bytes;
  };
  std::deque<Datagram> box[3];
};
struct Port {
  Mailboxes* net;
  uint8_t me;
  Attempt* attempt = nullptr;  // fired from inside send / receive when set
};
int32_t port_send(void* user, const uint8_t* addr, uint32_t addr_len, const uint8_t* data, size_t length) {
  auto* port = static_cast<Port*>(user);
  if (port->attempt) port->attempt->fire();
  if (addr_len != 1 || addr[0] > 2) return -1;
  port->net->box[addr[0]].push_back({port->me, std::vector<uint8_t>(data, data + length)});
  return 0;
}
int32_t port_receive(void* user, uint8_t* addr, uint32_t* addr_len, uint8_t* buffer, size_t capacity, size_t* length) {
  auto* port = static_cast<Port*>(user);
  if (port->attempt) port->attempt->fire();
  auto& box = port->net->box[port->me];
  if (box.empty()) return 0;
  if (box.front().bytes.size() > capacity) return -1;
  addr[0] = box.front().from;
  *addr_len = 1;
  *length = box.front().bytes.size();
  std::memcpy(buffer, box.front().bytes.data(), *length);
  box.pop_front();
  return 1;
}

// The pieces every machine of the tests below is made of: a user transport on `port`, a
// session config whose logger fires `attempt`, and callbacks that run `game`'s hooks.
void open_port(Port* port, retcon_transport** out) {
  retcon_transport_callbacks tc;
  retcon_transport_callbacks_init(&tc);
  tc.user = port;
  tc.send = port_send;
  tc.receive = port_receive;
  ASSERT_EQ(retcon_callback_transport_create(&tc, out), RETCON_RESULT_OK);
}
retcon_session_config session_config(Attempt* attempt) {
  retcon_session_config c;
  retcon_session_config_init(&c);
  c.max_state_size = 256;
  c.logger.log = log_hook;
  c.logger.user = attempt;
  c.logger.min_level = RETCON_LOG_DEBUG;
  return c;
}
retcon_game_callbacks game_callbacks(Game* game, Attempt* attempt) {
  ctg_init(&game->game);
  game->attempt = attempt;
  retcon_game_callbacks cb;
  retcon_game_callbacks_init(&cb);
  cb.user = game;
  cb.save_state = save_hook;
  cb.load_state = load_hook;
  cb.advance_frame = advance_hook;
  cb.on_event = event_hook;
  return cb;
}

// Two machines over user transports (addresses 1 and 2), optionally through simulators.
struct Pair {
  Mailboxes net;
  Port ports[2] = {{&net, 1}, {&net, 2}};
  retcon_transport* wire[2] = {};
  retcon_transport* sim[2] = {};
  retcon_session* session[2] = {};
  Game games[2];
  Attempt attempts[2];
  uint64_t now = 0;
  // Optional spectator of machine 0, at address 0.
  Port spectator_port{&net, 0};
  retcon_transport* spectator_wire = nullptr;
  retcon_session* spectator = nullptr;
  Game spectator_game;
  Attempt spectator_attempt;

  bool adaptive_delay = false;  // retcon_p2p_config.adaptive_delay on both machines (set before build)
  bool game_checksum = false;   // the games hash their states with checksum_hook (set before build)

  void build(bool simulated, uint64_t latency_us = 0, bool with_spectator = false) {
    for (int m = 0; m < 2; ++m) {
      open_port(&ports[m], &wire[m]);
      retcon_transport* t = wire[m];
      if (simulated) {
        ASSERT_EQ(retcon_network_simulator_create(wire[m], 3, &sim[m]), RETCON_RESULT_OK);
        retcon_link_profile link;
        retcon_link_profile_init(&link);
        link.latency_us = latency_us;
        ASSERT_EQ(retcon_network_simulator_set_links(sim[m], &link, nullptr), RETCON_RESULT_OK);
        t = sim[m];
      }
      const retcon_session_config c = session_config(&attempts[m]);
      retcon_game_callbacks cb = game_callbacks(&games[m], &attempts[m]);
      if (game_checksum) cb.checksum = checksum_hook;
      retcon_p2p_config p;
      retcon_p2p_config_init(&p);
      p.rng_seed = 11 + uint64_t(m);
      p.adaptive_delay = adaptive_delay ? 1u : 0u;
      if (with_spectator && m == 0) {
        p.num_spectators = 1;
        p.spectators[0].size = 1;
        p.spectators[0].bytes[0] = 0;
      }
      for (int q = 0; q < 2; ++q) {
        p.player_kinds[q] = q == m ? RETCON_PLAYER_LOCAL : RETCON_PLAYER_REMOTE;
        p.player_addresses[q].size = 1;
        p.player_addresses[q].bytes[0] = uint8_t(q + 1);
      }
      ASSERT_EQ(retcon_p2p_session_create(&c, &p, &cb, t, &session[m]), RETCON_RESULT_OK);
    }
    if (with_spectator) build_spectator();
  }
  void build_spectator() {
    open_port(&spectator_port, &spectator_wire);
    const retcon_session_config c = session_config(&spectator_attempt);
    const retcon_game_callbacks cb = game_callbacks(&spectator_game, &spectator_attempt);
    retcon_spectator_config sc;
    retcon_spectator_config_init(&sc);
    sc.rng_seed = 21;
    sc.host.size = 1;
    sc.host.bytes[0] = 1;
    ASSERT_EQ(retcon_spectator_session_create(&c, &sc, &cb, spectator_wire, &spectator), RETCON_RESULT_OK);
  }
  // The spectator's frame after `ticks` more ticks (it runs once the host streams).
  int32_t spectator_frame() {
    int32_t frame = -1;
    retcon_session_current_frame(spectator, &frame);
    return frame;
  }
  void tick() {
    now += 16667;
    for (int m = 0; m < 2; ++m) {
      if (sim[m]) {
        EXPECT_EQ(retcon_network_simulator_set_time(sim[m], now), RETCON_RESULT_OK);
      }
      if (!session[m]) continue;
      EXPECT_EQ(retcon_session_poll(session[m], now), RETCON_RESULT_OK);
      uint32_t running = 0;
      retcon_session_is_running(session[m], &running);
      if (!running) continue;
      const uint8_t in[4] = {uint8_t(now / 100000), 0, 0, uint8_t(m)};
      retcon_session_add_local_input(session[m], m, in, sizeof in);
      retcon_session_advance_frame(session[m]);
    }
    if (spectator) {
      EXPECT_EQ(retcon_session_poll(spectator, now), RETCON_RESULT_OK);
      uint32_t running = 0;
      retcon_session_is_running(spectator, &running);
      if (running) retcon_session_advance_frame(spectator);
    }
  }
  bool run_until_running() {
    for (int t = 0; t < 600; ++t) {
      tick();
      uint32_t r0 = 0, r1 = 0;
      retcon_session_is_running(session[0], &r0);
      retcon_session_is_running(session[1], &r1);
      if (r0 && r1) return true;
    }
    return false;
  }
  ~Pair() {
    spectator_attempt.armed = false;
    EXPECT_EQ(retcon_session_destroy(spectator), RETCON_RESULT_OK);
    EXPECT_EQ(retcon_transport_destroy(spectator_wire), RETCON_RESULT_OK);
    for (int m = 0; m < 2; ++m) {
      for (Attempt& a : attempts) a.armed = false;
      EXPECT_EQ(retcon_session_destroy(session[m]), RETCON_RESULT_OK);
    }
    for (int m = 0; m < 2; ++m) {
      EXPECT_EQ(retcon_transport_destroy(sim[m]), RETCON_RESULT_OK);
      EXPECT_EQ(retcon_transport_destroy(wire[m]), RETCON_RESULT_OK);
    }
  }
};

// The use-after-free the issue found: on_event, run by disconnect_player's disconnected event,
// destroys the session.
TEST(CapiReentry, DestroyFromOnEventDuringDisconnectPlayerIsRefused) {
  Pair pair;
  pair.build(false);
  ASSERT_TRUE(pair.run_until_running());
  Attempt& a = pair.attempts[0];
  a.session = pair.session[0];
  a.armed = true;
  a.events.clear();
  ASSERT_EQ(retcon_session_disconnect_player(pair.session[0], 1), RETCON_RESULT_OK);
  EXPECT_GT(a.tries, 0);
  EXPECT_EQ(a.session_result, RETCON_RESULT_WRONG_STATE);
  ASSERT_FALSE(a.events.empty());
  EXPECT_EQ(a.events[0], uint32_t(RETCON_EVENT_DISCONNECTED));
  a.armed = false;
  // Still a live session: it plays on alone.
  int32_t before = 0, after = 0;
  retcon_session_current_frame(pair.session[0], &before);
  for (int t = 0; t < 20; ++t) pair.tick();
  retcon_session_current_frame(pair.session[0], &after);
  EXPECT_GT(after, before);
}

TEST(CapiReentry, DestroyFromOnEventDuringPollIsRefused) {
  Pair pair;
  pair.build(false);
  Attempt& a = pair.attempts[0];
  a.session = pair.session[0];
  a.armed = true;
  ASSERT_TRUE(pair.run_until_running());  // synchronizing, synchronized, running: all from poll
  EXPECT_GE(a.tries, 3);
  EXPECT_EQ(a.session_result, RETCON_RESULT_WRONG_STATE);
}

TEST(CapiReentry, DestroyFromAdvanceFrameIsRefused) {
  Pair pair;
  pair.build(false);
  ASSERT_TRUE(pair.run_until_running());
  Attempt& a = pair.attempts[1];
  a.session = pair.session[1];
  a.armed = true;
  pair.games[1].on_advance = true;
  for (int t = 0; t < 5; ++t) pair.tick();
  EXPECT_GT(a.tries, 0);
  EXPECT_EQ(a.session_result, RETCON_RESULT_WRONG_STATE);
}

TEST(CapiReentry, DestroyFromTheLoggerIsRefused) {
  Pair pair;
  pair.build(false);
  Attempt& a = pair.attempts[0];
  a.session = pair.session[0];
  a.armed = true;
  ASSERT_TRUE(pair.run_until_running());  // the handshake logs at info level
  EXPECT_GT(a.tries, 0);
  EXPECT_EQ(a.session_result, RETCON_RESULT_WRONG_STATE);
}

TEST(CapiReentry, DestroyFromTheSessionsTransportCallbacksIsRefused) {
  Pair pair;
  pair.build(false);
  Attempt a;
  a.session = pair.session[0];
  a.transport = pair.wire[0];
  a.armed = true;
  pair.ports[0].attempt = &a;  // from inside send and receive, run by poll and advance
  ASSERT_TRUE(pair.run_until_running());
  EXPECT_GT(a.tries, 0);
  EXPECT_EQ(a.session_result, RETCON_RESULT_WRONG_STATE);
  EXPECT_EQ(a.transport_result, RETCON_RESULT_WRONG_STATE);
  pair.ports[0].attempt = nullptr;
}

// A spectator session has the same guard: from its on_event (run by poll), its advance
// callback, its logger and its transport's callbacks, destroying it (or its transport) is
// refused, and it goes on watching the match.
TEST(CapiReentry, SpectatorRefusesDestroyFromEveryCallback) {
  Pair pair;
  pair.build(false, 0, true);
  Attempt& a = pair.spectator_attempt;
  a.session = pair.spectator;
  a.armed = true;  // on_event and the logger
  Attempt from_transport;  // send and receive
  from_transport.session = pair.spectator;
  from_transport.transport = pair.spectator_wire;
  from_transport.armed = true;
  pair.spectator_port.attempt = &from_transport;
  ASSERT_TRUE(pair.run_until_running());
  for (int t = 0; t < 30; ++t) pair.tick();
  EXPECT_GE(a.tries, 2);  // synchronizing, synchronized, running, log lines
  EXPECT_EQ(a.session_result, RETCON_RESULT_WRONG_STATE);
  EXPECT_GT(from_transport.tries, 0);
  EXPECT_EQ(from_transport.session_result, RETCON_RESULT_WRONG_STATE);
  EXPECT_EQ(from_transport.transport_result, RETCON_RESULT_WRONG_STATE);
  pair.spectator_port.attempt = nullptr;
  a.armed = false;
  // From its advance callback.
  pair.spectator_game.on_advance = true;
  a.armed = true;
  a.tries = 0;
  a.session_result = RETCON_RESULT_OK;
  const int32_t before = pair.spectator_frame();
  for (int t = 0; t < 30; ++t) pair.tick();
  EXPECT_GT(a.tries, 0);
  EXPECT_EQ(a.session_result, RETCON_RESULT_WRONG_STATE);
  a.armed = false;
  EXPECT_GT(pair.spectator_frame(), before + 10) << "the spectator stopped watching";
}

// The other use-after-free: a simulator destroyed from its inner transport's send callback,
// while set_time hands it the datagrams that came due. (Its session is gone already, so the
// simulator has no user left: only the busy mark stops it.)
TEST(CapiReentry, DestroySimulatorFromItsInnerTransportsCallbackIsRefused) {
  Pair pair;
  pair.build(true, 100000);
  for (int t = 0; t < 3; ++t) pair.tick();  // handshake requests wait in the simulators
  ASSERT_EQ(retcon_session_destroy(pair.session[0]), RETCON_RESULT_OK);
  pair.session[0] = nullptr;
  Attempt a;
  a.transport = pair.sim[0];
  a.armed = true;
  pair.ports[0].attempt = &a;
  for (int t = 0; t < 12; ++t) pair.tick();  // due datagrams go out through port_send
  EXPECT_GT(a.tries, 0);
  EXPECT_EQ(a.transport_result, RETCON_RESULT_WRONG_STATE);
  pair.ports[0].attempt = nullptr;
  // Outside the callback it goes (the pair's destructor destroys it).
}

// One test per P2P entry point that runs a callback: the call is made with machine 0's on_event,
// logger, checksum callback and transport callbacks all trying to destroy the session (and
// its transport); every try is refused, and afterwards the match plays on, both machines
// agreeing frame by frame.
struct EntryPointProbe {
  Pair pair;
  Attempt from_transport;

  void build(bool adaptive_delay = false) {
    pair.adaptive_delay = adaptive_delay;
    pair.game_checksum = true;
    pair.build(false);
    ASSERT_TRUE(pair.run_until_running());
    for (int t = 0; t < 40; ++t) pair.tick();  // round trips measured, frames confirmed
  }
  // Arms every callback of machine 0, runs `call`, disarms; returns what `call` returned.
  template <class Call>
  retcon_result probe(Call&& call) {
    Attempt& a = pair.attempts[0];
    a.session = pair.session[0];
    a.transport = pair.wire[0];
    a.tries = 0;
    a.session_result = a.transport_result = RETCON_RESULT_OK;
    a.events.clear();
    a.armed = true;
    from_transport = Attempt{};
    from_transport.session = pair.session[0];
    from_transport.transport = pair.wire[0];
    from_transport.armed = true;
    pair.ports[0].attempt = &from_transport;
    const retcon_result r = call(pair.session[0]);
    a.armed = false;
    pair.ports[0].attempt = nullptr;
    return r;
  }
  // At least one callback ran during the call and every destroy it tried was refused; then the
  // match goes on: 60 more frames on both machines, states equal.
  void expect_refused_and_playing() {
    const Attempt& a = pair.attempts[0];
    EXPECT_GT(a.tries + from_transport.tries, 0) << "no callback ran";
    if (a.tries > 0) {
      EXPECT_EQ(a.session_result, RETCON_RESULT_WRONG_STATE);
      EXPECT_EQ(a.transport_result, RETCON_RESULT_WRONG_STATE);
    }
    if (from_transport.tries > 0) {
      EXPECT_EQ(from_transport.session_result, RETCON_RESULT_WRONG_STATE);
      EXPECT_EQ(from_transport.transport_result, RETCON_RESULT_WRONG_STATE);
    }
    expect_match_goes_on();
  }
  void expect_match_goes_on() {
    int32_t before[2] = {}, after[2] = {};
    for (int m = 0; m < 2; ++m) retcon_session_current_frame(pair.session[m], &before[m]);
    for (int t = 0; t < 60; ++t) pair.tick();
    for (int m = 0; m < 2; ++m) {
      retcon_session_current_frame(pair.session[m], &after[m]);
      EXPECT_GT(after[m], before[m] + 30) << "machine " << m << " stopped";
    }
    int32_t confirmed = 0;
    retcon_session_confirmed_frame(pair.session[1], &confirmed);
    ASSERT_GT(confirmed, 30);
    uint64_t sums[2] = {};
    for (int m = 0; m < 2; ++m)
      ASSERT_EQ(retcon_session_frame_checksum(pair.session[m], confirmed - 5, &sums[m]), RETCON_RESULT_OK) << m;
    EXPECT_EQ(sums[0], sums[1]);
  }
};

// The one the last session found unguarded: input_delay_chosen reached on_event outside
// the guard, so on_event could free the session under the call.
TEST(CapiReentryEntryPoints, ChooseInputDelay) {
  EntryPointProbe p;
  p.build();
  retcon_adaptive_delay_rule rule;
  retcon_adaptive_delay_rule_init(&rule);
  retcon_delay_choice choice;
  retcon_delay_choice_init(&choice);
  EXPECT_EQ(p.probe([&](retcon_session* s) { return retcon_session_choose_input_delay(s, &rule, &choice); }),
            RETCON_RESULT_OK);
  ASSERT_FALSE(p.pair.attempts[0].events.empty());
  EXPECT_EQ(p.pair.attempts[0].events[0], uint32_t(RETCON_EVENT_INPUT_DELAY_CHOSEN));
  p.expect_refused_and_playing();
}

TEST(CapiReentryEntryPoints, ApplyInputDelay) {
  EntryPointProbe p;
  p.build();
  retcon_adaptive_delay_rule rule;
  retcon_adaptive_delay_rule_init(&rule);
  retcon_delay_choice choice;
  retcon_delay_choice_init(&choice);
  EXPECT_EQ(p.probe([&](retcon_session* s) { return retcon_session_apply_input_delay(s, &rule, RETCON_NULL_FRAME, &choice); }),
            RETCON_RESULT_OK);
  EXPECT_FALSE(p.pair.attempts[0].events.empty());
  p.expect_refused_and_playing();
}

TEST(CapiReentryEntryPoints, BetweenRounds) {
  EntryPointProbe p;
  p.build(true);
  EXPECT_EQ(p.probe([](retcon_session* s) { return retcon_session_between_rounds(s); }), RETCON_RESULT_OK);
  EXPECT_FALSE(p.pair.attempts[0].events.empty());
  p.expect_refused_and_playing();
}

TEST(CapiReentryEntryPoints, SendDecisionRefusedAndLogged) {
  EntryPointProbe p;
  p.build();
  const uint8_t bytes[3] = {1, 2, 3};
  int32_t earliest = 0;
  // A frame already past: refused, and the refusal is logged (the logger tries to destroy).
  EXPECT_EQ(p.probe([&](retcon_session* s) { return retcon_session_send_decision(s, bytes, sizeof bytes, 1, &earliest); }),
            RETCON_RESULT_INPUT_OUT_OF_WINDOW);
  p.expect_refused_and_playing();
}

TEST(CapiReentryEntryPoints, FrameChecksumRunsTheGamesChecksum) {
  EntryPointProbe p;
  p.build();
  int32_t confirmed = 0;
  retcon_session_confirmed_frame(p.pair.session[0], &confirmed);
  uint64_t sum = 0;
  EXPECT_EQ(p.probe([&](retcon_session* s) { return retcon_session_frame_checksum(s, confirmed - 2, &sum); }),
            RETCON_RESULT_OK);
  p.expect_refused_and_playing();
}

TEST(CapiReentryEntryPoints, DisconnectPlayerSendsThroughTheTransport) {
  EntryPointProbe p;
  p.build();
  EXPECT_EQ(p.probe([](retcon_session* s) { return retcon_session_disconnect_player(s, 1); }), RETCON_RESULT_OK);
  EXPECT_GT(p.pair.attempts[0].tries, 0);  // the disconnected event
  EXPECT_EQ(p.pair.attempts[0].session_result, RETCON_RESULT_WRONG_STATE);
  // Machine 0 plays on alone.
  int32_t before = 0, after = 0;
  retcon_session_current_frame(p.pair.session[0], &before);
  for (int t = 0; t < 30; ++t) p.pair.tick();
  retcon_session_current_frame(p.pair.session[0], &after);
  EXPECT_GT(after, before + 20);
}

TEST(CapiReentryEntryPoints, PollAndAdvanceFrame) {
  EntryPointProbe p;
  p.build();
  EXPECT_EQ(p.probe([&](retcon_session* s) {
              // A tick of machine 0: its checksum callback runs on saves, the transport on sends.
              p.pair.now += 16667;
              retcon_result r = retcon_session_poll(s, p.pair.now);
              const uint8_t in[4] = {9, 0, 0, 0};
              if (r == RETCON_RESULT_OK) r = retcon_session_add_local_input(s, 0, in, sizeof in);
              if (r == RETCON_RESULT_OK) r = retcon_session_advance_frame(s);
              return r;
            }),
            RETCON_RESULT_OK);
  EXPECT_GT(p.from_transport.tries, 0);
  p.expect_refused_and_playing();
}

// Replays: a run's callbacks cannot destroy or revise the replay it is running, nor run it again.
struct ReplayProbe {
  retcon_replay* replay = nullptr;
  int tries = 0;
  retcon_result destroy = RETCON_RESULT_OK, revise = RETCON_RESULT_OK, rerun = RETCON_RESULT_OK;
  const retcon_game_callbacks* callbacks = nullptr;
  const retcon_replay_run_config* config = nullptr;
  ctg_game game;
};
void replay_probe_advance(void* user, int32_t frame, const retcon_frame_inputs* inputs, uint32_t flags) {
  auto* p = static_cast<ReplayProbe*>(user);
  retcon_game_callbacks cb;
  retcon_game_callbacks_init(&cb);
  ctg_bind(&p->game, &cb, 0);
  cb.advance_frame(&p->game, frame, inputs, flags);
  if (p->tries++ != 3) return;
  p->destroy = retcon_replay_destroy(p->replay);
  const uint8_t in[4] = {};
  p->revise = retcon_replay_set_input(p->replay, 0, 0, in, sizeof in);
  retcon_replay_report report;
  retcon_replay_report_init(&report);
  p->rerun = retcon_replay_play(p->replay, p->callbacks, p->config, &report);
}
size_t replay_probe_save(void* user, int32_t frame, uint8_t* buffer, size_t capacity) {
  auto* p = static_cast<ReplayProbe*>(user);
  retcon_game_callbacks cb;
  retcon_game_callbacks_init(&cb);
  ctg_bind(&p->game, &cb, 0);
  return cb.save_state(&p->game, frame, buffer, capacity);
}
void replay_probe_load(void* user, int32_t frame, const uint8_t* buffer, size_t length) {
  auto* p = static_cast<ReplayProbe*>(user);
  retcon_game_callbacks cb;
  retcon_game_callbacks_init(&cb);
  ctg_bind(&p->game, &cb, 0);
  cb.load_state(&p->game, frame, buffer, length);
}

TEST(CapiReentry, ReplayRunsRefuseDestroyingTheirReplayFromTheirCallbacks) {
  // A short recording of a local session.
  ctg_game recorded;
  ctg_init(&recorded);
  retcon_game_callbacks rc;
  retcon_game_callbacks_init(&rc);
  ctg_bind(&recorded, &rc, 0);
  retcon_session_config c;
  retcon_session_config_init(&c);
  c.num_players = 1;
  c.input_size = 4;
  c.max_state_size = 256;
  retcon_session* session = nullptr;
  ASSERT_EQ(retcon_local_session_create(&c, &rc, &session), RETCON_RESULT_OK);
  retcon_recording_config recording;
  retcon_recording_config_init(&recording);
  ASSERT_EQ(retcon_session_start_recording(session, &recording), RETCON_RESULT_OK);
  for (int f = 0; f < 20; ++f) {
    const uint8_t in[4] = {uint8_t(f), 1, 2, 3};
    ASSERT_EQ(retcon_session_add_local_input(session, 0, in, sizeof in), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_session_advance_frame(session), RETCON_RESULT_OK);
  }
  ReplayProbe probe;
  ASSERT_EQ(retcon_session_copy_recording(session, &probe.replay), RETCON_RESULT_OK);
  ASSERT_EQ(retcon_session_destroy(session), RETCON_RESULT_OK);

  ctg_init(&probe.game);
  retcon_game_callbacks cb;
  retcon_game_callbacks_init(&cb);
  cb.user = &probe;
  cb.save_state = replay_probe_save;
  cb.load_state = replay_probe_load;
  cb.advance_frame = replay_probe_advance;
  retcon_replay_run_config run;
  retcon_replay_run_config_init(&run);
  run.max_state_size = 256;
  probe.callbacks = &cb;
  probe.config = &run;
  retcon_replay_report report;
  retcon_replay_report_init(&report);
  ASSERT_EQ(retcon_replay_play(probe.replay, &cb, &run, &report), RETCON_RESULT_OK);
  EXPECT_GT(probe.tries, 3);
  EXPECT_EQ(probe.destroy, RETCON_RESULT_WRONG_STATE);
  EXPECT_EQ(probe.revise, RETCON_RESULT_WRONG_STATE);
  EXPECT_EQ(probe.rerun, RETCON_RESULT_WRONG_STATE);
  // The run finished on the intact replay and agreed with the recording.
  EXPECT_EQ(report.frames_played, 20);
  EXPECT_EQ(report.first_bad, RETCON_NULL_FRAME);
  EXPECT_EQ(retcon_replay_destroy(probe.replay), RETCON_RESULT_OK);
}

// From inside a callback (here the disconnected event of disconnect_player), every call that
// changes the session is refused; queries still answer.
struct Calls {
  retcon_session* session = nullptr;
  std::vector<retcon_result> results;
  int32_t frame = -5;
};
Calls* g_calls = nullptr;

void every_mutating_call(Game*) {
  Calls& c = *g_calls;
  if (!c.results.empty()) return;  // once
  const uint8_t in[4] = {};
  c.results.push_back(retcon_session_add_local_input(c.session, 0, in, sizeof in));
  c.results.push_back(retcon_session_advance_frame(c.session));
  c.results.push_back(retcon_session_poll(c.session, 1));
  c.results.push_back(retcon_session_set_input_delay(c.session, 0, 1));
  c.results.push_back(retcon_session_disconnect_player(c.session, 1));
  retcon_adaptive_delay_rule rule;
  retcon_adaptive_delay_rule_init(&rule);
  retcon_delay_choice choice;
  retcon_delay_choice_init(&choice);
  c.results.push_back(retcon_session_choose_input_delay(c.session, &rule, &choice));
  c.results.push_back(retcon_session_apply_input_delay(c.session, &rule, RETCON_NULL_FRAME, &choice));
  c.results.push_back(retcon_session_between_rounds(c.session));
  const uint8_t decision[2] = {1, 2};
  c.results.push_back(retcon_session_send_decision(c.session, decision, sizeof decision, c.frame + 100, nullptr));
  uint64_t sum = 0;
  c.results.push_back(retcon_session_frame_checksum(c.session, 0, &sum));
  retcon_recording_config recording;
  retcon_recording_config_init(&recording);
  c.results.push_back(retcon_session_start_recording(c.session, &recording));
  c.results.push_back(retcon_session_destroy(c.session));
  EXPECT_EQ(retcon_session_current_frame(c.session, &c.frame), RETCON_RESULT_OK);
}

TEST(CapiReentry, EveryMutatingCallFromOnEventIsRefused) {
  Pair pair;
  pair.build(false);
  ASSERT_TRUE(pair.run_until_running());
  for (int t = 0; t < 10; ++t) pair.tick();
  Calls calls;
  calls.session = pair.session[0];
  g_calls = &calls;
  pair.games[0].extra = every_mutating_call;
  ASSERT_EQ(retcon_session_disconnect_player(pair.session[0], 1), RETCON_RESULT_OK);
  pair.games[0].extra = nullptr;
  g_calls = nullptr;
  ASSERT_EQ(calls.results.size(), 12u);
  for (size_t k = 0; k < calls.results.size(); ++k)
    EXPECT_EQ(calls.results[k], RETCON_RESULT_WRONG_STATE) << "call " << k;
  EXPECT_GT(calls.frame, 0);
  // Afterwards the session takes calls again.
  EXPECT_EQ(retcon_session_poll(pair.session[0], pair.now), RETCON_RESULT_OK);
}


// Local and sync-test sessions: each callback of the game (save, load, advance, checksum,
// on_event, the logger) runs a probe that tries every call changing the session, destroy
// included. One test per entry point that runs callbacks: every try is refused, and the
// session plays on afterwards.
struct Probe {
  retcon_session* session = nullptr;
  bool armed = false;
  int tries = 0;
  int refused = 0;
  std::vector<retcon_result> unexpected;
};

struct ProbedGame {
  ctg_game game;
  retcon_game_callbacks inner;  // ctg's own callbacks
  Probe probe;
};

void probe_fire(ProbedGame* g) {
  Probe& p = g->probe;
  if (!p.armed || p.session == nullptr) return;
  p.armed = false;  // once per arming: the calls below must not recurse through it
  ++p.tries;
  const uint8_t in[2] = {};
  uint64_t sum = 0;
  const retcon_result results[] = {
      retcon_session_add_local_input(p.session, 0, in, sizeof in),
      retcon_session_advance_frame(p.session),
      retcon_session_poll(p.session, 1),
      retcon_session_set_input_delay(p.session, 0, 1),
      retcon_session_frame_checksum(p.session, 0, &sum),
      retcon_session_destroy(p.session),
  };
  for (retcon_result r : results) {
    if (r == RETCON_RESULT_WRONG_STATE) ++p.refused;
    else p.unexpected.push_back(r);
  }
  int32_t frame = -5;
  EXPECT_EQ(retcon_session_current_frame(p.session, &frame), RETCON_RESULT_OK);  // queries answer
}

size_t probed_save(void* user, int32_t frame, uint8_t* buffer, size_t capacity) {
  auto* g = static_cast<ProbedGame*>(user);
  probe_fire(g);
  return g->inner.save_state(&g->game, frame, buffer, capacity);
}
void probed_load(void* user, int32_t frame, const uint8_t* buffer, size_t length) {
  auto* g = static_cast<ProbedGame*>(user);
  probe_fire(g);
  g->inner.load_state(&g->game, frame, buffer, length);
}
void probed_advance(void* user, int32_t frame, const retcon_frame_inputs* inputs, uint32_t flags) {
  auto* g = static_cast<ProbedGame*>(user);
  probe_fire(g);
  g->inner.advance_frame(&g->game, frame, inputs, flags);
}
uint64_t probed_checksum(void* user, int32_t frame, const uint8_t* buffer, size_t length) {
  auto* g = static_cast<ProbedGame*>(user);
  probe_fire(g);
  return ctg_checksum(&g->game, frame, buffer, length);
}
void probed_event(void* user, const retcon_event*) { probe_fire(static_cast<ProbedGame*>(user)); }
void probed_log(void* user, uint32_t, const char*) { probe_fire(static_cast<ProbedGame*>(user)); }

struct LocalHarness {
  ProbedGame g;
  retcon_session* session = nullptr;

  // kind 0: local session; 1: sync test (rolls back 2 frames every frame).
  void build(int kind) {
    ctg_init(&g.game);
    retcon_game_callbacks_init(&g.inner);
    ctg_bind(&g.game, &g.inner, 0);
    retcon_session_config c;
    retcon_session_config_init(&c);
    c.num_players = 1;
    c.input_size = 2;
    c.max_state_size = 256;
    c.logger.log = probed_log;
    c.logger.user = &g;
    c.logger.min_level = RETCON_LOG_DEBUG;
    retcon_game_callbacks cb;
    retcon_game_callbacks_init(&cb);
    cb.user = &g;
    cb.save_state = probed_save;
    cb.load_state = probed_load;
    cb.advance_frame = probed_advance;
    cb.checksum = probed_checksum;
    cb.on_event = probed_event;
    if (kind == 0) {
      ASSERT_EQ(retcon_local_session_create(&c, &cb, &session), RETCON_RESULT_OK);
    } else {
      retcon_sync_test_config st;
      retcon_sync_test_config_init(&st);
      st.check_distance = 2;
      ASSERT_EQ(retcon_sync_test_session_create(&c, &st, &cb, &session), RETCON_RESULT_OK);
    }
    g.probe.session = session;
  }
  void step() {
    const uint8_t in[2] = {1, 2};
    ASSERT_EQ(retcon_session_poll(session, 0), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_session_add_local_input(session, 0, in, sizeof in), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_session_advance_frame(session), RETCON_RESULT_OK);
  }
  // Everything refused, and the session still plays.
  void expect_refused_and_alive() {
    EXPECT_GT(g.probe.tries, 0);
    EXPECT_EQ(g.probe.refused, 6 * g.probe.tries);
    EXPECT_TRUE(g.probe.unexpected.empty());
    g.probe.armed = false;
    int32_t before = 0, after = 0;
    retcon_session_current_frame(session, &before);
    for (int f = 0; f < 5; ++f) step();
    retcon_session_current_frame(session, &after);
    EXPECT_EQ(after, before + 5);
  }
  ~LocalHarness() {
    g.probe.armed = false;
    EXPECT_EQ(retcon_session_destroy(session), RETCON_RESULT_OK);
  }
};

TEST(CapiReentry, LocalAdvanceFrameRefusesCallsFromItsCallbacks) {
  LocalHarness h;
  h.build(0);
  for (int f = 0; f < 3; ++f) h.step();
  h.g.probe.armed = true;
  const uint8_t in[2] = {3, 4};
  ASSERT_EQ(retcon_session_add_local_input(h.session, 0, in, sizeof in), RETCON_RESULT_OK);
  ASSERT_EQ(retcon_session_advance_frame(h.session), RETCON_RESULT_OK);  // advance_frame callback
  h.expect_refused_and_alive();
}

TEST(CapiReentry, SyncTestAdvanceFrameRefusesCallsFromItsRollback) {
  LocalHarness h;
  h.build(1);
  for (int f = 0; f < 4; ++f) h.step();
  h.g.probe.armed = true;  // the first callback of the check: a save, load or advance
  const uint8_t in[2] = {3, 4};
  ASSERT_EQ(retcon_session_add_local_input(h.session, 0, in, sizeof in), RETCON_RESULT_OK);
  ASSERT_EQ(retcon_session_advance_frame(h.session), RETCON_RESULT_OK);
  h.expect_refused_and_alive();
}

}  // namespace
}  // namespace retcon::test
