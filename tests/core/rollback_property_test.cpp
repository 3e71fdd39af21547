// The heart of the suite: whatever the players, input sizes, delays (changing mid-match),
// prediction windows, save modes and arrival schedules of remote inputs, the rolled-back
// session's state at every confirmed frame equals a plain lockstep run on the same inputs.
#include <random>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "core/checksum.h"
#include "support/driver_harness.h"
#include "support/input_streams.h"

namespace retcon::test {
namespace {

void keep_first_byte(void*, PlayerIndex, Frame, const uint8_t* last, uint8_t* out, size_t size) {
  for (size_t i = 0; i < size; ++i) out[i] = 0;
  if (last) out[0] = last[0];
}

RC_GTEST_PROP(RollbackProperty, ConfirmedStatesEqualLockstepReference, ()) {
  const uint32_t players = *rc::gen::weightedElement<uint32_t>({{1, 1u}, {3, 2u}, {3, 3u}, {3, 4u}});
  // Mostly at least one remote player; sometimes all local (couch play through the same core).
  const uint32_t locals = players == 1 ? 1u : *rc::gen::inRange(1u, players);
  const uint32_t input_size = *rc::gen::inRange(1u, 17u);
  const int32_t max_prediction = *rc::gen::inRange(0, 11);
  const SaveMode mode = *rc::gen::element(SaveMode::automatic, SaveMode::every_frame, SaveMode::sparse);
  const bool custom_predictor = *rc::gen::arbitrary<bool>();
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  const Frame frames = 300;
  std::mt19937_64 rng(seed);

  std::vector<std::vector<Bytes>> streams(players);
  for (auto& s : streams) s = player_stream(rng, size_t(frames) * 3 + 200, input_size);

  DriverHarness h;
  SessionConfig c;
  std::vector<uint64_t> hashes(size_t(frames) + 80, 0);
  h.game.start_hashes = &hashes;
  RC_ASSERT(h.init(players, locals, input_size, max_prediction, mode, 256) == Result::ok);
  if (custom_predictor) {
    // The harness's driver was built with the default predictor; rebuild with ours.
    c.num_players = players;
    c.input_size = input_size;
    c.max_prediction = max_prediction;
    c.max_state_size = 256;
    c.save_mode = mode;
    c.callbacks = bind_game(h.game);
    c.predictor.predict = keep_first_byte;
    RC_ASSERT(h.driver.init(c, max_prediction, mode) == Result::ok);
    for (uint32_t p = 0; p < players; ++p) h.driver.set_local(PlayerIndex(p), p < locals);
  }

  std::vector<LocalInputModel> model(players);
  std::vector<size_t> next_sample(players, 0);
  std::vector<Frame> delivered(players, 0);  // next remote frame to deliver
  for (uint32_t p = 0; p < locals; ++p) {
    const int32_t d = int32_t(rng() % 4);
    RC_ASSERT(h.driver.set_input_delay(PlayerIndex(p), d) == Result::ok);
  }

  bool settled = false;  // an advance ran since the last delivery, so any rollback happened
  for (int tick = 0; tick < frames * 30; ++tick) {
    const Frame now = h.driver.frame();
    bool all_delivered = true;
    for (uint32_t p = locals; p < players; ++p) all_delivered = all_delivered && delivered[p] > frames;
    if (now > frames && all_delivered && settled) break;
    for (uint32_t p = locals; p < players; ++p) {
      // Any number of frames may arrive this tick, in bursts, up to the window ahead of us.
      // Averaging just under one frame per tick, so remote players drift behind and catch up.
      int burst = rng() % 8 == 0 ? 4 : int(rng() % 2);
      while (burst-- > 0 && delivered[p] <= now + max_prediction + 4) {
        RC_ASSERT(h.driver.add_remote_input(PlayerIndex(p), delivered[p], streams[p][size_t(delivered[p])].data()) ==
                  Result::ok);
        ++delivered[p];
        settled = false;
      }
    }
    if (rng() % 25 == 0) {
      const PlayerIndex p = PlayerIndex(rng() % locals);
      RC_ASSERT(h.driver.set_input_delay(p, int32_t(rng() % 5)) == Result::ok);
    }
    for (uint32_t p = 0; p < locals; ++p) {
      const Bytes& sample = streams[p][next_sample[p]];
      const Result r = h.driver.add_local_input(PlayerIndex(p), sample.data(), sample.size());
      if (r == Result::input_already_added) continue;  // the frame stalled last tick
      RC_ASSERT(r == Result::ok);
      model[p].add(now, h.driver.input_delay(PlayerIndex(p)), sample);
      ++next_sample[p];
    }
    const Result r = h.driver.advance();
    RC_ASSERT(r == Result::ok || r == Result::prediction_limit);
    if (r == Result::ok) settled = true;
  }
  RC_ASSERT(h.driver.frame() > frames);
  RC_ASSERT(h.driver.confirmed_frame() >= frames - 1);
  RC_ASSERT(h.game.frame_errors == 0);

  // Lockstep reference on the same per-frame inputs.
  TestGame ref;
  std::vector<uint8_t> inputs(size_t(players) * input_size);
  std::vector<InputStatus> status(players, InputStatus::confirmed);
  std::vector<Bytes> ref_saves;
  for (Frame f = 0; f <= frames; ++f) {
    if (ref.hash() != hashes[size_t(f)]) {
      RC_FAIL("state at frame " + std::to_string(f) + " differs from lockstep; save mode " +
              std::to_string(int(mode)) + ", rollbacks " + std::to_string(h.driver.stats().rollbacks));
    }
    Bytes saved(256);
    saved.resize(ref.save_state(f, saved.data(), saved.size()));
    ref_saves.push_back(saved);
    for (uint32_t p = 0; p < players; ++p) {
      const Bytes& in = p < locals ? model[p].by_frame[size_t(f)] : streams[p][size_t(f)];
      std::copy(in.begin(), in.end(), inputs.begin() + ptrdiff_t(p * input_size));
    }
    const FrameInputs fi{inputs.data(), status.data(), input_size, players};
    ref.step(fi);
  }
  // Checksums the session computes for confirmed frames still in its ring match the reference.
  int compared = 0;
  for (Frame f = 0; f <= std::min(frames, h.driver.confirmed_frame() + 1); ++f) {
    uint64_t sum = 0;
    if (h.driver.checksum_of(f, &sum) != Result::ok) continue;
    RC_ASSERT(sum == detail::xxh3_64(ref_saves[size_t(f)].data(), ref_saves[size_t(f)].size()));
    ++compared;
  }
  RC_TAG(mode == SaveMode::sparse ? "sparse" : "every-frame");
  RC_CLASSIFY(h.driver.stats().rollbacks > 0, "rolled back");
  RC_CLASSIFY(compared > 0, "checksums compared");
}

}  // namespace
}  // namespace retcon::test
