// Fighter over the network: one machine of a match. FighterPeer owns the game, a retcon
// P2PSession (or spectator session) on a Transport the caller gives, a bot for the local player
// (or inputs set from outside, e.g. the keyboard), and a ReplayRecorder whose checksums of
// confirmed frames let peers compare their final states. The same class runs in-process
// matches (tools/retcon_netsim), two processes over UDP (fighter_net) and the window.
// It never sleeps or reads a clock: the caller passes the time to tick().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fighter_bot.h"
#include "fighter_game.h"
#include "retcon/p2p.h"
#include "retcon/replay.h"

namespace fighter {

struct PeerSetup {
  int players = 2;                       // 2..4
  int local_player = 0;                  // -1: a spectator of `host`
  uint32_t game_seed = 1;                // the match: every machine must use the same
  uint32_t bot_seed = 1;                 // the local bot's personality
  retcon::Transport* transport = nullptr;
  retcon::PeerAddress addresses[kMaxPlayers];  // remote players' machines (local: ignored)
  std::vector<retcon::PeerAddress> spectators; // machines this one streams to
  retcon::PeerAddress host;              // spectators: the player machine streaming to us
  uint64_t rng_seed = 1;                 // handshake nonces: differ per run and machine
  int32_t max_prediction = 8;
  int32_t input_delay = 0;
  uint32_t checksum_interval = 1;        // recorder checkpoints (1: every frame)
  bool store_states = false;             // keep states in the replay (for describe on divergence)
  uint64_t disconnect_timeout_us = 5000000;
  // Testing the tools: every simulation of this frame ends with player 0 one health point down,
  // on this machine only, as a platform-dependent computation would (a desync). -1: never.
  int32_t diverge_at = -1;
  // A round ends by a timed decision of the deciding machine (player 0's; once that player is
  // disconnected, the machine of the lowest player still in), sent once its end condition (KO,
  // time over) holds on a confirmed frame, so no machine ever shows a round end that a rollback
  // takes back. Every machine of the match (spectators too) must agree on it.
  bool decided_round_end = false;
  // Adaptive delay (retcon automatic mode): chosen and applied at one frame at match start and
  // after each round (with decided_round_end).
  bool adaptive_delay = false;
  // Both states on a desync (retcon share_desync_states): the machines exchange their states of
  // the desync frame and desync_diff() names the fields that differ.
  bool share_desync_states = false;
  // Late spectators and rejoin (docs/NETWORKING.md): a player machine with state_transfer sends
  // a spectator that joins a running match a recent state (and hosts rejoins); a spectator with
  // it asks for one. allow_rejoin: a machine whose player dropped may come back into the match
  // (every request is accepted: the sample has no lobby to ask). rejoining: this machine is one
  // that crashed and comes back into its old slot (needs state_transfer).
  bool state_transfer = false;
  bool allow_rejoin = false;
  bool rejoining = false;
  // The frame whose confirmed starting state confirmed_checksum() can give even when this
  // machine did not run the match from frame 0 (a spectator from a transferred state, a
  // rejoiner), whose replay recorder therefore has no checkpoints. -1: the recorder's only.
  retcon::Frame checksum_frame = -1;
  // One line per connection event worth telling a person (a peer dropped, a rejoin, a
  // spectator joined, running from a transferred state), as it happens. Null: none.
  void (*note)(void* context, const char* line) = nullptr;
  void* note_context = nullptr;
};

// What one tick did, for charts.
struct PeerTick {
  bool advanced = false;
  bool stalled = false;                  // advance refused (prediction window)
  bool waited = false;                   // skipped on time-sync advice (should_wait)
  bool caught_up = false;                // ran an extra frame after a stall (should_catch_up)
  uint32_t rollback_frames = 0;          // frames re-simulated by this tick's rollback
};

class FighterPeer {
 public:
  FighterPeer() = default;
  FighterPeer(const FighterPeer&) = delete;
  FighterPeer& operator=(const FighterPeer&) = delete;

  retcon::Result start(const PeerSetup& setup);

  // Send, receive and run one frame (two while catching up after a stall). The local input comes from the bot unless
  // set_manual_input() was called. Frames well after `last_frame` (two prediction windows) are
  // not simulated, but the session keeps polling so peers can still confirm.
  PeerTick tick(uint64_t now_us, retcon::Frame last_frame);
  // Only send and receive (between frames, to answer peers sooner).
  void poll(uint64_t now_us) {
    if (!session_) return;
    session_->poll(now_us);
    answer_rejoin_requests();
  }
  void set_manual_input(uint16_t bits) { manual_ = true; manual_bits_ = bits; }

  bool running() const { return session_ && session_->running(); }
  bool spectator() const { return setup_.local_player < 0; }
  const retcon::P2PSession& session() const { return *session_; }
  retcon::P2PSession& session() { return *session_; }
  const FighterGame& game() const { return game_; }
  const retcon::ReplayRecorder& recorder() const { return recorder_; }
  // True once tick() stops simulating (the frames well after `last_frame`, see tick()).
  bool past_last(retcon::Frame last_frame) const {
    return running() && session_->current_frame() > last_frame + 2 * setup_.max_prediction + 30;
  }
  // Checksum of confirmed frame `frame`'s starting state (the recorder's, or for
  // PeerSetup::checksum_frame this machine's own); false when not yet.
  bool confirmed_checksum(retcon::Frame frame, uint64_t* out) const;
  // The frame this machine started running from: 0, or a transferred state's frame (a late
  // spectator, a rejoiner); kNullFrame before it runs.
  retcon::Frame started_at() const { return started_at_; }
  // Rejoin: the frame `player` was live again from on this machine (player_rejoining), and
  // whether that frame was confirmed (player_rejoined); kNullFrame / false when none.
  retcon::Frame rejoined_at() const { return rejoined_at_; }
  bool rejoin_confirmed() const { return rejoin_confirmed_; }
  uint32_t spectators_joined() const { return spectators_joined_; }

