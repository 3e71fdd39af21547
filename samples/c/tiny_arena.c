/* tiny_arena: the C API end to end, in plain C99.
 *
 * A tiny deterministic game (players pushing a ball around an arena, fixed-point physics) is
 * played twice with the same scripted inputs:
 *   1. in a local session (couch play: every player on this machine), and
 *   2. in a sync test session, which rolls back and re-simulates every frame to prove the
 *      game's save, load and advance are deterministic.
 * Both runs must end in the same state. Then the game is made non-deterministic on purpose
 * and the sync test must catch it. Last, two peer-to-peer sessions (one player each) play the
 * match over an in-process network with simulated latency and loss, driven by a virtual clock,
 * and must agree with the local run. Exit status 0 when all of that holds.
 *
 * Build: part of the retcon build (target retcon_sample_c), or by hand against an install:
 *   cc -std=c99 tiny_arena.c $(pkg-config --cflags --libs retcon) -o tiny_arena
 */
#include <retcon.h>

#include <stdio.h>
#include <string.h>

#include "arena_game.h"

typedef struct arena {
  arena_state state;
  uint32_t resimulated_frames; /* frames re-run after a rollback (muted: no sound here) */
  int32_t cheat;               /* 1: read an unsaved counter during re-simulation (a bug) */
  uint32_t unsaved_counter;
  uint32_t mismatches;         /* sync-test mismatch events seen */
  arena_state at_end;          /* the state after frame kFrames - 1, as last (re-)simulated */
} arena;

static void arena_init(arena* a) {
  memset(a, 0, sizeof *a);
  arena_state_init(&a->state);
}

/* ---------------------------------------------------------------------------------------------
 * The callbacks: the only place the game meets retcon.
 */
static size_t on_save(void* user, int32_t frame, uint8_t* buffer, size_t capacity) {
  const arena* a = (const arena*)user;
  (void)frame;
  if (capacity < sizeof a->state) return sizeof a->state; /* tell retcon what we need */
  memcpy(buffer, &a->state, sizeof a->state);            /* buffer is retcon's: no malloc */
  return sizeof a->state;
}

static void on_load(void* user, int32_t frame, const uint8_t* buffer, size_t length) {
  arena* a = (arena*)user;
  (void)frame;
  if (length == sizeof a->state) memcpy(&a->state, buffer, sizeof a->state);
}

static void on_advance(void* user, int32_t frame, const retcon_frame_inputs* in, uint32_t flags) {
  arena* a = (arena*)user;
  uint8_t inputs[kPlayers];
  uint32_t p;
  (void)frame;
  for (p = 0; p < kPlayers; ++p) inputs[p] = in->bytes[p * in->input_size];
  if (flags & RETCON_ADVANCE_RESIMULATING) {
    ++a->resimulated_frames;
    /* The bug the sync test exists for: state that is not saved changes the simulation. */
    if (a->cheat) inputs[0] ^= (uint8_t)(++a->unsaved_counter & kKick);
  }
  arena_step(&a->state, inputs);
  if (a->state.frame == kFrames) a->at_end = a->state;
}

static void on_event(void* user, const retcon_event* e) {
  arena* a = (arena*)user;
  if (e->type == RETCON_EVENT_SYNC_TEST_MISMATCH) {
    if (a->mismatches++ == 0) {
      printf("  event %s at frame %d: %s\n", retcon_event_type_name(e->type), (int)e->frame, e->message);
      printf("    first run:  %.*s\n", (int)e->text_local_len, e->text_local ? e->text_local : "");
      printf("    re-run:     %.*s\n", (int)e->text_remote_len, e->text_remote ? e->text_remote : "");
    }
  } else if (e->type == RETCON_EVENT_TIMESYNC) {
    /* we run ahead of a peer: retcon_session_should_wait tells which ticks to skip */
  } else if (e->type == RETCON_EVENT_SYNCHRONIZING) {
    /* handshake progress: e->count of e->total round trips (a game would show a bar) */
  } else {
    printf("  event %s (player %d, frame %d): %s\n", retcon_event_type_name(e->type), (int)e->player,
           (int)e->frame, e->message);
  }
}

static void on_describe(void* user, int32_t frame, const uint8_t* buffer, size_t length,
                        const retcon_text_sink* sink) {
  arena_describe(user, frame, buffer, length, sink);
}

static void on_log(void* user, uint32_t level, const char* message) {
  (void)user;
  printf("  log[%u] %s\n", (unsigned)level, message);
}

/* ---------------------------------------------------------------------------------------------
 * Running a session.
 */
#define CHECK(call)                                                                      \
  do {                                                                                   \
    const retcon_result r_ = (call);                                                     \
    if (r_ != RETCON_RESULT_OK) {                                                        \
      fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #call, retcon_result_name(r_)); \
      goto fail;                                                                         \
    }                                                                                    \
  } while (0)

