// A small game for tests whose state depends on the order and history of every input, with a
// save length that changes from frame to frame (as real emulators' do). It never allocates
// after construction, so allocation-counting tests can run it.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "retcon/callbacks.h"

namespace retcon::test {

struct TestGameState {
  uint64_t chain = 0x9e3779b97f4a7c15ull;  // folds every input in order (first: no padding)
  int32_t frame = 0;
  std::array<int32_t, 8> position{};
  uint8_t tail_length = 0;                 // 0..63: varies the save length
  std::array<uint8_t, 63> tail{};
};

class TestGame {
 public:
  TestGameState state;
  // Non-determinism to inject: when armed, re-simulated frames at or after this frame fold a
  // hidden counter into the state (as a game reading an unsaved global would).
  int32_t nondeterministic_from = -1;
  // A game that differs from its peers' copies: at this frame (every simulation of it) the
  // state is changed as a platform-dependent computation would.
  int32_t diverge_at = -1;
  uint64_t hidden_calls = 0;
  // When set, every frame advanced records the state hash it started from (index = frame).
  std::vector<uint64_t>* start_hashes = nullptr;
  uint64_t advances = 0, resimulated = 0, loads = 0, saves = 0;
  int32_t frame_errors = 0;  // advance/load called with a frame the state disagrees with
  std::vector<Event> events;  // reserved up front by tests that count allocations
  // Bytes appended to every save (a large state, as an emulator's RAM): filled from the chain,
  // checked at load. 0: none.
  size_t padding = 0;

  // The bytes of the last save of `capture_frame` (every later simulation of it saves again, so
  // once the frame is final this is its final state). -1: none.
  Frame capture_frame = -1;
  std::vector<uint8_t> captured;
  // The same for every frame that is a multiple of `capture_every` (0: none), indexed by frame /
  // capture_every: for tests that do not know beforehand which frame a desync is seen at.
  int32_t capture_every = 0;
  std::vector<std::vector<uint8_t>> captures;
  // desync_states events, with copies of what their pointers showed.
  struct DesyncStatesSeen {
    PlayerIndex player;
    Frame frame;
    std::vector<uint8_t> local, remote;
    bool has_local;
    std::string text_local, text_remote;
  };
  std::vector<DesyncStatesSeen> desync_states;
  // Events of the detected desyncs that carried our state's bytes.
  size_t desync_detected_with_state = 0;
  uint64_t checksum_salt = 0;  // Match: a checksum function that differs from the peers' (a liar)