  // Numbers over the remote machines (players only; spectators' traffic counted in bytes).
  uint64_t ping_us() const;              // mean over remote player machines
  int32_t frame_advantage() const;       // local_frames_ahead towards the first remote machine
  uint64_t bytes_sent() const;
  uint64_t bytes_received() const;

  uint64_t stalls() const { return stalls_; }
  uint64_t waits() const { return waits_; }
  uint64_t desyncs() const { return desyncs_; }
  retcon::Frame first_desync_frame() const { return first_desync_; }
  uint64_t interruptions() const { return interruptions_; }
  uint64_t disconnects() const { return disconnects_; }
  uint64_t errors() const { return errors_; }
  // For the overlay: the input delay in use (the last input_delay_applied event) and the last
  // late_inputs event (player -1: none).
  int32_t input_delay() const { return input_delay_; }
  retcon::PlayerIndex late_player() const { return late_player_; }
  int32_t late_frames() const { return late_frames_; }
  retcon::Frame late_at() const { return late_at_; }
  uint32_t rounds_decided() const { return rounds_decided_; }
  // Every input_delay_applied event, in order: the frame the delay changed at (the agreed one)
  // and the new delay. The automatic mode chooses at match start and between rounds.
  struct DelayApplied {
    retcon::Frame frame;
    int32_t delay;
  };
  const std::vector<DelayApplied>& delays_applied() const { return delays_applied_; }
  // The player whose machine decides round ends: the lowest one this machine has not been told
  // is disconnected (the agreed disconnected event). Two machines may briefly both decide (one
  // that has not heard of its own cut yet): a round-end decision names its round and match, so
  // the first that applies ends it and a second one is ignored, on every machine alike; a
  // decision of a player cut before its frame applies nowhere.
  int deciding_player() const;
  // share_desync_states: the fields our state and a peer's differed in at the desync frame
  // ("p0.health 1000 vs 999": ours first), from the first desync_states event; empty before.
  const std::string& desync_diff() const { return desync_diff_; }
  retcon::Frame desync_diff_frame() const { return desync_diff_frame_; }

 private:
  // The game as the session sees it: FighterGame plus an on_event that reaches this peer.
  struct Hooked {
    FighterGame* game;
    FighterPeer* peer;
    size_t save_state(retcon::Frame f, uint8_t* b, size_t c) { return game->save_state(f, b, c); }
    void load_state(retcon::Frame f, const uint8_t* b, size_t n) { game->load_state(f, b, n); }
    void advance_frame(retcon::Frame f, const retcon::FrameInputs& in, uint32_t flags) {
      if (peer->started_at_ == retcon::kNullFrame) peer->started_at_ = f;
      if (f == peer->setup_.checksum_frame) peer->take_checksum(f);
      game->advance_frame(f, in, flags);
      if (f == peer->setup_.diverge_at) game->state().p[0].health -= 1;
    }
    void describe_state(retcon::Frame f, const uint8_t* b, size_t n, const retcon::TextSink& s) {
      game->describe_state(f, b, n, s);
    }
    uint64_t checksum(retcon::Frame f, const uint8_t* b, size_t n) { return game->checksum(f, b, n); }
    void on_event(const retcon::Event& e) { peer->on_event(e); }
  };
  void on_event(const retcon::Event& e);
  void note(const char* format, ...);
  void take_checksum(retcon::Frame frame);  // of the state `frame` starts from (PeerSetup::checksum_frame)
  void answer_rejoin_requests();
  void note_started();
  void decide_round_end();
  retcon::Result run_frame();  // the local input (once per frame), then advance_frame

  PeerSetup setup_;
  FighterGame game_;
  Hooked hooked_{&game_, this};
  std::unique_ptr<FighterBot> bot_;
  retcon::ReplayRecorder recorder_;
  std::unique_ptr<retcon::P2PSession> session_;
  bool manual_ = false;
  uint16_t manual_bits_ = 0;
  retcon::Frame input_given_for_ = retcon::kNullFrame;
  uint64_t waits_ = 0;
  uint64_t stalls_ = 0, desyncs_ = 0, interruptions_ = 0, disconnects_ = 0, errors_ = 0;
  retcon::Frame first_desync_ = retcon::kNullFrame;
  std::string desync_diff_;
  retcon::Frame desync_diff_frame_ = retcon::kNullFrame;
  int32_t input_delay_ = 0;
  retcon::PlayerIndex late_player_ = -1;
  int32_t late_frames_ = 0;
  retcon::Frame late_at_ = retcon::kNullFrame;
  int32_t decided_round_ = 0, decided_match_ = -1;  // the last round end this machine sent
  uint32_t rounds_decided_ = 0;
  std::vector<DelayApplied> delays_applied_;
  bool gone_[kMaxPlayers] = {};  // disconnected events seen, by player
  bool rejoin_asked_[kMaxPlayers] = {};  // rejoin_requested seen, not answered yet
  std::vector<uint8_t> checksum_state_;  // save_state of checksum_frame (allocated at start)
  uint64_t own_checksum_ = 0;            // of the latest simulation of checksum_frame
  bool own_checksum_taken_ = false, own_checksum_final_ = false;
  retcon::Frame started_at_ = retcon::kNullFrame;  // the first frame simulated
  bool noted_running_ = false;
  retcon::Frame rejoined_at_ = retcon::kNullFrame;
  bool rejoin_confirmed_ = false;
  uint32_t spectators_joined_ = 0;
};

}  // namespace fighter