static void print_stats(const retcon_session* session) {
  retcon_session_stats st;
  retcon_session_stats_init(&st);
  if (retcon_session_get_stats(session, &st) != RETCON_RESULT_OK) return;
  printf("  stats: frame %d, confirmed %d, advanced %llu, re-simulated %llu, rollbacks %llu, "
         "saves %llu, loads %llu, checksums %llu\n",
         (int)st.current_frame, (int)st.confirmed_frame, (unsigned long long)st.frames_advanced,
         (unsigned long long)st.frames_resimulated, (unsigned long long)st.rollbacks,
         (unsigned long long)st.saves, (unsigned long long)st.loads, (unsigned long long)st.checksums);
}

/* Plays kFrames frames. sync_test: 0 = local session, else the sync test's check distance. */
static int play(arena* game, int32_t sync_test, int32_t input_delay) {
  retcon_session_config config;
  retcon_game_callbacks callbacks;
  retcon_session* session = NULL;
  int32_t frame;
  int p;

  retcon_session_config_init(&config);
  config.num_players = kPlayers;
  config.input_size = 1;
  config.max_state_size = sizeof(arena_state);
  config.logger.log = on_log;
  config.logger.min_level = RETCON_LOG_WARNING;

  retcon_game_callbacks_init(&callbacks);
  callbacks.user = game;
  callbacks.save_state = on_save;
  callbacks.load_state = on_load;
  callbacks.advance_frame = on_advance;
  callbacks.on_event = on_event;
  callbacks.describe_state = on_describe;

  if (sync_test) {
    retcon_sync_test_config sync;
    retcon_sync_test_config_init(&sync);
    sync.check_distance = sync_test;
    config.max_prediction = sync_test;
    CHECK(retcon_sync_test_session_create(&config, &sync, &callbacks, &session));
  } else {
    CHECK(retcon_local_session_create(&config, &callbacks, &session));
  }
  for (p = 0; p < kPlayers; ++p) CHECK(retcon_session_set_input_delay(session, p, input_delay));

  for (frame = 0; frame < kFrames; ++frame) {
    /* A real game reads its pads here, once per rendered frame. */
    for (p = 0; p < kPlayers; ++p) {
      const uint8_t input = scripted_input(p, frame);
      CHECK(retcon_session_add_local_input(session, p, &input, sizeof input));
    }
    CHECK(retcon_session_poll(session, (uint64_t)frame * 16667u)); /* no-op for local play */
    CHECK(retcon_session_advance_frame(session));
  }
  print_stats(session);
  CHECK(retcon_session_destroy(session));
  return 0;
fail:
  retcon_session_destroy(session);
  return 1;
}

/* ---------------------------------------------------------------------------------------------
 * Two machines in one process. Each has its own game, session and transport: an endpoint of an
 * in-memory network wrapped in a network simulator. A real game would open one UDP transport
 * (retcon_udp_transport_open) and give the other machine's retcon_ip_address instead.
 */
typedef struct machine {
  arena game;
  retcon_transport* wire;
  retcon_transport* link;
  retcon_session* session;
} machine;

