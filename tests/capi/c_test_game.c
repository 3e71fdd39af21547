#include "c_test_game.h"

#include <stdio.h>
#include <string.h>

#define CTG_SAVED_PREFIX offsetof(ctg_state, tail)

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
  return h * UINT64_C(0xff51afd7ed558ccd);
}

void ctg_init(ctg_game* game) {
  memset(game, 0, sizeof *game);
  game->state.chain = UINT64_C(0x9e3779b97f4a7c15);
  game->nondeterministic_from = -1;
}

size_t ctg_saved_size(const ctg_state* state) { return CTG_SAVED_PREFIX + state->tail_length; }

uint64_t ctg_hash(const ctg_state* s) {
  uint64_t h = mix((uint64_t)s->frame, s->chain);
  int i;
  for (i = 0; i < 8; ++i) h = mix(h, (uint32_t)s->position[i]);
  h = mix(h, s->tail_length);
  for (i = 0; i < s->tail_length; ++i) h = mix(h, s->tail[i]);
  return h;
}

void ctg_step(ctg_state* s, const retcon_frame_inputs* in) {
  uint32_t p, i;
  for (p = 0; p < in->player_count; ++p) {
    const uint8_t* bytes = in->bytes + (size_t)p * in->input_size;
    for (i = 0; i < in->input_size; ++i) s->chain = mix(s->chain, bytes[i] + 257u * p);
    s->position[p] = s->position[p] * 3 / 4 + (int8_t)bytes[0] + (int32_t)(s->chain & 3);
  }
  s->tail_length = (uint8_t)(s->chain % 64);
  for (i = 0; i < s->tail_length; ++i) s->tail[i] = (uint8_t)(s->chain >> (i % 56));
  ++s->frame;
}

uint64_t ctg_checksum(void* user, int32_t frame, const uint8_t* buffer, size_t length) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  size_t i;
  (void)user;
  (void)frame;
  for (i = 0; i < length; ++i) h = (h ^ buffer[i]) * UINT64_C(0x100000001b3);
  return h;
}

static size_t save_state(void* user, int32_t frame, uint8_t* buffer, size_t capacity) {
  ctg_game* g = (ctg_game*)user;
  const size_t need = ctg_saved_size(&g->state) + g->extra_save_bytes;
  ++g->saves;
  if (frame != g->state.frame) ++g->frame_errors;
  if (need > capacity) return need;
  memcpy(buffer, &g->state, CTG_SAVED_PREFIX);
  memcpy(buffer + CTG_SAVED_PREFIX, g->state.tail, g->state.tail_length);
  memset(buffer + CTG_SAVED_PREFIX + g->state.tail_length, 0, g->extra_save_bytes);
  return need;
}

static void load_state(void* user, int32_t frame, const uint8_t* buffer, size_t length) {
  ctg_game* g = (ctg_game*)user;
  ++g->loads;
  memset(&g->state, 0, sizeof g->state);
  memcpy(&g->state, buffer, CTG_SAVED_PREFIX);
  if (length != ctg_saved_size(&g->state) + g->extra_save_bytes) ++g->frame_errors;
  memcpy(g->state.tail, buffer + CTG_SAVED_PREFIX, g->state.tail_length);
  if (frame != g->state.frame) ++g->frame_errors;
}

static void advance_frame(void* user, int32_t frame, const retcon_frame_inputs* inputs, uint32_t flags) {
  ctg_game* g = (ctg_game*)user;
  if (frame != g->state.frame) ++g->frame_errors;
  if (g->start_hashes && frame >= 0 && (size_t)frame < g->start_hash_count)
    g->start_hashes[frame] = ctg_hash(&g->state);
  ++g->advances;
  if (flags & RETCON_ADVANCE_RESIMULATING) ++g->resimulated;
  ctg_step(&g->state, inputs);
  if ((flags & RETCON_ADVANCE_RESIMULATING) && g->nondeterministic_from >= 0 && frame >= g->nondeterministic_from)
    g->state.chain ^= ++g->hidden_calls;
  if (g->on_advance) g->on_advance(g);
}

static void copy_text(char* out, size_t capacity, const char* text, size_t length) {
  if (text == NULL) length = 0;
  if (length >= capacity) length = capacity - 1;
  if (length) memcpy(out, text, length);
  out[length] = '\0';
}

static void on_event(void* user, const retcon_event* e) {
  ctg_game* g = (ctg_game*)user;
  if (e->type == RETCON_EVENT_DESYNC_DETECTED) ++g->desyncs;
  if (e->type == RETCON_EVENT_TIMESYNC) {
    ++g->timesyncs;
    g->last_timesync_count = e->count;
  }
  if (g->event_count < CTG_MAX_EVENTS) {
    ctg_event* out = &g->events[g->event_count];
    out->type = e->type;
    out->player = e->player;
    out->frame = e->frame;
    out->count = e->count;
    out->checksum_local = e->checksum_local;
    out->checksum_remote = e->checksum_remote;
    copy_text(out->text_local, sizeof out->text_local, e->text_local, e->text_local_len);
    copy_text(out->text_remote, sizeof out->text_remote, e->text_remote, e->text_remote_len);
    copy_text(out->message, sizeof out->message, e->message, e->message ? strlen(e->message) : 0);
  }
  ++g->event_count;
}

/* The same text as TestGame::describe_state. */
static void describe_state(void* user, int32_t frame, const uint8_t* buffer, size_t length,
                           const retcon_text_sink* sink) {
  ctg_state s;
  char text[96];
  int n;
  (void)user;
  memset(&s, 0, sizeof s);
  if (length >= CTG_SAVED_PREFIX) memcpy(&s, buffer, CTG_SAVED_PREFIX);
  n = snprintf(text, sizeof text, "frame %ld chain %llu p0 %ld", (long)frame, (unsigned long long)s.chain,
               (long)s.position[0]);
  if (n > 0) sink->write(sink->user, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
}

void ctg_bind(ctg_game* game, retcon_game_callbacks* cb, int32_t custom_checksum) {
  cb->user = game;
  cb->save_state = save_state;
  cb->load_state = load_state;
  cb->advance_frame = advance_frame;
  cb->on_event = on_event;
  cb->describe_state = describe_state;
  cb->checksum = custom_checksum ? ctg_checksum : NULL;
}
