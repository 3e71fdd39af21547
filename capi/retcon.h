/* retcon: the C API. One C99 header, also valid C++; the library behind it is C++20.
 *
 * Conventions (docs/C_API.md has the long form):
 * - Handles are opaque. Every create has a destroy; destroy accepts NULL.
 * - Every function returns a retcon_result (except the name and version functions, which
 *   cannot fail). retcon_result_name() turns one into text. There is no global "last error".
 * - Configuration structs start with `size`. Fill them with their retcon_*_init() function,
 *   then change fields; the library reads only the fields `size` says the caller knows.
 *   A size this library does not know is RETCON_RESULT_INVALID_ARGUMENT.
 * - Integers are fixed-width. Lengths of memory buffers are size_t (pointer-sized), as in the
 *   C library and zstd; frames and players are int32_t; flags are uint32_t, never bool.
 * - Every callback gets the `void* user` pointer it was registered with as first argument.
 * - Ownership is written next to every pointer. Pointers handed to a callback are valid only
 *   during that call. The library copies every struct passed to it; nothing passed in has to
 *   outlive the call, except the handles a network session or simulator borrows (its
 *   transport), which refuse to be destroyed first (RETCON_RESULT_WRONG_STATE).
 * - A session is not thread-safe: call it from one thread at a time. Calls that change a
 *   session (destroy included) made from inside one of its callbacks (game callbacks, logger,
 *   or the callbacks of the transport it polls) return RETCON_RESULT_WRONG_STATE; so does
 *   destroying a transport from inside its own callbacks or those of a transport it wraps.
 * - Callbacks must return normally (no longjmp, no C++ exception through them).
 */
#ifndef RETCON_H
#define RETCON_H

#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------------------------------------
 * Version. RETCON_VERSION_NUMBER = major * 10000 + minor * 100 + patch. Compare it with
 * retcon_version() to detect a header / library mismatch at run time. Within one major version
 * the ABI only grows (new functions, new fields at the end of size-tagged structs).
 */
#define RETCON_VERSION_MAJOR 0
#define RETCON_VERSION_MINOR 2
#define RETCON_VERSION_PATCH 0
#define RETCON_VERSION_NUMBER \
  (RETCON_VERSION_MAJOR * 10000 + RETCON_VERSION_MINOR * 100 + RETCON_VERSION_PATCH)
#define RETCON_STRINGIFY_(x) #x
#define RETCON_STRINGIFY(x) RETCON_STRINGIFY_(x)
#define RETCON_VERSION_STRING                                                          \
  RETCON_STRINGIFY(RETCON_VERSION_MAJOR) "." RETCON_STRINGIFY(RETCON_VERSION_MINOR) "." \
  RETCON_STRINGIFY(RETCON_VERSION_PATCH)

/* ---------------------------------------------------------------------------------------------
 * Export macro. The shared library is built with hidden visibility and exports exactly the
 * functions marked RETCON_API. Define RETCON_STATIC when linking the static library on Windows.
 */
#ifndef RETCON_API
#  if defined(_WIN32) || defined(__CYGWIN__)
#    if defined(RETCON_STATIC)
#      define RETCON_API
#    elif defined(RETCON_BUILDING_LIBRARY)
#      define RETCON_API __declspec(dllexport)
#    else
#      define RETCON_API __declspec(dllimport)
#    endif
#  elif defined(__GNUC__) || defined(__clang__)
#    define RETCON_API __attribute__((visibility("default")))
#  else
#    define RETCON_API
#  endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Limits (the same as the C++ API's; every per-frame structure is preallocated from them).
 */
#define RETCON_MAX_PLAYERS 8
#define RETCON_MAX_SPECTATORS 32
#define RETCON_MATCH_KEY_SIZE 32  /* bytes of a match key (retcon_p2p_config.match_key) */
#define RETCON_MAX_INPUT_SIZE 128
#define RETCON_MAX_PREDICTION_FRAMES 64
#define RETCON_MAX_INPUT_DELAY 32
#define RETCON_MAX_STATE_SIZE (UINT64_C(256) << 20)
#define RETCON_NULL_FRAME (-1)
#define RETCON_MAX_DECISION_SIZE 240 /* bytes of one timed decision (retcon_session_send_decision) */

/* ---------------------------------------------------------------------------------------------
 * Results. The numbers are pinned (they equal retcon::Result); new ones are only appended.
 */
/* In C++ the enum gets a fixed underlying type, so any int32_t a C caller passes (e.g. to
 * retcon_result_name) is a valid value there too; in C an enum is an int already. */