static int play_two_peers(const arena_state* expected) {
  retcon_memory_network* network = NULL;
  machine m[kPlayers];
  retcon_link_profile link;
  uint64_t now = 0;
  int i, p, tick, ok = 0, settle = 10;

  memset(m, 0, sizeof m);
  CHECK(retcon_memory_network_create(&network));
  retcon_link_profile_init(&link);
  link.latency_us = 40000;
  link.jitter_us = 8000;
  link.loss = 0.05;
  for (i = 0; i < kPlayers; ++i) {
    arena_init(&m[i].game);
    CHECK(retcon_memory_network_add_endpoint(network, &m[i].wire));
    CHECK(retcon_network_simulator_create(m[i].wire, 1000u + (uint64_t)i, &m[i].link));
    CHECK(retcon_network_simulator_set_links(m[i].link, &link, NULL));
  }
  for (i = 0; i < kPlayers; ++i) {
    retcon_session_config config;
    retcon_p2p_config p2p;
    retcon_game_callbacks callbacks;
    retcon_session_config_init(&config);
    config.num_players = kPlayers;
    config.input_size = 1;
    config.max_prediction = 8;
    config.max_state_size = sizeof(arena_state);
    retcon_game_callbacks_init(&callbacks);
    callbacks.user = &m[i].game;
    callbacks.save_state = on_save;
    callbacks.load_state = on_load;
    callbacks.advance_frame = on_advance;
    callbacks.on_event = on_event;
    retcon_p2p_config_init(&p2p);
    /* rng_seed stays 0: fresh OS entropy for the connection nonces on every run */
    for (p = 0; p < kPlayers; ++p) {
      p2p.player_kinds[p] = p == i ? RETCON_PLAYER_LOCAL : RETCON_PLAYER_REMOTE;
      CHECK(retcon_transport_address(m[p].wire, &p2p.player_addresses[p]));
    }
    CHECK(retcon_p2p_session_create(&config, &p2p, &callbacks, m[i].link, &m[i].session));
    CHECK(retcon_session_set_input_delay(m[i].session, i, 2)); /* as in the local run */
  }

  /* Play on past kFrames until both machines confirmed it, and a few ticks more: the last
   * frames were first simulated on predictions, and a late correction is re-simulated by the
   * next advance. (A game never stops there; a sample that compares states must.) */
  for (tick = 0; tick < 20000 && settle > 0; ++tick) {
    int32_t done = 1;
    now += 16667; /* a virtual 60 Hz clock: no sleeping, the same run every time */
    for (i = 0; i < kPlayers; ++i) {
      uint32_t running = 0;
      int32_t frame = 0, confirmed = 0;
      retcon_result r;
      CHECK(retcon_network_simulator_set_time(m[i].link, now));
      CHECK(retcon_session_poll(m[i].session, now));
      CHECK(retcon_session_is_running(m[i].session, &running));
      CHECK(retcon_session_confirmed_frame(m[i].session, &confirmed));
      if (confirmed < kFrames) done = 0;
      if (!running) continue;
      { /* time sync: skip this tick when told to (the advice is used up as we wait) */
        uint32_t wait = 0;
        CHECK(retcon_session_should_wait(m[i].session, &wait));
        if (wait) continue;
      }
      CHECK(retcon_session_current_frame(m[i].session, &frame));
      if (frame >= kFrames + 60) continue;
      {
        const uint8_t input = scripted_input(i, frame);
        r = retcon_session_add_local_input(m[i].session, i, &input, sizeof input);
        if (r != RETCON_RESULT_OK && r != RETCON_RESULT_INPUT_ALREADY_ADDED) CHECK(r);
      }
      r = retcon_session_advance_frame(m[i].session);
      if (r != RETCON_RESULT_OK && r != RETCON_RESULT_PREDICTION_LIMIT) CHECK(r); /* limit: next tick */
      if (r == RETCON_RESULT_OK) { /* after a long stall (a blackout): one extra frame now and then */
        uint32_t extra = 0;
        CHECK(retcon_session_should_catch_up(m[i].session, &extra));
        if (extra) {
          const uint8_t input = scripted_input(i, frame + 1);
          r = retcon_session_add_local_input(m[i].session, i, &input, sizeof input);
          if (r != RETCON_RESULT_OK && r != RETCON_RESULT_INPUT_ALREADY_ADDED) CHECK(r);
          r = retcon_session_advance_frame(m[i].session);
          if (r != RETCON_RESULT_OK && r != RETCON_RESULT_PREDICTION_LIMIT) CHECK(r);
        }
      }
    }
    if (done) --settle;
  }
  for (i = 0; i < kPlayers; ++i) {
    retcon_peer_stats peer;
    retcon_peer_stats_init(&peer);
    CHECK(retcon_session_get_peer_stats(m[i].session, 1 - i, &peer));
    printf("  machine %d: frame %d, ping %llu us, %llu datagrams sent, %llu received\n", i,
           (int)m[i].game.state.frame, (unsigned long long)peer.ping_us,
           (unsigned long long)peer.datagrams_sent, (unsigned long long)peer.datagrams_received);
    print_stats(m[i].session);
  }
  ok = settle == 0 && memcmp(&m[0].game.at_end, expected, sizeof *expected) == 0 &&
       memcmp(&m[1].game.at_end, expected, sizeof *expected) == 0;
  printf("  after %d ticks: %s\n", tick, ok ? "both machines' frame 600 equals the local run's" : "MISMATCH");
fail:
  for (i = 0; i < kPlayers; ++i) {
    retcon_session_destroy(m[i].session);
    retcon_transport_destroy(m[i].link);
    retcon_transport_destroy(m[i].wire);
  }
  retcon_memory_network_destroy(network);
  return ok ? 0 : 1;
}

int main(void) {
  arena local, synced, buggy;
  printf("tiny_arena on retcon %s (header %s)\n", retcon_version_string(), RETCON_VERSION_STRING);
  if (retcon_version() / 10000 != RETCON_VERSION_MAJOR) return 1;

  printf("1. local session, 2 players, input delay 2\n");
  arena_init(&local);
  if (play(&local, 0, 2)) return 1;
  printf("  final: frame %d, score %d:%d\n", (int)local.state.frame, (int)local.state.score[0],
         (int)local.state.score[1]);

  printf("2. sync test, check distance 6\n");
  arena_init(&synced);
  if (play(&synced, 6, 2)) return 1;
  printf("  final: frame %d, score %d:%d, %u frames re-simulated, %u mismatches\n", (int)synced.state.frame,
         (int)synced.state.score[0], (int)synced.state.score[1], (unsigned)synced.resimulated_frames,
         (unsigned)synced.mismatches);
  if (synced.mismatches != 0 || memcmp(&local.state, &synced.state, sizeof local.state) != 0) {
    fprintf(stderr, "the sync test run differs from the local run\n");
    return 1;
  }

  printf("3. sync test of a game with a determinism bug\n");
  arena_init(&buggy);
  buggy.cheat = 1;
  if (play(&buggy, 6, 2)) return 1;
  printf("  %u mismatches reported\n", (unsigned)buggy.mismatches);
  if (buggy.mismatches == 0) {
    fprintf(stderr, "the sync test missed the bug\n");
    return 1;
  }

  printf("4. two peers, one player each, over a simulated network (40 ms, 5%% loss)\n");
  if (play_two_peers(&local.state)) return 1;

  printf("tiny_arena: ok\n");
  return 0;
}
