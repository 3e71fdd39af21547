// Fighter: the whole game state in one plain struct, so save/load is a memcpy.
// Every field is a 32-bit integer: no pointers, no floats, no padding (checked below), so the
// bytes of two equal states are equal on every machine of the same endianness.
#pragma once

#include <cstdint>
#include <type_traits>

namespace fighter {

inline constexpr int kMinPlayers = 2;
inline constexpr int kMaxPlayers = 4;

// Positions and velocities are fixed point: 256 units per pixel.
inline constexpr int32_t kFixOne = 256;
constexpr int32_t px(int32_t pixels) { return pixels * kFixOne; }

inline constexpr int32_t kStageWidth = px(640);
inline constexpr int32_t kWallLeft = px(24);
inline constexpr int32_t kWallRight = kStageWidth - px(24);

inline constexpr int32_t kMaxHealth = 1000;
inline constexpr int32_t kRoundsToWin = 2;
inline constexpr int32_t kMaxRoundsPerMatch = 16;   // draws can repeat; the match ends by then
inline constexpr int32_t kIntroFrames = 60;          // "ready" before each round
inline constexpr int32_t kRoundFrames = 60 * 60;     // 60 s round timer at 60 fps
inline constexpr int32_t kRoundOverFrames = 90;
inline constexpr int32_t kMatchOverFrames = 180;     // then a new match starts

// No winner yet / a draw, in round_winner, match_winner and round_results.
inline constexpr int32_t kNoWinner = -2;
inline constexpr int32_t kDraw = -1;

enum MoveId : int32_t {
  kMoveIdle = 0,
  kMoveWalk,
  kMoveCrouch,
  kMoveJump,          // startup = squat, active = airborne
  kMoveLanding,       // the jump's recovery
  kMoveLight,
  kMoveHeavy,
  kMoveBlock,         // startup = raising the guard, active = while held
  kMoveBlockRelease,  // the block's recovery
  kMoveHitstun,
  kMoveBlockstun,
  kMoveKnockedOut,
  kMoveCount
};

enum RoundPhase : int32_t {
  kPhaseIntro = 0,
  kPhaseFight,
  kPhaseRoundOver,
  kPhaseMatchOver,
};

struct FighterPlayer {
  int32_t x, y;           // body centre / feet height above the floor; fixed point, y up
  int32_t vx, vy;         // fixed point per frame
  int32_t facing;         // +1 faces right, -1 faces left
  int32_t health;         // 0..kMaxHealth; 0 = knocked out
  int32_t move;           // MoveId
  int32_t move_frame;     // frames since the move started (0 on its first frame)
  int32_t stun;           // hitstun / blockstun frames left
  int32_t hit_mask;       // bit v: the current attack already hit player v
  int32_t buffered_move;  // attack pressed while busy, started when free (kMoveIdle = none)
  int32_t buffer_frames;  // frames the buffered attack stays valid
  uint32_t buttons;       // this frame's input bits
  uint32_t prev_buttons;  // last frame's, to see presses
  int32_t combo;          // hits taken in a row without recovering
  int32_t damage_dealt;   // this round
  int32_t round_wins;     // this match
  int32_t match_wins;
};

struct FighterState {
  int32_t frame;          // frames simulated since fighter_init
  int32_t players;        // kMinPlayers..kMaxPlayers
  uint32_t rng;           // xorshift32; advanced by hits only (never by effects/muting)
  int32_t phase;          // RoundPhase
  int32_t phase_timer;    // frames left in intro / round over / match over
  int32_t round;          // 1-based round number in the match
  int32_t round_timer;    // frames left in the fight
  int32_t round_winner;   // last finished round: player, kDraw, or kNoWinner
  int32_t match;          // 0-based number of the match being played
  int32_t match_winner;   // player, kDraw, or kNoWinner while undecided
  int32_t rounds_played;  // in this match; entries of round_results used
  int32_t round_results[kMaxRoundsPerMatch];  // winner of each round, kDraw for draws
  FighterPlayer p[kMaxPlayers];
  // Network matches: a round ends only by a timed decision (retcon send_decision, see
  // fighter_round.cpp), never on a frame that may still be rolled back. 0: it ends at once.
  int32_t decided_round_end;
  int32_t round_end_due_frame;  // the frame the round's end became due (0: not due), decided mode
};

// A timed decision the fighter understands: "round `round` of match `match` ends" (low bytes).
inline constexpr uint8_t kDecisionRoundEnd = 'R';
inline constexpr uint32_t kRoundEndDecisionSize = 3;

static_assert(std::is_trivially_copyable_v<FighterState>);
static_assert(std::is_standard_layout_v<FighterState>);
static_assert(std::has_unique_object_representations_v<FighterState>, "padding in FighterState");
static_assert(sizeof(FighterState) % 4 == 0);

}  // namespace fighter