  size_t save_state(Frame frame, uint8_t* buffer, size_t capacity) {
    ++saves;
    if (frame != state.frame) ++frame_errors;
    const size_t need = saved_size();
    if (need + padding > capacity) return need + padding;
    std::memcpy(buffer, &state, offsetof(TestGameState, tail));
    std::memcpy(buffer + offsetof(TestGameState, tail), state.tail.data(), state.tail_length);
    if (padding) std::memset(buffer + need, int(state.chain & 0xff), padding);
    if (frame == capture_frame) captured.assign(buffer, buffer + need + padding);
    if (capture_every > 0 && frame % capture_every == 0) {
      const size_t k = size_t(frame / capture_every);
      if (captures.size() <= k) captures.resize(k + 1);
      captures[k].assign(buffer, buffer + need + padding);
    }
    return need + padding;
  }
  void load_state(Frame frame, const uint8_t* buffer, size_t length) {
    ++loads;
    state = TestGameState{};
    std::memcpy(static_cast<void*>(&state), buffer, offsetof(TestGameState, tail));
    if (length != saved_size() + padding) ++frame_errors;
    std::memcpy(state.tail.data(), buffer + offsetof(TestGameState, tail), state.tail_length);
    if (padding && length == saved_size() + padding &&
        (buffer[saved_size()] != uint8_t(state.chain) || buffer[length - 1] != uint8_t(state.chain)))
      ++frame_errors;
    if (frame != state.frame) ++frame_errors;
  }
  void advance_frame(Frame frame, const FrameInputs& in, uint32_t flags) {
    if (frame != state.frame) ++frame_errors;
    if (start_hashes && size_t(frame) < start_hashes->size()) (*start_hashes)[size_t(frame)] = hash();
    ++advances;
    if (flags & kAdvanceResimulating) ++resimulated;
    step(in);
    if (frame == diverge_at) state.chain ^= 0xdeadull;
    if ((flags & kAdvanceResimulating) && nondeterministic_from >= 0 && frame >= nondeterministic_from) {
      state.chain ^= ++hidden_calls;
    }
  }
  // Event texts live only during the callback: the first event's are copied here.
  std::string first_text_local, first_text_remote;
  void on_event(const Event& e) {
    if (events.empty() && e.text_local) first_text_local.assign(e.text_local, e.text_local_len);
    if (events.empty() && e.text_remote) first_text_remote.assign(e.text_remote, e.text_remote_len);
    if (events.size() < events.capacity()) events.push_back(e);
    if (e.type == EventType::desync_detected && e.state_local) ++desync_detected_with_state;
    if (e.type == EventType::desync_states) {
      DesyncStatesSeen s{e.player, e.frame, {}, {}, e.state_local != nullptr, {}, {}};
      if (e.state_local) s.local.assign(e.state_local, e.state_local + e.state_local_len);
      if (e.state_remote) s.remote.assign(e.state_remote, e.state_remote + e.state_remote_len);
      if (e.text_local) s.text_local.assign(e.text_local, e.text_local_len);
      if (e.text_remote) s.text_remote.assign(e.text_remote, e.text_remote_len);
      desync_states.push_back(std::move(s));
    }
  }
  void describe_state(Frame frame, const uint8_t* buffer, size_t length, const TextSink& sink) {
    TestGameState s{};
    if (length >= offsetof(TestGameState, tail)) std::memcpy(static_cast<void*>(&s), buffer, offsetof(TestGameState, tail));
    const std::string text = "frame " + std::to_string(frame) + " chain " + std::to_string(s.chain) +
                             " p0 " + std::to_string(s.position[0]);
    sink.append(text.data(), text.size());
  }

  size_t saved_size() const { return offsetof(TestGameState, tail) + state.tail_length; }
  uint64_t hash() const;  // over the saved bytes' meaning, independent of padding
  void step(const FrameInputs& in);
};

inline uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

inline uint64_t TestGame::hash() const {
  uint64_t h = mix(uint64_t(state.frame), state.chain);
  for (int32_t p : state.position) h = mix(h, uint32_t(p));
  h = mix(h, state.tail_length);
  for (uint8_t i = 0; i < state.tail_length; ++i) h = mix(h, state.tail[i]);
  return h;
}

inline void TestGame::step(const FrameInputs& in) {
  for (uint32_t p = 0; p < in.player_count; ++p) {
    const uint8_t* bytes = in.player(PlayerIndex(p));
    for (uint32_t i = 0; i < in.input_size; ++i) state.chain = mix(state.chain, bytes[i] + 257u * p);
    // Position integrates a signed value of the first byte: history matters, not just the sum.
    state.position[p] = state.position[p] * 3 / 4 + int8_t(bytes[0]) + int32_t(state.chain & 3);
  }
  // Timed decisions change the state too: on which frame, in which order and how often they are
  // applied all show in the hash.
  for (uint32_t k = 0; k < in.decision_count; ++k) {
    const Decision& d = in.decisions[k];
    state.chain = mix(state.chain, 0xDEC1500ull + uint32_t(d.sender));
    for (uint32_t i = 0; i < d.size; ++i) state.chain = mix(state.chain, d.bytes[i]);
  }
  state.tail_length = uint8_t(state.chain % 64);
  for (uint8_t i = 0; i < state.tail_length; ++i) state.tail[i] = uint8_t(state.chain >> (i % 56));
  ++state.frame;
}

}  // namespace retcon::test