#ifdef __cplusplus
typedef enum retcon_result : int32_t {
#else
typedef enum retcon_result {
#endif
  RETCON_RESULT_OK = 0,
  RETCON_RESULT_INVALID_ARGUMENT = 1,     /* a null pointer, unknown struct size, bad value */
  RETCON_RESULT_INVALID_PLAYER = 2,       /* unknown player index */
  RETCON_RESULT_INVALID_INPUT_SIZE = 3,   /* input bytes of a size other than the session's */
  RETCON_RESULT_WRONG_STATE = 4,          /* not valid now (e.g. from inside a callback) */
  RETCON_RESULT_PREDICTION_LIMIT = 5,     /* not advanced: wait for remote inputs, retry */
  RETCON_RESULT_SAVE_FAILED = 6,          /* save_state needed more than max_state_size */
  RETCON_RESULT_INPUT_ALREADY_ADDED = 7,  /* this player's input was already given this frame */
  RETCON_RESULT_MISSING_LOCAL_INPUT = 8,  /* a local player has no input for the next frame */
  RETCON_RESULT_INPUT_OUT_OF_WINDOW = 9,
  RETCON_RESULT_OUT_OF_MEMORY = 10,
  RETCON_RESULT_NOT_SYNCHRONIZED = 11,
  RETCON_RESULT_TOO_MANY_PLAYERS = 12,
  RETCON_RESULT_TRANSPORT_ERROR = 13,
  RETCON_RESULT_BAD_PACKET = 14,
  RETCON_RESULT_PLAYER_DISCONNECTED = 15,
  RETCON_RESULT_NOT_FOUND = 16,
  RETCON_RESULT_IO_ERROR = 17,
  RETCON_RESULT_CORRUPT_DATA = 18,
  RETCON_RESULT_VERSION_MISMATCH = 19,
  RETCON_RESULT_INTERNAL_ERROR = 20,      /* a bug in retcon, reported instead of crashing */
  RETCON_RESULT_UNSUPPORTED = 21         /* a feature this build lacks (match keys without libsodium) */
} retcon_result;

/* Stable lowercase name ("ok", "invalid_argument", ...); "unknown_result" for other values.
 * Never NULL; the string is static. */
RETCON_API const char* retcon_result_name(retcon_result result);

/* Runtime version: RETCON_VERSION_NUMBER and RETCON_VERSION_STRING of the library itself. */
RETCON_API uint32_t retcon_version(void);
RETCON_API const char* retcon_version_string(void); /* static string, never NULL */

/* ---------------------------------------------------------------------------------------------
 * Enumerations. Struct fields that hold them are uint32_t (or uint8_t), never the enum type,
 * so their size is the same in every compiler and binding.
 */
typedef enum retcon_save_mode {
  RETCON_SAVE_AUTOMATIC = 0,   /* every frame when a rollback is possible, else never */
  RETCON_SAVE_EVERY_FRAME = 1, /* before every simulated frame */
  RETCON_SAVE_SPARSE = 2       /* only confirmed frames: fewer saves, longer re-simulations */
} retcon_save_mode;

typedef enum retcon_log_level {
  RETCON_LOG_DEBUG = 0,
  RETCON_LOG_INFO = 1,
  RETCON_LOG_WARNING = 2,
  RETCON_LOG_ERROR = 3
} retcon_log_level;

/* Per-player status of an input handed to advance_frame (retcon_frame_inputs.status). */
typedef enum retcon_input_status {
  RETCON_INPUT_CONFIRMED = 0,   /* the player's real input */
  RETCON_INPUT_PREDICTED = 1,   /* a guess; a rollback corrects it if wrong */
  RETCON_INPUT_DISCONNECTED = 2 /* the player left; zeros */
} retcon_input_status;

/* Bits of the `flags` argument of advance_frame. */
typedef enum retcon_advance_flags {
  RETCON_ADVANCE_NONE = 0,
  RETCON_ADVANCE_RESIMULATING = 1 /* re-simulation after a rollback: mute sound and effects */
} retcon_advance_flags;

typedef enum retcon_event_type {
  RETCON_EVENT_SYNCHRONIZING = 1,         /* handshake progress: count of total round trips */
  RETCON_EVENT_SYNCHRONIZED = 2,
  RETCON_EVENT_RUNNING = 3,
  RETCON_EVENT_CONNECTION_INTERRUPTED = 4,
  RETCON_EVENT_CONNECTION_RESUMED = 5,
  RETCON_EVENT_DISCONNECTED = 6,          /* a player left: frame = its last frame, agreed by every peer */
  RETCON_EVENT_TIMESYNC = 7,              /* advice: wait `count` frames */
  RETCON_EVENT_DESYNC_DETECTED = 8,       /* the first in full (total = 1), then a summary
                                             (total = desyncs so far) every 10 more */
  RETCON_EVENT_SYNC_TEST_MISMATCH = 9,    /* re-simulation produced a different state: the first
                                             in full (total = 1), then one summary (no texts,
                                             total = mismatches so far) every 60 more */
  RETCON_EVENT_PREDICTION_LIMIT = 10,     /* stalled for notify_delay: `player` awaited, at `frame` */
  RETCON_EVENT_SAVE_FAILED = 11,          /* count = the bytes save_state asked for */
  RETCON_EVENT_HANDSHAKE_REJECTED = 12,   /* message names the field that differs; count and
                                             total hold our value and the peer's */
  RETCON_EVENT_SPECTATOR_JOINED = 13,
  RETCON_EVENT_SPECTATOR_LEFT = 14,
  RETCON_EVENT_CANNOT_CONTINUE = 15,      /* every remote player is gone (or none ever synchronized);
                                           * not while allow_rejoin + state_transfer can take one back */
  RETCON_EVENT_LATE_INPUTS = 20           /* a remote player's inputs arrive later than the network
                                           * explains (lag switch, frozen game): player, frame = the
                                           * newest late frame, count = frames late, total = events
                                           * for this peer so far; at most one per peer per second */,
  RETCON_EVENT_INPUT_DELAY_CHOSEN = 21,   /* retcon_session_choose_input_delay: count = the delay
                                           * chosen, total = the delay before, checksum_local = the
                                           * median RTT (us), text_local = every remote player's RTT */
  RETCON_EVENT_INPUT_DELAY_APPLIED = 22   /* the input delay changed (apply_input_delay): frame = where
                                           * (the same on every machine), count = new, total = old,
                                           * checksum_local = median RTT (us), text_local = the RTTs,
                                           * player = the deciding machine's first player,
                                           * checksum_remote = the planned frame */,
  RETCON_EVENT_REJOIN_REQUESTED = 30,     /* allow_rejoin: a machine asks to take back disconnected
                                           * player's slot; frame = its agreed last frame, text_local
                                           * = the requester's address bytes (text_local_len long).
                                           * Answer with retcon_session_answer_rejoin */
  RETCON_EVENT_PLAYER_REJOINING = 31,     /* player comes back: disconnected up to frame - 1, live
                                           * from frame, the same frame on every machine */
  RETCON_EVENT_PLAYER_REJOINED = 32,      /* player's input of frame (as PLAYER_REJOINING) is
                                           * confirmed: it plays again */
  RETCON_EVENT_REJOIN_REFUSED = 33,       /* rejoining: player's machine refused our rejoin (its
                                           * game answered 0); CANNOT_CONTINUE follows */
  RETCON_EVENT_DESYNC_STATES = 25         /* share_desync_states: both states of a desync frame,
                                           * after DESYNC_DETECTED. player = the peer, frame = the
                                           * desync frame, state_remote = the peer's saved state
                                           * (exact bytes, checked against its checksum),
                                           * state_local = ours (NULL when no longer kept),
                                           * text_remote / text_local = describe_state of both */
} retcon_event_type;

/* Stable lowercase name of a retcon_event_type; "unknown_event" for other values. Static. */
RETCON_API const char* retcon_event_type_name(uint32_t type);

typedef enum retcon_session_kind {
  RETCON_SESSION_LOCAL = 1,
  RETCON_SESSION_SYNC_TEST = 2,
  RETCON_SESSION_P2P = 3,
  RETCON_SESSION_SPECTATOR = 4
} retcon_session_kind;

/* ---------------------------------------------------------------------------------------------
 * What the callbacks receive. Owned by retcon, valid only during the callback.
 */

/* One timed decision (retcon_session_send_decision) of the frame being simulated. */
typedef struct retcon_decision {
  const uint8_t* bytes; /* `size` bytes, valid during the advance_frame call only */
  uint32_t size;        /* 1..RETCON_MAX_DECISION_SIZE */
  int32_t sender;       /* the first player of the machine that sent it */
} retcon_decision;

/* Every player's input for one frame, and the frame's timed decisions: the same ones in the
 * same order on every machine, every time the frame is simulated (re-simulations included).
 * Every pointer is valid only during the advance_frame callback that receives it (they point
 * into the session's own rings): copy what the game keeps. */
typedef struct retcon_frame_inputs {
  const uint8_t* bytes;   /* player_count * input_size bytes; player p at p * input_size */
  const uint8_t* status;  /* player_count retcon_input_status values */
  uint32_t input_size;
  uint32_t player_count;
  const retcon_decision* decisions; /* decision_count entries (NULL when 0), by sender, then
                                     * sending order */
  uint32_t decision_count;
} retcon_frame_inputs;

/* Receives text from describe_state: call sink->write(sink->user, text, length) as often as
 * needed. `text` needs no NUL; retcon copies it before write returns. */
typedef struct retcon_text_sink {
  void* user;
  void (*write)(void* user, const char* text, size_t length);
} retcon_text_sink;

/* One session event. Fields that do not apply to a type are 0, -1 (player, frame) or NULL. */
typedef struct retcon_event {
  uint32_t type;            /* retcon_event_type */
  int32_t player;           /* the player or peer concerned, -1 if none */
  int32_t frame;            /* the frame concerned, RETCON_NULL_FRAME if none */
  int32_t count;            /* synchronizing: round trips done; timesync: frames to wait */
  int32_t total;            /* synchronizing: round trips needed; desync, sync test: how many
                               so far; handshake rejected: the peer's value */
  uint64_t checksum_local;  /* desync / sync test: our checksum (sync test: first run) */
  uint64_t checksum_remote; /* desync: the peer's; sync test: the re-simulation's */
  const char* text_local;   /* describe_state of our state; NULL without a describer */
  size_t text_local_len;
  const char* text_remote;  /* sync test: describe_state of the re-simulated state */
  size_t text_remote_len;
  const char* message;      /* short explanation, NUL-terminated, never NULL */
  /* DESYNC_DETECTED / DESYNC_STATES with share_desync_states: the saved states' bytes */
  const uint8_t* state_local;   /* ours of `frame` (NULL when not kept) */
  size_t state_local_len;
  const uint8_t* state_remote;  /* DESYNC_STATES: the peer's of `frame` */
  size_t state_remote_len;
} retcon_event;

/* ---------------------------------------------------------------------------------------------
 * Game callbacks: what the game supplies. save_state, load_state and advance_frame are
 * required; the rest may be NULL. All run on the thread that called the session function.
 */
typedef struct retcon_game_callbacks {
  uint32_t size; /* sizeof(retcon_game_callbacks); set by retcon_game_callbacks_init */
  void* user;    /* passed back to every callback; retcon never dereferences it */
  /* Write the state of `frame` into `buffer` (owned by retcon, `capacity` bytes; do not keep
   * it). Return the bytes used. Returning more than `capacity` means "did not fit, I need
   * this many": the session reports RETCON_EVENT_SAVE_FAILED and returns
   * RETCON_RESULT_SAVE_FAILED without advancing. */
  size_t (*save_state)(void* user, int32_t frame, uint8_t* buffer, size_t capacity);
  /* Restore the state saved for `frame`. `buffer` is owned by retcon; do not keep it. */
  void (*load_state)(void* user, int32_t frame, const uint8_t* buffer, size_t length);
  /* Simulate `frame` with every player's input. `flags` holds retcon_advance_flags bits. */
  void (*advance_frame)(void* user, int32_t frame, const retcon_frame_inputs* inputs,
                        uint32_t flags);
  /* Optional: a session event. */
  void (*on_event)(void* user, const retcon_event* event);
  /* Optional: describe a saved state as text, for sync-test and desync reports. */
  void (*describe_state)(void* user, int32_t frame, const uint8_t* buffer, size_t length,
                         const retcon_text_sink* sink);
  /* Optional: checksum of a saved state. Default: XXH3-64 of the bytes. */
  uint64_t (*checksum)(void* user, int32_t frame, const uint8_t* buffer, size_t length);
} retcon_game_callbacks;

/* Zeroes `callbacks` and sets its size. */
RETCON_API retcon_result retcon_game_callbacks_init(retcon_game_callbacks* callbacks);

/* Guesses a remote player's input for a frame not received yet. `last` (owned by retcon) is the
 * last confirmed input, NULL before any; write input_size bytes to `out` (owned by retcon).
 * With predict == NULL the last confirmed input is carried forward (zeros before any). */
typedef struct retcon_predictor {
  void* user;
  void (*predict)(void* user, int32_t player, int32_t frame, const uint8_t* last, uint8_t* out,
                  size_t input_size);
} retcon_predictor;

/* The library never prints: log lines go to this callback, if set. `message` is owned by
 * retcon, NUL-terminated, valid during the call. */
typedef struct retcon_logger {
  void* user;
  void (*log)(void* user, uint32_t level, const char* message);
  uint32_t min_level; /* retcon_log_level; lines below it are not formatted at all */
} retcon_logger;

/* ---------------------------------------------------------------------------------------------
 * Session configuration, shared by every session kind.
 */
typedef struct retcon_session_config {
  uint32_t size;           /* sizeof(retcon_session_config); set by retcon_session_config_init */
  uint32_t num_players;    /* 1..RETCON_MAX_PLAYERS (default 2) */
  uint32_t input_size;     /* bytes per player per frame, 1..RETCON_MAX_INPUT_SIZE (default 4) */
  int32_t max_prediction;  /* 0..RETCON_MAX_PREDICTION_FRAMES (default 8). Players of a p2p match
                              may differ: each plays with the smallest of its own and its players'
                              (retcon_session_stats.prediction_window) */
  uint32_t save_mode;      /* retcon_save_mode (default RETCON_SAVE_AUTOMATIC) */
  uint64_t max_state_size; /* capacity of each save buffer, 1..RETCON_MAX_STATE_SIZE. No
                              default: 0 until the game sets it, which create rejects. */
  retcon_predictor predictor; /* optional (default: zeros = carry forward) */
  retcon_logger logger;       /* optional (default: no logging, min_level INFO) */
  uint64_t memory_budget;     /* most state memory create may commit, in bytes (default 4 GiB;
                                 0 = no limit). Beyond it: RETCON_RESULT_OUT_OF_MEMORY and a
                                 log line saying why. */
} retcon_session_config;

/* Fills `config` with the defaults above and sets its size. */
RETCON_API retcon_result retcon_session_config_init(retcon_session_config* config);

/* Checks `config` and `callbacks` as create would. RETCON_RESULT_OK, or
 * RETCON_RESULT_INVALID_ARGUMENT with `*reason` (if `reason` is not NULL) set to a static
 * English sentence naming the bad field. `*reason` is NULL when valid. */
RETCON_API retcon_result retcon_session_config_validate(const retcon_session_config* config,
                                                        const retcon_game_callbacks* callbacks,
                                                        const char** reason);

/* Sync test settings. */
typedef struct retcon_sync_test_config {
  uint32_t size;          /* sizeof(retcon_sync_test_config); set by retcon_sync_test_config_init */
  int32_t check_distance; /* frames re-simulated at each check, 1..max_prediction (default 2) */
  int32_t check_interval; /* check every this many frames, 1..3600 (default 1: every frame);
                             = check_distance re-simulates each frame once */
} retcon_sync_test_config;

RETCON_API retcon_result retcon_sync_test_config_init(retcon_sync_test_config* config);

/* ---------------------------------------------------------------------------------------------
 * Sessions. One handle type for every kind; functions that do not apply to a kind say so.
 */
typedef struct retcon_session retcon_session;

/* All players on this machine: no prediction, no rollback, runs from the first frame.
 * On success `*out` is a new session (destroy it with retcon_session_destroy); on failure
 * `*out` is set to NULL (when `out` is not NULL). When the config is refused, the reason also
 * goes to config->logger (if set) as a RETCON_LOG_ERROR line. */
RETCON_API retcon_result retcon_local_session_create(const retcon_session_config* config,
                                                     const retcon_game_callbacks* callbacks,
                                                     retcon_session** out);

/* Sync test: every frame, roll back check_distance frames, re-simulate and compare checksums
 * (RETCON_EVENT_SYNC_TEST_MISMATCH on a difference). All players local. Needs
 * config->max_prediction >= check_distance. `*out` as for retcon_local_session_create. */
RETCON_API retcon_result retcon_sync_test_session_create(const retcon_session_config* config,
                                                         const retcon_sync_test_config* sync_test,
                                                         const retcon_game_callbacks* callbacks,
                                                         retcon_session** out);

/* Frees the session and everything it owns. NULL is accepted (RETCON_RESULT_OK). From inside
 * one of the session's own callbacks: RETCON_RESULT_WRONG_STATE and nothing is freed.
 * Session functions given a pointer that is not a live session (already destroyed, or not a
 * session at all) return RETCON_RESULT_INVALID_ARGUMENT when they can tell, which is
 * best-effort: do not rely on it. */
RETCON_API retcon_result retcon_session_destroy(retcon_session* session);

/* retcon_session_kind of the session. */
RETCON_API retcon_result retcon_session_get_kind(const retcon_session* session, uint32_t* kind);

/* This frame's input of a local player: `size` must equal the configured input_size. The
 * bytes are copied. With input delay d it applies at frame current + d. Once per player per
 * frame (RETCON_RESULT_INPUT_ALREADY_ADDED otherwise). */
RETCON_API retcon_result retcon_session_add_local_input(retcon_session* session, int32_t player,
                                                        const void* input, size_t size);

/* Simulates one frame through the game callbacks (after any rollback needed). Every local
 * player needs an input first (RETCON_RESULT_MISSING_LOCAL_INPUT). */
RETCON_API retcon_result retcon_session_advance_frame(retcon_session* session);

/* Network sessions send and receive here (and may report events); `now_us` is any monotonic
 * clock in microseconds. Call it every tick, before adding inputs. Local and sync-test
 * sessions accept and ignore it. */
RETCON_API retcon_result retcon_session_poll(retcon_session* session, uint64_t now_us);

/* Input delay of a local player, 0..RETCON_MAX_INPUT_DELAY frames, changeable at any time. */
RETCON_API retcon_result retcon_session_set_input_delay(retcon_session* session, int32_t player,
                                                        int32_t frames);

/* The next frame to simulate (0 before the first advance). */
RETCON_API retcon_result retcon_session_current_frame(const retcon_session* session,
                                                      int32_t* frame);

/* The newest frame whose inputs are all confirmed, RETCON_NULL_FRAME before any. */
RETCON_API retcon_result retcon_session_confirmed_frame(const retcon_session* session,
                                                        int32_t* frame);

typedef struct retcon_session_stats {
  uint32_t size;               /* sizeof(retcon_session_stats); set by retcon_session_stats_init */
  int32_t current_frame;
  int32_t confirmed_frame;
  uint32_t max_rollback_depth;
  uint64_t frames_advanced;    /* frames simulated for the first time */
  uint64_t frames_resimulated;
  uint64_t rollbacks;
  uint64_t saves;
  uint64_t loads;
  uint64_t checksums;
  uint64_t frames_stalled;     /* advance calls refused by the prediction window */
  uint64_t rollback_depth_histogram[RETCON_MAX_PREDICTION_FRAMES + 1]; /* index = depth */
  uint64_t committed_bytes;    /* state memory reserved at create (see memory_budget) */
  int32_t prediction_window;   /* the rollback window in use: max_prediction, or in a P2P session
                                  the smallest max_prediction of the player machines it completed a
                                  handshake with (never raised again in the match); 0 = lockstep */
} retcon_session_stats;

RETCON_API retcon_result retcon_session_stats_init(retcon_session_stats* stats);

/* Copies the session's counters into `stats`, whose size must be set (stats_init). */
RETCON_API retcon_result retcon_session_get_stats(const retcon_session* session,
                                                  retcon_session_stats* stats);

/* =============================================================================================
 * Networking: addresses, transports, peer-to-peer and spectator sessions.
 *
 * retcon never opens a socket or reads a clock on its own: a network session sends and
 * receives through a retcon_transport, inside retcon_session_poll(session, now_us). Transports:
 *   - UDP: a non-blocking socket (IPv4 or IPv6), no thread;
 *   - callbacks: your own (Steam, ENet, WebRTC, a relay, ...);
 *   - in-memory: endpoints of a retcon_memory_network, for tests and local play in one process;
 *   - a network simulator wrapping any of those: latency, jitter, loss, duplicates, reordering,
 *     bandwidth and blackouts, from its own seeded random generator and a clock you set.
 * A session or simulator borrows its transport: destroying a transport (or a memory network)
 * still in use returns RETCON_RESULT_WRONG_STATE and frees nothing.
 */

#define RETCON_PEER_ADDRESS_CAPACITY 32

/* Opaque address bytes: whatever a transport needs to reach a peer. Only the first `size`
 * bytes are meaningful; the rest must be zero. */
typedef struct retcon_peer_address {
  uint32_t size;
  uint8_t bytes[RETCON_PEER_ADDRESS_CAPACITY];
} retcon_peer_address;

/* A UDP address from numeric text ("127.0.0.1", "::1", "fe80::1%2") and a port.
 * RETCON_RESULT_INVALID_ARGUMENT when `host` does not parse. */
RETCON_API retcon_result retcon_ip_address(const char* host, uint16_t port, retcon_peer_address* out);

typedef struct retcon_transport retcon_transport;
typedef struct retcon_memory_network retcon_memory_network;

/* Opens a UDP socket bound to numeric `host` ("0.0.0.0", "::", "127.0.0.1") and `port`
 * (0 = any free port). RETCON_RESULT_TRANSPORT_ERROR when it cannot be opened or bound. */
RETCON_API retcon_result retcon_udp_transport_open(const char* host, uint16_t port,
                                                   retcon_transport** out);

/* A user transport. Addresses are the bytes of a retcon_peer_address. Both run inside
 * retcon_session_poll; neither may block. */
typedef struct retcon_transport_callbacks {
  uint32_t size; /* sizeof(retcon_transport_callbacks); set by retcon_transport_callbacks_init */
  void* user;
  /* Send `length` bytes (owned by retcon) to the address (addr_len bytes). Return 0 on
   * success, anything else on failure (counted; the protocol copes with loss). */
  int32_t (*send)(void* user, const uint8_t* addr, uint32_t addr_len, const uint8_t* data,
                  size_t length);
  /* Poll one datagram into `buffer` (owned by retcon, `capacity` bytes). On entry `*addr_len`
   * is the capacity of `addr` (RETCON_PEER_ADDRESS_CAPACITY); set it and `*length`. Return 1
   * when a datagram was written, 0 when none is waiting, a negative number on error. */
  int32_t (*receive)(void* user, uint8_t* addr, uint32_t* addr_len, uint8_t* buffer,
                     size_t capacity, size_t* length);
} retcon_transport_callbacks;

RETCON_API retcon_result retcon_transport_callbacks_init(retcon_transport_callbacks* callbacks);
RETCON_API retcon_result retcon_callback_transport_create(const retcon_transport_callbacks* callbacks,
                                                          retcon_transport** out);

/* In-process networks: every endpoint is a transport with its own address. */
RETCON_API retcon_result retcon_memory_network_create(retcon_memory_network** out);
/* NULL is accepted. RETCON_RESULT_WRONG_STATE while any of its endpoints is not destroyed. */
RETCON_API retcon_result retcon_memory_network_destroy(retcon_memory_network* network);
RETCON_API retcon_result retcon_memory_network_add_endpoint(retcon_memory_network* network,
                                                            retcon_transport** out);

/* Network conditions for one direction of a simulator. Probabilities are 0..1. */
typedef struct retcon_link_profile {
  uint32_t size; /* sizeof(retcon_link_profile); set by retcon_link_profile_init */
  uint64_t latency_us;
  uint64_t jitter_us;             /* extra delay, uniform in [0, jitter_us] */
  double loss;                    /* probability a datagram is dropped */
  double duplicate;               /* probability a datagram is delivered twice */
  double reorder;                 /* probability a datagram is held back by reorder_delay_us */
  uint64_t reorder_delay_us;      /* default 20000 */
  uint64_t bandwidth_bytes_per_s; /* 0 = unlimited */
  uint64_t max_queue_delay_us;    /* backlog beyond which a capped link drops; default 200000 */
  uint64_t blackout_period_us;    /* periodic silence: 0 = none */
  uint64_t blackout_duration_us;
  uint64_t blackout_offset_us;
} retcon_link_profile;

RETCON_API retcon_result retcon_link_profile_init(retcon_link_profile* profile);

/* Wraps `inner` (borrowed: destroy the simulator first). `seed` makes runs repeatable. */
RETCON_API retcon_result retcon_network_simulator_create(retcon_transport* inner, uint64_t seed,
                                                         retcon_transport** out);
/* Sets what the simulator does to what it sends and to what it receives; NULL leaves one as
 * it is (a new simulator passes everything through at once). */
RETCON_API retcon_result retcon_network_simulator_set_links(retcon_transport* simulator,
                                                            const retcon_link_profile* outgoing,
                                                            const retcon_link_profile* incoming);
/* Advances the simulator's clock (never backwards) and delivers what is due. Call it before
 * retcon_session_poll with the same time. */
RETCON_API retcon_result retcon_network_simulator_set_time(retcon_transport* simulator,
                                                           uint64_t now_us);

/* Silences at explicit times, beside the periodic blackouts of a retcon_link_profile: a
 * datagram entering a direction inside [start_us, end_us) of one of its windows is dropped
 * (counted in dropped_blackout). Each call replaces the direction's list (count 0 clears it);
 * retcon_network_simulator_set_links keeps it. At most RETCON_SIMULATOR_MAX_BLACKOUTS windows
 * per direction, each with start_us < end_us, else RETCON_RESULT_INVALID_ARGUMENT and nothing
 * changes. The windows are copied. */
#define RETCON_SIMULATOR_MAX_BLACKOUTS 1024

typedef struct retcon_blackout_window {
  uint64_t start_us; /* first microsecond of silence */
  uint64_t end_us;   /* first microsecond after it */
} retcon_blackout_window;

typedef enum retcon_link_direction {
  RETCON_LINK_OUTGOING = 1, /* what the simulator sends */
  RETCON_LINK_INCOMING = 2, /* what it receives */
  RETCON_LINK_BOTH = 3
} retcon_link_direction;

RETCON_API retcon_result retcon_network_simulator_set_blackouts(retcon_transport* simulator,
                                                                uint32_t directions,
                                                                const retcon_blackout_window* windows,
                                                                uint32_t count);

/* Bounds that keep a simulator's cost per poll and its memory fixed under a flood. */
typedef struct retcon_simulator_limits {
  uint32_t size;             /* sizeof(retcon_simulator_limits); set by retcon_simulator_limits_init */
  uint32_t receive_budget;   /* datagrams read from the inner transport per poll (default 1024) */
  uint32_t capacity;         /* datagrams held per direction; one more is dropped (default 8192) */
  uint64_t receive_time_budget_us; /* a poll also ends after this long in wall-clock time
                                    * (0 = none, the default: a virtual-clock run must not depend
                                    * on the machine's speed; 2000 over a real socket) */
} retcon_simulator_limits;

RETCON_API retcon_result retcon_simulator_limits_init(retcon_simulator_limits* limits);
/* Zero counts are taken as 1. */
RETCON_API retcon_result retcon_network_simulator_set_limits(retcon_transport* simulator,
                                                             const retcon_simulator_limits* limits);
RETCON_API retcon_result retcon_network_simulator_get_limits(const retcon_transport* simulator,
                                                             retcon_simulator_limits* limits);

/* What one direction of a simulator did, counted since it was created. */
typedef struct retcon_simulator_stats {
  uint32_t size; /* sizeof(retcon_simulator_stats); set by retcon_simulator_stats_init */
  uint32_t reserved;
  uint64_t sent;              /* datagrams offered to this direction */
  uint64_t delivered;         /* datagrams handed on (duplicates count twice) */
  uint64_t dropped_loss;
  uint64_t dropped_blackout;
  uint64_t dropped_bandwidth;
  uint64_t duplicated;
  uint64_t dropped_capacity;  /* the direction held `capacity` datagrams already */
  uint64_t budget_exhausted;  /* incoming: polls that stopped reading at the receive budget */
  uint64_t time_budget_stops; /* incoming: polls ended by the time budget */
} retcon_simulator_stats;

RETCON_API retcon_result retcon_simulator_stats_init(retcon_simulator_stats* stats);
/* Either pointer may be NULL (not wanted); a non-NULL one must be initialized. */
RETCON_API retcon_result retcon_network_simulator_get_stats(const retcon_transport* simulator,
                                                            retcon_simulator_stats* outgoing,
                                                            retcon_simulator_stats* incoming);
/* Datagrams held in both directions waiting for their delivery time, and the bytes of buffer
 * the simulator holds for them (bounded by the capacity whatever the flood). Either pointer may
 * be NULL. */
RETCON_API retcon_result retcon_network_simulator_in_flight(const retcon_transport* simulator,
                                                            uint64_t* datagrams, uint64_t* buffer_bytes);

/* A UDP transport's receive budgets, so a flood cannot hold the game thread: one session poll
 * reads at most `datagrams` (default 256, at least 1, else RETCON_RESULT_INVALID_ARGUMENT) and
 * stops after `microseconds` of wall-clock time (default 2000; 0 = no time budget). What is left
 * waits in the socket for the next poll. RETCON_RESULT_INVALID_ARGUMENT for a transport that is
 * not a UDP socket. */
RETCON_API retcon_result retcon_udp_transport_set_receive_budget(retcon_transport* udp, uint32_t datagrams);
RETCON_API retcon_result retcon_udp_transport_set_receive_time_budget(retcon_transport* udp,
                                                                      uint64_t microseconds);

/* How a UDP transport learns of datagrams (docs/PERFORMANCE.md "UDP: the io_uring receive
 * path"). COMPLETION_RING (the default of retcon_udp_transport_open): Linux io_uring where the
 * build and the kernel (6.0 or later, not refused by seccomp) allow it; a poll that finds
 * nothing makes no system call. BATCHED_CALLS: recvmmsg on Linux. SINGLE_CALLS: one receive call
 * per datagram (the only path on other systems). A path the system lacks falls back to the next
 * one down; retcon_udp_transport_receive_path says which one runs. */
typedef enum retcon_udp_receive_path {
  RETCON_UDP_RECEIVE_COMPLETION_RING = 0,
  RETCON_UDP_RECEIVE_BATCHED_CALLS = 1,
  RETCON_UDP_RECEIVE_SINGLE_CALLS = 2
} retcon_udp_receive_path;

/* retcon_udp_transport_open with a preferred receive path (a retcon_udp_receive_path; anything
 * else: RETCON_RESULT_INVALID_ARGUMENT). */
RETCON_API retcon_result retcon_udp_transport_open_with_receive_path(const char* host, uint16_t port,
                                                                     uint32_t preferred, retcon_transport** out);
/* The receive path a UDP transport runs (a retcon_udp_receive_path). RETCON_RESULT_INVALID_ARGUMENT
 * for a transport that is not a UDP socket, or a NULL `out`. */
RETCON_API retcon_result retcon_udp_transport_receive_path(const retcon_transport* udp, uint32_t* out);

typedef struct retcon_udp_stats {
  uint32_t size; /* sizeof(retcon_udp_stats); set by retcon_udp_stats_init */
  uint32_t reserved;
  uint64_t send_errors;          /* datagrams the socket refused (counted as losses) */
  uint64_t receive_errors;       /* failed receive calls (an ICMP error, a truncated datagram) */
  uint64_t receive_budget_stops; /* polls cut short by either budget (the rest waited) */
  uint64_t system_calls;         /* socket sends and receives made, for measuring */
} retcon_udp_stats;

RETCON_API retcon_result retcon_udp_stats_init(retcon_udp_stats* stats);
RETCON_API retcon_result retcon_udp_transport_get_stats(const retcon_transport* udp, retcon_udp_stats* stats);

/* The transport's own address: a UDP socket's bound address, an in-memory endpoint's address.
 * RETCON_RESULT_NOT_FOUND for callback transports and simulators (ask the inner one). */
RETCON_API retcon_result retcon_transport_address(const retcon_transport* transport,
                                                  retcon_peer_address* out);

/* Frees the transport. NULL is accepted. RETCON_RESULT_WRONG_STATE while a session or a
 * simulator still uses it, or from inside a callback it (or the transport it wraps) is running. */
RETCON_API retcon_result retcon_transport_destroy(retcon_transport* transport);

/* ---------------------------------------------------------------------------------------------
 * Peer-to-peer sessions: every machine runs one, with the same players in the same order.
 */
typedef enum retcon_player_kind {
  RETCON_PLAYER_LOCAL = 0,
  RETCON_PLAYER_REMOTE = 1
} retcon_player_kind;

typedef struct retcon_p2p_config {
  uint32_t size;                  /* sizeof(retcon_p2p_config); set by retcon_p2p_config_init */
  uint32_t frame_rate;            /* checked by both sides in the handshake (default 60) */
  uint64_t notify_delay_us;       /* silence before CONNECTION_INTERRUPTED; 0 disables */
  uint64_t disconnect_timeout_us; /* silence before a peer is dropped; 0 disables */
  uint64_t rng_seed;              /* 0 (default): fresh OS entropy per connection; tests only: a fixed seed */
  int32_t sync_round_trips;       /* handshake round trips before synchronized (default 5) */
  int32_t desync_interval;        /* frames between checksum exchanges; 0 disables (default 30) */
  /* Per player (the first num_players entries of the session config): local or remote, and
   * for remote players the address of their machine (several players may share one). */
  uint32_t player_kinds[RETCON_MAX_PLAYERS];
  retcon_peer_address player_addresses[RETCON_MAX_PLAYERS];
  uint32_t num_spectators;        /* machines this host streams confirmed inputs to */
  retcon_peer_address spectators[RETCON_MAX_SPECTATORS];
  /* Send policy (docs/NETWORKING.md). Inputs go out at once whenever a confirmation matters
   * (lockstep, a prediction window within two frames of full, a stalled frame, a link so slow a
   * late datagram would not fit the peer's window, a changed input, and with loss_hold_frames
   * > 0 a window half full while loss was seen in the last loss_hold_frames frames); only
   * otherwise may up to input_batch_frames unchanged frames share a datagram. */
  uint32_t input_batch_frames;    /* 1..60; 1 sends every frame at once (default 2) */
  uint32_t loss_hold_frames;      /* frames a half-full window stays urgent after a loss (default 0: off) */
  /* The match key (docs/SECURITY.md): 32 random bytes the lobby gives every machine of one
   * match. has_match_key 1: every datagram is authenticated and encrypted, only machines with
   * the same key connect. 0 (default): no key, resists blind spoofing only. An all-zero key
   * with has_match_key 1 is refused (RETCON_RESULT_INVALID_ARGUMENT). */
  uint32_t has_match_key;
  uint8_t match_key[RETCON_MATCH_KEY_SIZE];
  /* Create refuses a config with no remote player and no spectator (init makes every player
   * local: a forgotten player_kinds), unless this is 1 (a session that runs alone). */
  uint32_t allow_local_only;
  /* Late-input detection: RETCON_EVENT_LATE_INPUTS when a remote player's input arrives this
   * many frames later than latency, jitter and outages explain. 0 disables the event (the
   * statistics are kept). 0..600, default 15. */
  int32_t late_input_threshold;
  /* A peer whose handshake made no round trip for this long is dropped (DISCONNECTED; with
   * nobody left, CANNOT_CONTINUE). 0 waits forever. Default 10 s. */
  uint64_t handshake_timeout_us;
  /* State transfer: 1 serves a spectator that joins a running match a recent confirmed state
   * instead of a replay from frame 0 (one max_state_size buffer allocated at create). 0 (default)
   * declines: such a spectator plays from frame 0. */
  uint32_t state_transfer;
  /* The pace of a state on its way, per connection (inputs always go first). 16384..2^30 bytes
   * per second, default 1048576. */
  uint64_t transfer_bytes_per_second;
  /* Automatic adaptive delay (retcon_session_apply_input_delay): 1: the machine of the
   * lowest-numbered player still in the match applies the rule below once the match runs and
   * every RTT is measured, and at each retcon_session_between_rounds. 0 (default): off. */
  uint32_t adaptive_delay;
  uint32_t adaptive_delay_rtt_percent;  /* 1..400 (default 50) */
  int32_t adaptive_delay_min_frames;    /* 0..32 (default 2) */
  int32_t adaptive_delay_max_frames;    /* min..32 (default 4) */
  /* Rejoin (docs/NETWORKING.md "Rejoin"). allow_rejoin 1: a machine whose players were
   * disconnected may come back from any address; each request raises
   * RETCON_EVENT_REJOIN_REQUESTED and goes ahead once retcon_session_answer_rejoin accepts it
   * (the host of a rejoin needs state_transfer too). rejoining 1: this session is such a machine
   * coming back (needs state_transfer): it runs once the host's state is loaded. Default 0. */
  uint32_t allow_rejoin;
  uint32_t rejoining;
  /* Both states on a desync: 1: on the first desync with a peer, both machines send each other
   * their saved state of that frame (over the reliable channel, paced: inputs never wait) and
   * each game gets RETCON_EVENT_DESYNC_STATES. Needs desync_interval > 0 and the peer's flag.
   * 0 (default): off. desync_state_max_size: the largest state sent or taken (0: max_state_size,
   * at most max_state_size); a few kept states and one buffer per remote machine of that size
   * are allocated at create. */
  uint32_t share_desync_states;
  uint64_t desync_state_max_size;
} retcon_p2p_config;

/* Defaults above; every player local, no spectator. */
RETCON_API retcon_result retcon_p2p_config_init(retcon_p2p_config* config);

/* A peer-to-peer session over `transport` (borrowed until the session is destroyed). It
 * handshakes inside retcon_session_poll; until every peer is synchronized
 * (retcon_session_is_running), inputs are refused with RETCON_RESULT_NOT_SYNCHRONIZED.
 * `*out` as for retcon_local_session_create. */
RETCON_API retcon_result retcon_p2p_session_create(const retcon_session_config* config,
                                                   const retcon_p2p_config* p2p,
                                                   const retcon_game_callbacks* callbacks,
                                                   retcon_transport* transport,
                                                   retcon_session** out);

typedef struct retcon_spectator_config {
  uint32_t size;                  /* sizeof(retcon_spectator_config); set by its init */
  uint32_t frame_rate;            /* as in retcon_p2p_config */
  uint64_t notify_delay_us;
  uint64_t disconnect_timeout_us;
  uint64_t rng_seed;
  int32_t sync_round_trips;
  int32_t catchup_threshold;      /* more confirmed frames waiting than this: catch up (8) */
  int32_t catchup_max_frames;     /* frames run per advance while catching up (3) */
  retcon_peer_address host;       /* the player machine that streams to this spectator */
  uint32_t has_match_key;         /* as in retcon_p2p_config: the host's match key */
  uint8_t match_key[RETCON_MATCH_KEY_SIZE];
  uint64_t handshake_timeout_us;  /* as in retcon_p2p_config (default 10 s) */
  /* 1: ask the host for a recent state and watch from there (the host needs state_transfer
   * too; without it the spectator plays from frame 0). 0 (default): play from frame 0. */
  uint32_t state_transfer;
  uint64_t transfer_bytes_per_second;  /* as in retcon_p2p_config */
} retcon_spectator_config;

RETCON_API retcon_result retcon_spectator_config_init(retcon_spectator_config* config);

/* A spectator: every player remote, confirmed inputs only, never rolls back. The session
 * config's num_players and input_size must be the host's. */
RETCON_API retcon_result retcon_spectator_session_create(const retcon_session_config* config,
                                                         const retcon_spectator_config* spectator,
                                                         const retcon_game_callbacks* callbacks,
                                                         retcon_transport* transport,
                                                         retcon_session** out);

/* 1 once every peer is synchronized (local and sync-test sessions: always 1). */
RETCON_API retcon_result retcon_session_is_running(const retcon_session* session, uint32_t* running);

/* Time sync. A machine that runs ahead of a peer is advised to wait a few frames (also told by
 * RETCON_EVENT_TIMESYNC). The advice is filtered (jitter does not cause waits), capped, and used
 * up as the game waits: every frame time that passes without the frame advancing (a skipped
 * tick, a stall) counts as one frame waited, so a loop that skips ticks while
 * frames_to_wait > 0 never deadlocks. The simplest correct loop asks once per tick:
 *   retcon_session_poll(s, now_us);
 *   uint32_t wait = 0;
 *   retcon_session_should_wait(s, &wait);
 *   if (!wait) { retcon_session_add_local_input(...); retcon_session_advance_frame(s); }
 * should_wait spreads a wait of several frames over ticks that advance in between.
 * Local and sync-test sessions: 0. */
RETCON_API retcon_result retcon_session_frames_to_wait(const retcon_session* session, int32_t* frames);
/* 1 when the game should skip advancing this tick (time-sync advice), else 0. */
RETCON_API retcon_result retcon_session_should_wait(const retcon_session* session, uint32_t* wait);
/* Catching up after a stall: frames refused by the prediction window for longer than 10 frames
 * (a blackout, a peer that froze) are owed, up to 30. 1 right after a frame advanced while some
 * are owed and the window has room: run one more frame in the same tick (at most one every
 * other frame time, 1.5x speed, so both peers of a blackout regain the time side by side):
 *   if (!wait) {
 *     add input; retcon_session_advance_frame(s);
 *     retcon_session_should_catch_up(s, &extra);
 *     if (extra) { add input; retcon_session_advance_frame(s); }
 *   }
 * A game that never asks only loses that time. Local, sync-test and spectator sessions: 0. */
RETCON_API retcon_result retcon_session_should_catch_up(const retcon_session* session, uint32_t* extra);

/* Adaptive input delay: rtt_percent of the median round trip to the remote machines, in frames
 * (rounded), clamped to min_frames..max_frames. Defaults: 50%, 2..4 frames (the rule a shipped
 * 4-player game uses at 60 Hz; the median so that one far player does not make everyone pay). */
typedef struct retcon_adaptive_delay_rule {
  uint32_t size;        /* sizeof(retcon_adaptive_delay_rule); set by retcon_adaptive_delay_rule_init */
  uint32_t rtt_percent; /* 1..400 */
  int32_t min_frames;   /* 0..32 */
  int32_t max_frames;   /* min_frames..32 */
} retcon_adaptive_delay_rule;

RETCON_API retcon_result retcon_adaptive_delay_rule_init(retcon_adaptive_delay_rule* rule);

typedef struct retcon_delay_choice {
  uint32_t size;          /* sizeof(retcon_delay_choice); set by retcon_delay_choice_init */
  int32_t delay;          /* what the rule gives, frames */
  int32_t previous;       /* our first local player's delay now */
  uint32_t peers;         /* round trips used */
  uint64_t median_rtt_us;
  uint64_t rtt_us[RETCON_MAX_PLAYERS]; /* per player: its machine's RTT (0: local or unmeasured) */
  int32_t frame;          /* retcon_session_apply_input_delay: the frame it takes effect */
} retcon_delay_choice;

RETCON_API retcon_result retcon_delay_choice_init(retcon_delay_choice* choice);

/* Computes the input delay `rule` gives for the round trips measured now (dropped peers
 * excluded), reports it (RETCON_EVENT_INPUT_DELAY_CHOSEN and `*choice`) and changes nothing: the
 * game applies it with retcon_session_set_input_delay between rounds, on every machine at the
 * same frame. RETCON_RESULT_NOT_SYNCHRONIZED before any RTT is measured; WRONG_STATE for local
 * and sync-test sessions; UNSUPPORTED for spectators; INVALID_ARGUMENT for a bad rule. */
RETCON_API retcon_result retcon_session_choose_input_delay(retcon_session* session,
                                                           const retcon_adaptive_delay_rule* rule,
                                                           retcon_delay_choice* choice);

/* Adaptive delay applied: chooses like retcon_session_choose_input_delay, then every player
 * machine sets its local players' input delay from `frame` on (RETCON_NULL_FRAME: the earliest
 * decision frame), through a timed message; each raises RETCON_EVENT_INPUT_DELAY_APPLIED when
 * its frame reaches it. `choice->frame` names the frame. Errors as choose_input_delay and
 * retcon_session_send_decision. Call it between rounds. */
RETCON_API retcon_result retcon_session_apply_input_delay(retcon_session* session,
                                                          const retcon_adaptive_delay_rule* rule, int32_t frame,
                                                          retcon_delay_choice* choice);
/* Automatic adaptive delay: a round is over (every machine may call it; only the deciding one
 * acts). WRONG_STATE without retcon_p2p_config.adaptive_delay. */
RETCON_API retcon_result retcon_session_between_rounds(retcon_session* session);
/* Rejoin: the game's answer (accept 1 / refuse 0) to RETCON_EVENT_REJOIN_REQUESTED for `player`.
 * NOT_FOUND when no request for that player waits; UNSUPPORTED without allow_rejoin. */
RETCON_API retcon_result retcon_session_answer_rejoin(retcon_session* session, int32_t player, uint32_t accept);

/* Timed decision: `size` bytes (1..RETCON_MAX_DECISION_SIZE) that every machine and spectator
 * hands to advance_frame (retcon_frame_inputs.decisions) whenever it simulates `frame`,
 * re-simulations included; part of the desync checksum. Any player machine may send them (the
 * game designates who, usually the host). `frame` must be at least
 * retcon_session_earliest_decision_frame(), else RETCON_RESULT_INPUT_OUT_OF_WINDOW; `*earliest`
 * (may be NULL) gets that frame either way. At most 16 of a machine's decisions are in flight:
 * RETCON_RESULT_PREDICTION_LIMIT beyond (retry a few frames later). NOT_SYNCHRONIZED before the
 * match runs; UNSUPPORTED for spectators; WRONG_STATE for local and sync-test sessions;
 * INVALID_ARGUMENT for NULL bytes or a bad size. docs/PROTOCOL.md "Timed decisions". */
RETCON_API retcon_result retcon_session_send_decision(retcon_session* session, const void* bytes, size_t size,
                                                      int32_t frame, int32_t* earliest);
/* The first frame retcon_session_send_decision accepts now (after the local inputs already
 * taken, plus the round trip to the slowest peer); RETCON_NULL_FRAME for sessions without
 * decisions or a NULL session. */
RETCON_API int32_t retcon_session_earliest_decision_frame(const retcon_session* session);

/* Drops a remote player and every player of the same machine; the peers agree on their last
 * frame, after which their input is zeros (RETCON_INPUT_DISCONNECTED). Local and sync-test
 * sessions: RETCON_RESULT_WRONG_STATE. */
RETCON_API retcon_result retcon_session_disconnect_player(retcon_session* session, int32_t player);

typedef enum retcon_peer_state {
  RETCON_PEER_IDLE = 0,
  RETCON_PEER_SYNCHRONIZING = 1,
  RETCON_PEER_RUNNING = 2,
  RETCON_PEER_INTERRUPTED = 3,
  RETCON_PEER_DISCONNECTED = 4
} retcon_peer_state;

typedef struct retcon_peer_stats {
  uint32_t size;               /* sizeof(retcon_peer_stats); set by retcon_peer_stats_init */
  uint32_t state;              /* retcon_peer_state */
  uint64_t ping_us;
  uint64_t jitter_us;
  uint32_t send_queue_length;  /* our frames the peer has not acknowledged */
  int32_t local_frames_ahead;  /* how far our frame is ahead of the peer's */
  int32_t remote_frames_ahead; /* the same, as the peer last reported it */
  uint64_t bytes_sent, datagrams_sent, bytes_received, datagrams_received;
  uint64_t dropped_truncated, dropped_oversized, dropped_bad_magic, dropped_bad_version,
      dropped_unknown_type, dropped_malformed, dropped_bad_nonce, dropped_replayed,
      dropped_out_of_window, dropped_wrong_state;
  uint64_t send_failures;
  uint64_t dropped_bad_checksum; /* garbled in transit (or forged) */
  /* Late-input detection (remote players; zero for spectators): input frames of the peer per
   * number of frames they arrived later than the network explains. Buckets: 0, 1-2, 3-4, 5-8,
   * 9-15, 16-31, 32-63, 64 and more. */
  uint64_t lateness_histogram[8];
  int32_t lateness_max_frames;   /* the worst seen */
  uint32_t late_input_events;    /* RETCON_EVENT_LATE_INPUTS raised for this peer */
  /* Both states on a desync (share_desync_states on this machine; zero otherwise and for
   * spectators): the peer's states handed to the game (RETCON_EVENT_DESYNC_STATES) and those
   * refused: larger than our desync_state_max_size; bytes that do not give the checksum the peer
   * announced or reported; not asked for (no notice, a third notice, a repeated frame, malformed,
   * or after the peer left); and notices whose state never started arriving within 10 s. */
  uint64_t desync_states_received;
  uint64_t desync_states_refused_too_large;
  uint64_t desync_states_refused_mismatch;
  uint64_t desync_states_refused_unsolicited;
  uint64_t desync_notices_expired;
} retcon_peer_stats;

RETCON_API retcon_result retcon_peer_stats_init(retcon_peer_stats* stats);

/* Numbers of the machine of remote `player`. RETCON_RESULT_NOT_FOUND for a local player (and
 * in local and sync-test sessions). */
RETCON_API retcon_result retcon_session_get_peer_stats(const retcon_session* session, int32_t player,
                                                       retcon_peer_stats* stats);
/* Datagrams a peer-to-peer or spectator session received from addresses that are not in it
 * (a stranger, a spoofer, a machine of another match), dropped unread. 0 for local and
 * sync-test sessions. */
RETCON_API retcon_result retcon_session_dropped_unknown_address(const retcon_session* session,
                                                                uint64_t* count);
/* Datagrams sent on a memory network to an address none of its endpoints has, dropped. */
RETCON_API retcon_result retcon_memory_network_dropped_unknown_address(const retcon_memory_network* network,
                                                                       uint64_t* count);
/* Numbers of spectator `index` (0..num_spectators-1) of a peer-to-peer session. */
RETCON_API retcon_result retcon_session_get_spectator_stats(const retcon_session* session,
                                                            uint32_t index, retcon_peer_stats* stats);

/* =============================================================================================
 * Checks: validation of every config kind, retcon's checksum of a confirmed frame, and the
 * desync comparisons a session made.
 */

/* As create would check them, with `*reason` (when `reason` is not NULL) set to a static English
 * sentence naming the bad field, NULL when valid: RETCON_RESULT_OK or INVALID_ARGUMENT. The
 * network checks do not need a transport. retcon_session_config_validate covers the shared
 * settings only; these cover the whole config of their kind. */
RETCON_API retcon_result retcon_sync_test_config_validate(const retcon_session_config* config,
                                                          const retcon_sync_test_config* sync_test,
                                                          const retcon_game_callbacks* callbacks,
                                                          const char** reason);
RETCON_API retcon_result retcon_p2p_config_validate(const retcon_session_config* config,
                                                    const retcon_p2p_config* p2p,
                                                    const retcon_game_callbacks* callbacks,
                                                    const char** reason);
RETCON_API retcon_result retcon_spectator_config_validate(const retcon_session_config* config,
                                                          const retcon_spectator_config* spectator,
                                                          const retcon_game_callbacks* callbacks,
                                                          const char** reason);

/* retcon's checksum (the game's checksum callback, else XXH3-64 of the saved bytes) of the state
 * `frame` starts from, once its inputs are all confirmed (frame <= confirmed frame + 1) and
 * while its saved state is still held (the last max_prediction + 2 frames or so; in sparse save
 * mode only the frames it saved). RETCON_RESULT_WRONG_STATE for a frame not confirmed yet (or
 * from inside a callback), RETCON_RESULT_NOT_FOUND when not held. */
RETCON_API retcon_result retcon_session_frame_checksum(retcon_session* session, int32_t frame,
                                                       uint64_t* checksum);
/* Peer checksum reports compared with ours so far: proof that desync detection ran. 0 for local,
 * sync-test and spectator sessions. */
RETCON_API retcon_result retcon_session_checksums_compared(const retcon_session* session,
                                                           uint64_t* count);

/* =============================================================================================
 * Replays (docs/REPLAY_FORMAT.md): record any session's confirmed inputs and checksums, load
 * and save them, play them back through the game's callbacks, sync-test them, verify them
 * against their recorded checksums and bisect to the first frame whose state differs.
 */
typedef struct retcon_replay retcon_replay;

/* Bits of retcon_replay_info.flags (the file header's flags). */
#define RETCON_REPLAY_GAME_CHECKSUM 1u /* checksums came from the game's checksum callback */
#define RETCON_REPLAY_STORES_STATES 2u /* some checkpoints hold the saved state */

typedef struct retcon_recording_config {
  uint32_t size;              /* sizeof(retcon_recording_config); set by its init */
  uint32_t frame_rate;        /* written to the file (default 60) */
  uint32_t checksum_interval; /* a checksum every this many frames; 0: none (default 1) */
  /* Keep the saved state on checksum frames that are multiples of this; 0: never (default
   * 60). Stored states are where bisect re-runs from and what a divergence report shows. */
  uint32_t state_interval;
  uint32_t reserve_frames;    /* memory reserved up front: no allocation up to this many frames */
  const uint8_t* user_data;   /* copied: game bytes that rebuild the starting state (seed...) */
  size_t user_data_size;      /* 0..65535 */
} retcon_recording_config;

RETCON_API retcon_result retcon_recording_config_init(retcon_recording_config* config);

/* Starts recording `session` (any kind), before its first advance (RETCON_RESULT_WRONG_STATE
 * after). Each retcon_session_advance_frame then moves the frames up to the confirmed frame
 * into the recording. Once per session. */
RETCON_API retcon_result retcon_session_start_recording(retcon_session* session,
                                                        const retcon_recording_config* config);
/* A new replay (destroy it) holding what was recorded so far. RETCON_RESULT_NOT_FOUND when the
 * session is not recording; the recording's own failure (RETCON_RESULT_SAVE_FAILED: a state
 * did not fit; RETCON_RESULT_INTERNAL_ERROR) when it broke, with `*out` NULL. */
RETCON_API retcon_result retcon_session_copy_recording(const retcon_session* session,
                                                       retcon_replay** out);
/* Writes what was recorded so far to `path` (results as for copy_recording, or IO_ERROR). */
RETCON_API retcon_result retcon_session_save_recording(const retcon_session* session,
                                                       const char* path);

/* Loads a replay from a file image (copied) or a file. A damaged image gives
 * RETCON_RESULT_CORRUPT_DATA (VERSION_MISMATCH for a newer format) and, when `error` is not
 * NULL, a NUL-terminated message saying what is wrong, cut to `error_capacity` bytes. */
RETCON_API retcon_result retcon_replay_load(const void* data, size_t size, retcon_replay** out,
                                            char* error, size_t error_capacity);
RETCON_API retcon_result retcon_replay_load_file(const char* path, retcon_replay** out,
                                                 char* error, size_t error_capacity);
/* The file image: `*length` is set to its size; it is written when `capacity` is enough
 * (else RETCON_RESULT_INVALID_ARGUMENT). `buffer` may be NULL to ask the size. */
RETCON_API retcon_result retcon_replay_serialize(const retcon_replay* replay, void* buffer,
                                                 size_t capacity, size_t* length);
RETCON_API retcon_result retcon_replay_save_file(const retcon_replay* replay, const char* path);
/* NULL is accepted. RETCON_RESULT_WRONG_STATE from inside a callback that retcon_replay_play,
 * _bisect or _sync_test is running on this replay (as retcon_replay_set_input and a second run
 * of the same replay are). */
RETCON_API retcon_result retcon_replay_destroy(retcon_replay* replay);

typedef struct retcon_replay_info {
  uint32_t size;              /* sizeof(retcon_replay_info); set by retcon_replay_info_init */
  uint32_t num_players;
  uint32_t input_size;
  uint32_t frame_rate;
  uint32_t checksum_interval;
  uint32_t flags;             /* RETCON_REPLAY_* bits */
  int32_t frame_count;        /* frames 0..frame_count-1 */
  uint32_t checkpoint_count;  /* recorded checksums */
  uint32_t stored_states;     /* checkpoints that hold a state */
  const uint8_t* user_data;   /* owned by the replay, valid until it is changed or destroyed */
  size_t user_data_size;
} retcon_replay_info;

RETCON_API retcon_result retcon_replay_info_init(retcon_replay_info* info);
RETCON_API retcon_result retcon_replay_get_info(const retcon_replay* replay, retcon_replay_info* info);
/* The inputs of `frame` (0..frame_count-1), pointing into the replay. RETCON_RESULT_NOT_FOUND
 * for another frame. */
RETCON_API retcon_result retcon_replay_get_inputs(const retcon_replay* replay, int32_t frame,
                                                  retcon_frame_inputs* out);
/* Replaces one player's input of one frame (`size` = input_size), e.g. to see what a changed
 * input does; the recorded checksums stay as they were. */
RETCON_API retcon_result retcon_replay_set_input(retcon_replay* replay, int32_t frame, int32_t player,
                                                 const void* input, size_t size);

typedef struct retcon_replay_checkpoint {
  int32_t frame;        /* the state this frame starts from (after frames 0..frame-1) */
  uint64_t checksum;
  const uint8_t* state; /* owned by the replay; NULL when not stored */
  size_t state_length;
} retcon_replay_checkpoint;

/* Checkpoint `index` (0..checkpoint_count-1), in frame order. */
RETCON_API retcon_result retcon_replay_get_checkpoint(const retcon_replay* replay, uint32_t index,
                                                      retcon_replay_checkpoint* out);

/* How to run a replay through a game. */
typedef struct retcon_replay_run_config {
  uint32_t size;           /* sizeof(retcon_replay_run_config); set by its init */
  uint64_t max_state_size; /* as the session's: 1..RETCON_MAX_STATE_SIZE (no default) */
  int32_t check_distance;  /* sync test: frames rolled back every frame, 1..64 (default 2) */
  int32_t from_frame;      /* bisect: start at the stored state nearest before it (default 0) */
  /* Optional: called every few hundred frames with the frames done and the total. */
  void* progress_user;
  void (*progress)(void* user, int32_t done, int32_t total);
} retcon_replay_run_config;

RETCON_API retcon_result retcon_replay_run_config_init(retcon_replay_run_config* config);

/* What a run found. Frames are RETCON_NULL_FRAME when they do not apply. The state pointers
 * are owned by the replay and valid until its next run or its destruction. */
typedef struct retcon_replay_report {
  uint32_t size;               /* sizeof(retcon_replay_report); set by retcon_replay_report_init */
  int32_t start_frame;         /* the frame the run started from */
  int32_t frames_played;       /* frames simulated (sync test: fed to the session) */
  uint32_t checksums_verified; /* recorded checksums compared and equal */
  int32_t last_good;           /* the last checksum frame that matched before first_bad */
  int32_t first_bad;           /* the first frame whose state differs from the recording */
  uint32_t exact;              /* 1: last_good == first_bad - 1, the frame is pinned */
  uint64_t expected, actual;   /* first_bad's recorded and replayed checksums */
  /* bisect: the replayed state first_bad starts from, and a reference: first_bad's recorded
   * state when stored (reference_is_recorded = 1), else the last good state. */
  const uint8_t* replayed_state;
  size_t replayed_state_length;
  const uint8_t* reference_state;
  size_t reference_state_length;
  int32_t reference_frame;
  uint32_t reference_is_recorded;
  /* sync test: the first frame whose re-simulation differed, with describe_state texts
   * (NULL without a describer; owned like the states). */
  int32_t check_distance;
  int32_t mismatch_frame;
  uint64_t mismatch_first, mismatch_resimulated;
  const char* mismatch_text_first;
  size_t mismatch_text_first_len;
  const char* mismatch_text_resimulated;
  size_t mismatch_text_resimulated_len;
  uint64_t rollbacks, frames_resimulated;
} retcon_replay_report;

RETCON_API retcon_result retcon_replay_report_init(retcon_replay_report* report);

/* Plays every frame from the game's current state (put it in the replay's starting state
 * first, from the user data) through the callbacks at full speed, comparing each recorded
 * checksum with the live state's; first_bad names the first that differs (play continues). */
RETCON_API retcon_result retcon_replay_play(retcon_replay* replay, const retcon_game_callbacks* callbacks,
                                            const retcon_replay_run_config* config,
                                            retcon_replay_report* report);
/* Finds the first frame whose state differs from the recording: starts from the stored state
 * nearest before config->from_frame (loaded through load_state; 0: the game's current state,
 * which must be the start), compares every recorded checksum and stops at the first that
 * differs, leaving the game in that replayed state. Exact with a checksum every frame, whatever
 * the state interval; with sparse checksums exact = 0 and the state differs somewhere in
 * (last_good, first_bad]. */
RETCON_API retcon_result retcon_replay_bisect(retcon_replay* replay, const retcon_game_callbacks* callbacks,
                                              const retcon_replay_run_config* config,
                                              retcon_replay_report* report);
/* Feeds the recorded inputs to a sync-test session (every frame: roll back check_distance
 * frames, re-simulate, compare) and verifies the recorded checksums on the way; stops at the
 * first mismatch of either kind (mismatch_frame: not deterministic; first_bad: differs from the
 * recording, e.g. a changed input or build). The game must be in the starting state. */
RETCON_API retcon_result retcon_replay_sync_test(retcon_replay* replay, const retcon_game_callbacks* callbacks,
                                                 const retcon_replay_run_config* config,
                                                 retcon_replay_report* report);

/* ---------------------------------------------------------------------------------------------
 * Game modules: how tools (retcon_replay) drive any game, the way libretro frontends load
 * cores. A module is a shared library exporting one C function named
 * RETCON_GAME_MODULE_ENTRY_POINT, of type retcon_game_module_entry, returning a static
 * description. A module needs only this header, not libretcon itself.
 */
#define RETCON_GAME_MODULE_ENTRY_POINT "retcon_game_module_v1"
#define RETCON_GAME_MODULE_ABI 1

typedef struct retcon_game_module {
  uint32_t size;             /* sizeof(retcon_game_module) */
  uint32_t abi;              /* RETCON_GAME_MODULE_ABI */
  const char* name;          /* static, e.g. "fighter" */
  uint32_t input_size;       /* bytes per player per frame */
  uint32_t min_players, max_players;
  uint64_t max_state_size;
  uint32_t frame_rate;
  /* Writes the user data of a new match (`players`, `seed`) to `out` (`capacity` bytes) and
   * returns its length (more than capacity: did not fit). */
  size_t (*new_match)(uint32_t players, uint64_t seed, uint8_t* out, size_t capacity);
  /* A game in the starting state `user_data` describes, with `players` players; fills
   * `callbacks` (already initialised with retcon_game_callbacks_init). NULL when the user data
   * is not this game's. */
  void* (*create)(const uint8_t* user_data, size_t user_data_size, uint32_t players,
                  retcon_game_callbacks* callbacks);
  void (*destroy)(void* game);
  /* Optional: a bot's input for `player` at the frame about to be simulated (recording). */
  void (*bot_input)(void* game, int32_t player, int32_t frame, uint8_t* out, size_t input_size);
} retcon_game_module;

typedef const retcon_game_module* (*retcon_game_module_entry)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RETCON_H */
