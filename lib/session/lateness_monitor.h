// Late-input detection (lag switches): how much later than the network explains each remote
// input frame arrived.
//
// The reference is our own clock. Time sync keeps every machine on the same frame at the same
// time, so a peer should send its input of frame f no later than when we started frame f (its
// input delay makes it earlier). `LocalTimeline` remembers when our frames started and when our
// own inputs first went out. For each newly arrived frame f of a peer the monitor takes
//   sent ~ arrival - one way (half the smoothed RTT),
// and the part of `sent - start(f)` the network does not explain becomes the lateness:
// - latency and jitter: the one-way trip is subtracted, twice the jitter and a frame allowed;
// - clock skew, the peer's input delay and batching: a per-peer baseline (the median of recent
//   lateness, clamped to 0..kMaxBaselineFrames so a peer cannot teach it a lag) is subtracted;
// - outages: a cut that hits both directions (a blackout, a dead router) delays the peer's
//   inputs, but it also stops ours reaching the peer. Two signs of one:
//   - the peer acknowledges our inputs; if it had not received our input A+1 (first sent at s)
//     when it sent this datagram, it was cut off from us from s on;
//   - the peer tells its latest silence from us (net/silence_log.h: "I heard nothing from you
//     for this long, until this long ago"). After a blackout its first datagram to get through
//     may leave only once it heard our resends, and then acknowledges everything: the note is
//     what says it was cut off too. Believed only within our own silence from the peer (while
//     we heard it, its datagrams were not lost, so the cut was not two-way).
//   Lateness accrued while cut off both ways is explained: the frames that started from a round
//   trip before the cut to its end are due one way after it ended (not earlier frames: a switch
//   that also cuts its incoming traffic for the end of a hold gets only that end excused).
// A lag switch cuts only the cheater's outgoing traffic: it keeps hearing us (its acknowledgements
// are current when it releases its inputs, and it tells no silence), so the whole hold counts.
// What it cannot catch: a modified client that holds back its acknowledgements or tells a
// silence it did not have looks like a two-way outage for as long as it really was silent (not
// longer, and not while it talks), and a peer whose game froze (a hitch) looks like a hold; the
// game decides what an event means.
//
// Sans-IO and allocation-free: the session feeds frames, times and acknowledgements.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>

#include "net/silence_log.h"
#include "retcon/types.h"

namespace retcon::detail {

// When our frames started and when our inputs of each frame first went out, for recent frames.
class LocalTimeline {
 public:
  // Frames remembered: far more than prediction window + input delay + a second of outage.
  static constexpr uint32_t kFrames = 512;

  void reset() noexcept { *this = LocalTimeline{}; }
  // Our frame is `frame` at `now_us`; the first call for a frame counts.
  void on_frame(Frame frame, uint64_t now_us) noexcept { remember(started_, frame, now_us, &newest_started_); }
  // Our input of `frame` went out for the first time.
  void on_sent(Frame frame, uint64_t now_us) noexcept { remember(sent_, frame, now_us, &newest_sent_); }
  // Every player's input of frames up to `frame` is here (our confirmed frame).
  void on_confirmed(Frame frame, uint64_t now_us) noexcept {
    // Every frame marked here is newer than every one marked before (and >= 0: the newest starts
    // at kNullFrame), so none is in the ring yet: no lookup, and the newest is `frame` after.
    // The session asks every poll: about half the time nothing new (one compare), else usually
    // one or two new frames (a datagram carries about two), marked without the loop.
    const Frame newest = newest_confirmed_;
    if (frame <= newest) return;
    const uint32_t step = uint32_t(frame) - uint32_t(newest);  // > 0 (unsigned: no overflow)
    if (step <= 2) {
      if (step == 2) confirmed_[uint32_t(frame - 1) % kFrames] = Mark{frame - 1, now_us};
      confirmed_[uint32_t(frame) % kFrames] = Mark{frame, now_us};
      newest_confirmed_ = frame;
      return;
    }
    const Frame from = std::max<Frame>(newest + 1, frame - int32_t(kFrames) + 1);
    for (Frame f = from; f <= frame; ++f) confirmed_[uint32_t(f) % kFrames] = Mark{f, now_us};
    newest_confirmed_ = frame;
  }

  // The link to peer `peer` was cut both ways between `from_us` and `to_us`.
  void on_outage(uint32_t peer, uint64_t from_us, uint64_t to_us) noexcept {
    outages_[next_outage_] = Outage{peer, from_us, to_us};
    next_outage_ = (next_outage_ + 1) % kOutages;
    latest_outage_end_ = std::max(latest_outage_end_, to_us);
  }
  // The latest end of an outage of another peer's link than `peer`'s that overlaps
  // [from_us, to_us] (0: none). Several links cut at once is the network, not one player.
  uint64_t others_cut_until(uint32_t peer, uint64_t from_us, uint64_t to_us) const noexcept {
    uint64_t until = 0;
    // The common case (asked for every judged frame): no outage ends that late.
    if (latest_outage_end_ < from_us || latest_outage_end_ == 0) return until;
    for (const Outage& q : outages_)
      if (q.to_us != 0 && q.peer != peer && q.from_us <= to_us && q.to_us >= from_us) until = std::max(until, q.to_us);
    return until;
  }

  Frame newest_started() const noexcept { return newest_started_; }
  // The latest end of an outage of any link (0: none yet).
  uint64_t latest_outage_end() const noexcept { return latest_outage_end_; }
  Frame newest_confirmed() const noexcept { return newest_confirmed_; }
  bool started_at(Frame frame, uint64_t* at) const noexcept { return lookup(started_, frame, at); }
  // started_at for a frame known to be >= 0.
  bool started_at_known(Frame frame, uint64_t* at) const noexcept {
    const Mark& m = started_[uint32_t(frame) % kFrames];
    if (m.frame != frame) return false;
    *at = m.at_us;
    return true;
  }
  bool sent_at(Frame frame, uint64_t* at) const noexcept { return lookup(sent_, frame, at); }
  // sent_at for a frame known to be >= 0.
  bool sent_at_known(Frame frame, uint64_t* at) const noexcept {
    const Mark& m = sent_[uint32_t(frame) % kFrames];
    if (m.frame != frame) return false;
    *at = m.at_us;
    return true;
  }
  bool confirmed_at(Frame frame, uint64_t* at) const noexcept { return lookup(confirmed_, frame, at); }
  // sent_at without the time, and confirmed_at, for a frame known to be >= 0.
  bool sent_known(Frame frame) const noexcept { return sent_[uint32_t(frame) % kFrames].frame == frame; }
  bool confirmed_at_known(Frame frame, uint64_t* at) const noexcept {
    const Mark& m = confirmed_[uint32_t(frame) % kFrames];
    if (m.frame != frame) return false;
    *at = m.at_us;
    return true;
  }

 private:
  struct Mark {
    Frame frame = kNullFrame;
    uint64_t at_us = 0;
  };
  static void remember(std::array<Mark, kFrames>& ring, Frame frame, uint64_t now_us, Frame* newest) noexcept {
    // The usual mark: the frame after the newest (every frame marked so far is older, so its
    // slot cannot hold it yet, and the newest is >= kNullFrame, so it is >= 0).
    if (frame > *newest) {
      ring[uint32_t(frame) % kFrames] = Mark{frame, now_us};
      *newest = frame;
      return;
    }
    if (frame < 0) return;
    Mark& m = ring[uint32_t(frame) % kFrames];
    if (m.frame == frame) return;
    m = Mark{frame, now_us};
    if (frame > *newest) *newest = frame;
  }
  static bool lookup(const std::array<Mark, kFrames>& ring, Frame frame, uint64_t* at) noexcept {
    if (frame < 0) return false;
    const Mark& m = ring[uint32_t(frame) % kFrames];
    if (m.frame != frame) return false;
    *at = m.at_us;
    return true;
  }
  struct Outage {
    uint32_t peer = 0;
    uint64_t from_us = 0, to_us = 0;
  };
  static constexpr uint32_t kOutages = 16;
  std::array<Outage, kOutages> outages_{};
  uint32_t next_outage_ = 0;
  uint64_t latest_outage_end_ = 0;  // the latest to_us of outages_
  std::array<Mark, kFrames> started_{}, sent_{}, confirmed_{};
  Frame newest_started_ = kNullFrame, newest_sent_ = kNullFrame, newest_confirmed_ = kNullFrame;
};

// Buckets of the lateness histogram (frames beyond what the network explains).
inline constexpr uint32_t kLatenessBuckets = 8;
// Upper bounds of buckets 0..6; bucket 7 holds everything above 63.
inline constexpr int32_t kLatenessBucketMax[kLatenessBuckets - 1] = {0, 2, 4, 8, 15, 31, 63};

struct LatenessNumbers {
  uint64_t histogram[kLatenessBuckets] = {};  // input frames per lateness bucket
  int32_t max_frames = 0;                     // the worst lateness seen
  uint32_t events = 0;                        // late_inputs events raised for this peer
};

// The median of the most recent lateness samples, clamped to 0..kMaxFrames: the per-peer
// baseline. Clamping is monotone, so the clamped median is the median of the clamped samples;
// those take kMaxFrames + 2 values, so a count per value keeps the median in a few instructions
// per sample (a selection over the whole window per judged frame was ~650 instructions per
// peer-frame of the P2P benchmark). The median is kept with the number of samples below it and
// moved a value at a time when a sample changes the counts (a walk over the counts from 0 was
// ~20 instructions per changed sample, and about half the samples change them). Most samples of
// a full window replace one of the same value (a steady peer): then nothing but the window's
// position moves.
class LatenessBaseline {
 public:
  static constexpr uint32_t kSamples = 32;
  static constexpr int32_t kMaxFrames = 6;

#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  void add(int32_t late) noexcept {
    const Sample v = Sample(std::clamp(late, 0, kMaxFrames + 1));
    const uint32_t at = next_;
    const Sample gone = window_[at];  // kEmpty until the window is full
    window_[at] = v;
    next_ = (at + 1) % kSamples;
    if (gone == v) return;  // the same counts, the same rank: the same median
    recount(gone, v);
  }
  // The lower-middle sample (index n / 2 of the last n = samples() in order), clamped to
  // 0..kMaxFrames; 0 before any sample.
  int32_t median() const noexcept { return median_; }
  // Samples in the window: those added, up to kSamples.
  uint32_t samples() const noexcept { return samples_; }

 private:
  // A sample as the window keeps it: a byte, but not a char type, so that storing one does not
  // make the compiler reload every other member (a char may alias anything).
  enum class Sample : uint8_t {};
  static constexpr Sample kEmpty = Sample(0xff);  // a window slot not written yet (no sample equals it)

  // `v` replaced `gone` (kEmpty: nothing, the window was not full): the counts change, and the
  // middle moves by a value at a time until it is the sample of rank n / 2 again.
  void recount(Sample gone_sample, Sample v_sample) noexcept {
    const uint32_t v = uint32_t(v_sample);
    const uint32_t middle = middle_;
    uint32_t below = below_ + (v < middle ? 1 : 0);
    if (gone_sample != kEmpty) [[likely]] {
      const uint32_t gone = uint32_t(gone_sample);
      below -= gone < middle ? 1 : 0;
      --counts_[gone];
      ++counts_[v];
      below_ = below;
      // A full window: the rank is kSamples / 2, and the middle usually stays.
      if (below <= kSamples / 2 && below + counts_[middle] > kSamples / 2) [[likely]] return;
    } else {
      ++samples_;  // the window was not full
      ++counts_[v];
      below_ = below;
    }
    move_middle();
  }
  void move_middle() noexcept {
    const uint32_t rank = samples_ / 2;
    // below_ <= rank < below_ + counts_[middle_] again (a middle exists: 0 are below value 0,
    // all samples() > rank are below value kMaxFrames + 2).
    while (below_ > rank) below_ -= counts_[--middle_];
    while (below_ + counts_[middle_] <= rank) below_ += counts_[middle_++];
    median_ = std::min<int32_t>(middle_, kMaxFrames);
  }

  std::array<Sample, kSamples> window_ = empty_window();
  std::array<uint32_t, kMaxFrames + 2> counts_{};
  uint32_t next_ = 0;
  uint32_t samples_ = 0;  // samples in the window (up to kSamples)
  uint32_t middle_ = 0;  // the sample of rank n / 2 (0..kMaxFrames + 1)
  uint32_t below_ = 0;   // samples in the window below middle_
  int32_t median_ = 0;   // middle_ clamped to kMaxFrames
  static constexpr std::array<Sample, kSamples> empty_window() noexcept {
    std::array<Sample, kSamples> w{};
    w.fill(kEmpty);
    return w;
  }
};

class LatenessMonitor {
 public:
  // Samples of the baseline median and the most it may explain.
  static constexpr uint32_t kBaselineSamples = LatenessBaseline::kSamples;
  static constexpr int32_t kMaxBaselineFrames = LatenessBaseline::kMaxFrames;
  // Samples needed before the monitor judges (start-up skew settles first).
  static constexpr uint32_t kMinSamples = 16;

  struct Link {
    Frame acked_by_peer;    // our newest input frame the peer acknowledged (kNullFrame: none)
    Frame last_local_sent;  // our newest input frame sent
    uint64_t datagrams_received;  // from the peer so far (did anything arrive since last time?)
    uint64_t rtt_us, jitter_us, frame_us;
    int32_t window;         // the prediction window (the peer's is assumed the same)
    uint32_t peer;          // this peer's index (LocalTimeline::on_outage)
    Silence heard_nothing;  // our latest silence from the peer (arrival times)
    PeerSilence told;       // the peer's latest note of its silence from us
  };

  // True when observe() with these values would change nothing and return 0: no datagram from
  // the peer since the last call (so no acknowledgement, silence note or round-trip sample
  // either), no new frame, the round trip as it was. The session asks this first, every tick
  // for every peer, so that the ticks where nothing arrived (about half at 2 peers) cost a few
  // compares instead of a judgement. Exact: every input observe() acts on is compared.
  bool quiet(Frame newest, uint64_t datagrams_received, Frame acked_by_peer, uint64_t rtt_us, uint64_t jitter_us,
             uint64_t told_arrived_at_us) const noexcept {
    return datagrams_received == datagrams_seen_ &&
           quiet_since_last_datagram(newest, acked_by_peer, rtt_us, jitter_us, told_arrived_at_us);
  }
  // The datagrams count observe() saw last: quiet() needs it equal first (the session compares
  // it alone first, so that a tick with an arrival loads nothing else before the judgement).
  uint64_t datagrams_seen() const noexcept { return datagrams_seen_; }
  // quiet() with the datagrams count known equal.
  bool quiet_since_last_datagram(Frame newest, Frame acked_by_peer, uint64_t rtt_us, uint64_t jitter_us,
                                 uint64_t told_arrived_at_us) const noexcept {
    // (Before the first observe(): no datagram yet, so no round trip equals the kNoRtt mark.)
    return rtt_us == rtt_us_ && jitter_us == jitter_us_ && acked_by_peer <= acked_ && (told_arrived_at_us == 0 || told_arrived_at_us == told_seen_) &&
           (newest == kNullFrame || (last_seen_ != kNullFrame && newest <= last_seen_));
  }

  // True when `told_arrived_at_us` (Link::told.arrived_at_us) is a silence note observe() has
  // not taken. When false, observe() reads neither Link::told nor Link::heard_nothing (it takes a
  // note once, on its first call that brings it), so a Link with both left empty ({}) is judged
  // the same: the session builds that one for the usual datagram, without copying the silences.
  bool new_silence_note(uint64_t told_arrived_at_us) const noexcept {
    return told_arrived_at_us != 0 && told_arrived_at_us != told_seen_;
  }

  // The peer's inputs now reach `newest` (frames after the last call arrived at `now_us`).
  // Returns the worst lateness in frames among them (0: none late, or nothing new). Always
  // inline: the session calls it from one place, and there the Link's fields need not be
  // stored to be read back.
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  int32_t observe(Frame newest, uint64_t now_us, const Link& current, const LocalTimeline& timeline) noexcept {
    int32_t worst = 0;
    // The usual call: the round trip, jitter and frame length of the last one, which its terms
    // were worked out of (steady_): the smaller of the current and the last is the current, and
    // nothing is stored. Three compares instead of the two minimums, their stores and the terms'
    // three compares (take_round_trip: a few calls in a hundred).
    if (!(steady_ && current.rtt_us == terms_.rtt && current.jitter_us == terms_.jitter &&
          current.frame_us == terms_.frame_us)) [[unlikely]] {
      if (current.frame_us == 0) return worst;
      take_round_trip(current.rtt_us, current.jitter_us, current.frame_us);
    }
    const uint64_t one_way = terms_.one_way;
    const uint64_t slack = terms_.slack;
    const uint64_t trip = terms_.trip;
    note_acks(current.acked_by_peer, now_us);
    // Evidence of a two-way outage: a datagram the peer sent just now (one way ago) does not
    // acknowledge an input of ours that should have reached it long before. It could not hear
    // us from then on, so its own datagrams were most likely cut too.
    const bool arrived = current.datagrams_received != datagrams_seen_;
    datagrams_seen_ = current.datagrams_received;

    const Frame unheard = current.acked_by_peer == kNullFrame ? 0 : current.acked_by_peer + 1;
    uint64_t unheard_at = 0;
    if (arrived && unheard <= current.last_local_sent && timeline.sent_at(unheard, &unheard_at) &&
        unheard_at + trip < now_us) {
      if (unheard_at > deaf_to_us_) deaf_from_us_ = unheard_at;  // a new outage
      deaf_to_us_ = std::max(deaf_to_us_, now_us - one_way);
      outage_ = {deaf_from_us_, deaf_to_us_};
    }
    if (new_silence_note(current.told.arrived_at_us)) {
      told_seen_ = current.told.arrived_at_us;
      note_told_silence(current, one_way, slack);
    }
    // observe_usual's outage bound, with this peer's outage and the terms as they are now (only
    // observe() moves them) and the other links' latest outage end as it is.
    clear_for_end_ = timeline.latest_outage_end();
    clear_after_ = clear_of_outages(timeline);
    if (newest == kNullFrame) return worst;
    // A very long gap (a peer back after a timeout) is judged by its newest frames only. (Also
    // asked from kNullFrame, where newest + 1 <= kFrames changes nothing, and for a newest
    // behind last_seen_, whose difference wraps: the max keeps last_seen_.)
    if (uint32_t(newest) - uint32_t(last_seen_) > LocalTimeline::kFrames)
      last_seen_ = std::max<Frame>(last_seen_, newest - int32_t(LocalTimeline::kFrames));
    // One loop for a monitor still learning its baseline (fewer than kMinSamples: its frames
    // are not judged) and one without that test per frame for the usual monitor (a baseline
    // never loses samples).
    if (baseline_.samples() >= kMinSamples) [[likely]] {
      worst = judge_frames_from<false>(last_seen_ + 1, newest, now_us, current.frame_us, current.window, current.peer,
                                       timeline);
    } else {
      worst = judge_frames_from<true>(last_seen_ + 1, newest, now_us, current.frame_us, current.window, current.peer,
                                      timeline);
      usual_ = steady_ && baseline_.samples() >= kMinSamples;
    }
    if (worst > numbers_.max_frames) numbers_.max_frames = worst;
    last_seen_ = std::max(last_seen_, newest);
    return worst;
  }

  // observe() for the usual call, given the Link's values one by one: the round trip, jitter
  // and frame length of the last call (steady_), the baseline learned, new frames within the
  // timeline's reach, no input of ours unheard a trip after it went out (no two-way outage
  // found on this call), and no new silence note (the caller asks new_silence_note first: this
  // call takes none, as observe() takes none from a Link without one). Then it does what
  // observe() does, puts what it returns in *worst and returns true; otherwise it changes
  // nothing and returns false. Every judging call had its fixed steps (the round trip's terms, the outage
  // tests, the learning test, the long-gap test, the outage told to the timeline): here they
  // are a few compares ahead of the frames, and the rare call goes to observe() out of line, so
  // that the usual one keeps few values live across the frame loop.
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  bool observe_usual(Frame newest, uint64_t now_us, Frame acked_by_peer, uint64_t datagrams_received,
                     uint64_t rtt_us, uint64_t jitter_us, uint64_t frame_us, Frame last_local_sent, int32_t window,
                     uint32_t peer, const LocalTimeline& timeline, int32_t* worst) noexcept {
    // (usual_: steady_ and the baseline learned; newest - last_seen_ - 1 below kFrames: a new
    // frame, no long gap.)
    if (!(usual_ && rtt_us == terms_.rtt && jitter_us == terms_.jitter && frame_us == terms_.frame_us &&
          uint32_t(newest) - uint32_t(last_seen_) - 1 < LocalTimeline::kFrames &&
          timeline.latest_outage_end() == clear_for_end_)) [[unlikely]]
      return false;
    // observe()'s two-way outage test, as there (nothing arrived: no test). An acknowledgement
    // below kNullFrame makes unheard negative, which observe() finds no mark for: here it may
    // find a ring's initial mark (frame -1) and give the call to observe(), which judges it the
    // same.
    if (datagrams_received != datagrams_seen_) [[likely]] {
      const Frame unheard = acked_by_peer + 1;
      uint64_t unheard_at = 0;
      if (unheard <= last_local_sent && timeline.sent_at_known(unheard, &unheard_at) &&
          unheard_at + terms_.trip < now_us) [[unlikely]]
        return false;
      datagrams_seen_ = datagrams_received;
    }
    note_acks(acked_by_peer, now_us);
    const int32_t judged = judge_frames_usual(newest, now_us, frame_us, window, peer, timeline);
    if (judged > numbers_.max_frames) [[unlikely]] numbers_.max_frames = judged;
    last_seen_ = newest;
    *worst = judged;
    return true;
  }

  // Judges only frames after `newest` from now on (a peer that rejoined: its frames so far came
  // while it caught up).
  void skip_to(Frame newest) noexcept { last_seen_ = std::max(last_seen_, newest); }

  // True when a late_inputs event is due for a worst lateness of `worst` frames: above the
  // threshold (0: never), and not within a second of the previous event (one hold, one event).
  bool should_report(int32_t worst, int32_t threshold, uint64_t now_us) noexcept {
    if (threshold <= 0 || worst < threshold) return false;
    if (reported_ && now_us < last_report_us_ + 1000000) return false;
    reported_ = true;
    last_report_us_ = now_us;
    ++numbers_.events;
    return true;
  }

  const LatenessNumbers& numbers() const noexcept { return numbers_; }
  // The latest two-way outage seen on this peer's link (to_us 0: none yet).
  struct Gap { uint64_t from_us = 0, to_us = 0; };
  Gap last_outage() const noexcept { return outage_; }

  static uint32_t bucket(int32_t excess) noexcept {
    for (uint32_t b = 0; b + 1 < kLatenessBuckets; ++b)
      if (excess <= kLatenessBucketMax[b]) return b;
    return kLatenessBuckets - 1;
  }

 private:
  // The round trip as it was before this poll: a burst of held datagrams carries echoes that
  // inflate it, and must not excuse itself. (The first call finds kNoRtt: the current ones.)
  // What follows from the round trip, jitter and frame length (terms_) is worked out again only
  // when one changed (the round trip and the jitter change in a few calls in a hundred: 4 and
  // 76 of 4,222 in the P2P benchmark). `frame_us` is not 0. Out of line, and given the three
  // values, not the Link: a Link passed to a call is built in memory first.
#if defined(__GNUC__)
  __attribute__((noinline))
#endif
  void take_round_trip(uint64_t rtt_us, uint64_t jitter_us, uint64_t frame_us) noexcept {
    const uint64_t rtt = std::min(rtt_us, rtt_us_);
    const uint64_t jitter = std::min(jitter_us, jitter_us_);
    rtt_us_ = rtt_us;
    jitter_us_ = jitter_us;
    if (rtt != terms_.rtt || jitter != terms_.jitter || frame_us != terms_.frame_us)
      terms_ = Terms::of(rtt, jitter, frame_us);
    // The next call with the same three takes the terms as they are.
    steady_ = rtt == rtt_us && jitter == jitter_us;
    usual_ = steady_ && baseline_.samples() >= kMinSamples;
  }

  // Judges frames first .. newest (first > last_seen_, newest - first < kFrames), arrived at
  // now_us: each one's lateness into the baseline and, once learned (kLearning: fewer than
  // kMinSamples before, its frames are not judged), into the histogram. Returns the worst
  // excess (0: none). Out of line: observe() and the usual judgement's rare frames call it.
  template <bool kLearning>
#if defined(__GNUC__)
  __attribute__((noinline))
#endif
  int32_t judge_frames_from(Frame first, Frame newest, uint64_t now_us, uint64_t frame_us, int32_t window,
                            uint32_t peer, const LocalTimeline& timeline) noexcept {
    int32_t worst = 0;
    const uint64_t one_way = terms_.one_way;
    const int32_t allowance = terms_.allowance;
    // The usual frame started well after every outage known (this peer's two-way ones and the
    // other links'): the outage checks of lateness_us cannot move its due time, and it is
    // judged without them, one compare instead of theirs (clear_of_outages says when exactly).
    const uint64_t clear_after = clear_of_outages(timeline);
    // f >= 0: last_seen_ >= kNullFrame.
    for (Frame f = first; f <= newest; ++f) {
      uint64_t start = 0;
      int32_t late = 0;
      if (timeline.started_at_known(f, &start)) [[likely]] {
        // lateness_us's first due time (wrapping as there): every later step only moves it later
        // or returns 0, so an arrival less than a frame after it is 0 frames late, judged without
        // the rest (the lookups of what the frame needed, the outages, the division): about a
        // third of the frames of a steady match. (An arrival before it is 0 too; the full
        // judgement finds that.)
        const uint64_t on_time = start + one_way;
        if (now_us - on_time >= frame_us) {
          const uint64_t us = lateness_us(f, start, now_us, window, peer, timeline, start > clear_after);
          late = int32_t(std::min<uint64_t>(us / frame_us, 100000));
        }
      } else if (f <= timeline.newest_started()) {
        continue;  // older than the timeline: not judged
      }
      // else: we have not reached f yet, the input is early.
      count_frame<kLearning>(late, allowance, worst);
    }
    return worst;
  }

  // A judged frame `late` frames late into the baseline and the histogram (the end of both
  // frame loops): the excess over the baseline's median and the allowance is what counts, and
  // the worst excess is the call's answer. While learning, the baseline's first samples count
  // nowhere else.
  template <bool kLearning>
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  void count_frame(int32_t late, int32_t allowance, int32_t& worst) noexcept {
    const int32_t excess = late - baseline_.median() - allowance;
    baseline_.add(late);
    if constexpr (kLearning) {
      if (baseline_.samples() < kMinSamples) return;
    }
    if (excess <= 0) [[likely]] {  // the usual frame: bucket 0, not the worst
      ++numbers_.histogram[0];
      return;
    }
    ++numbers_.histogram[bucket(excess)];
    if (excess > worst) worst = excess;
  }

  // judge_frames_from<false>(last_seen_ + 1, ...) for observe_usual: a frame due at start + one
  // way itself (due_on_time: the usual frame) is judged from that alone, without working its
  // due time out; at the first frame that is not, judge_frames_from takes the rest. The loop
  // keeps no due time and calls nothing, so that its values stay in registers.
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  int32_t judge_frames_usual(Frame newest, uint64_t now_us, uint64_t frame_us, int32_t window, uint32_t peer,
                             const LocalTimeline& timeline) noexcept {
    int32_t worst = 0;
    const uint64_t one_way = terms_.one_way;
    const int32_t allowance = terms_.allowance;
    const uint64_t clear_after = clear_after_;  // (the other links' outage end as when it was kept)
    for (Frame f = last_seen_ + 1; f <= newest; ++f) {
      uint64_t start = 0;
      int32_t late = 0;
      if (timeline.started_at_known(f, &start)) [[likely]] {
        const uint64_t on_time = start + one_way;
        const uint64_t past = now_us - on_time;  // (wraps for an arrival before on_time)
        if (past >= frame_us) {
          if (!(now_us > on_time && due_on_time(f, start, on_time, window, timeline, clear_after))) [[unlikely]]
            return std::max(worst, judge_frames_from<false>(f, newest, now_us, frame_us, window, peer, timeline));
          // (past >= frame_us: below two frames it is one frame late, without the division)
          late = past < terms_.two_frames ? 1 : int32_t(std::min<uint64_t>(past / frame_us, 100000));
        }
      } else if (f <= timeline.newest_started()) {
        continue;  // older than the timeline: not judged
      }
      count_frame<false>(late, allowance, worst);
    }
    return worst;
  }

  // True when lateness_us would find frame f (our frame f started at `start`) due at `on_time`
  // (start + one way) itself: clear of the outages, and neither what the frame needed (our
  // input's acknowledgement, every player's input at our confirmed frame) nor the rules that
  // judge it 0 move that. The usual frame of a steady match: the acknowledgement and our
  // confirmed frame came frames before it started. Each test is one compare with on_time, no
  // due time worked out; false leaves the frame to lateness_us, which judges it the same way
  // with every step (so a false here is never wrong, a true must be).
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  bool due_on_time(Frame f, uint64_t start, uint64_t on_time, int32_t window, const LocalTimeline& timeline,
                   uint64_t clear_after) const noexcept {
    if (start <= clear_after) return false;  // an outage near: its checks may move the due time
    const Frame needed = f - window - 1;
    if (needed < 0) return true;  // nothing needed
    uint64_t heard = 0;
    // Our input of `needed` sent (lateness_us judges 0 otherwise) and acknowledged by on_time:
    // the acknowledgement term, min(acknowledged, sent + ack_within), is no later.
    if (!timeline.sent_known(needed) || !acked_at(needed, &heard) || heard > on_time) return false;
    // Everyone's input of `needed` here by on_time less one way; or no mark of when, for a
    // frame confirmed (too old for the ring); one not confirmed yet is judged 0 by lateness_us.
    if (timeline.confirmed_at_known(needed, &heard)) return heard + terms_.one_way <= on_time;
    return needed <= timeline.newest_confirmed();
  }

  // How long after it was due the peer's input of frame f (our frame f started at `start`)
  // arrived, beyond what the network explains. Always inline: once per judged frame (every
  // remote frame), and as a call its eight arguments and saved registers cost ~30 instructions.
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  uint64_t lateness_us(Frame f, uint64_t start, uint64_t now_us, int32_t window, uint32_t peer,
                       const LocalTimeline& timeline, bool clear) const noexcept {
    const uint64_t rtt_us = terms_.rtt, one_way = terms_.one_way, slack = terms_.slack;
    // On time: sent as we started the frame (time sync keeps the clocks together), one way to go.
    uint64_t due = start + one_way;
    // The peer cannot simulate past its window: to reach the frame it gives f's input at, it
    // needed every player's input of f - window - 1 and could not send f before it had them.
    // Ours: its acknowledgement tells when it heard it (honest peers acknowledge at once).
    // The others': it heard them about when we did (we had them all at our confirmed frame).
    // A held acknowledgement must not excuse a held input, so ours counts only up to when an
    // acknowledgement could have come back after a resend or two.
    const Frame needed = f - window - 1;
    if (needed >= 0) [[likely]] {
      uint64_t heard = 0, sent = 0;
      if (!timeline.sent_at(needed, &sent)) [[unlikely]] return 0;  // not sent yet or too old to judge
      const uint64_t latest = sent + terms_.ack_within;  // rtt_us + slack + 3 frames: when due back acknowledged
      due = std::max(due, acked_at(needed, &heard) ? std::min(heard, latest) : latest);
      if (timeline.confirmed_at(needed, &heard)) [[likely]] due = std::max(due, heard + one_way);
      else if (needed > timeline.newest_confirmed()) return 0;
    }
    if (clear) [[likely]] return now_us > due ? now_us - due : 0;  // no outage near the frame (observe)
    // A two-way outage around the frame: the peer resends what was lost once it is over. Only
    // frames that started from a round trip (and the slack) before it: the peer sent earlier
    // ones while it still heard us (until 2 s before the cut counted once, which let a switch
    // that went deaf for the last moment of a 1 s hold pass).
    if (deaf_to_us_ != 0 && deaf_to_us_ + rtt_us + slack >= start && deaf_from_us_ <= start + rtt_us + slack)
      due = std::max(due, deaf_to_us_ + one_way + slack);
    // Other links cut around the frame: the peer may have been waiting for those players too.
    const uint64_t quiet = timeline.others_cut_until(peer, start > rtt_us ? start - rtt_us : 0, now_us);
    if (quiet != 0) due = std::max(due, quiet + one_way + slack);
    return now_us > due ? now_us - due : 0;
  }

  // A time after which a frame's start is clear of every outage lateness_us asks about: ours
  // with this peer needs deaf_to_us_ + rtt + slack >= start, the other links' need an outage
  // ending at or after start - rtt (LocalTimeline::others_cut_until's own shortcut). One bound
  // for both, the later end plus rtt + slack: a frame between the two bounds takes the full
  // checks too, which judge it the same. A sum that would overflow makes nothing clear (those
  // frames take the full checks, as before). Without any outage (end 0) every frame is clear;
  // the bound is then rtt + slack, and the few frames that start before it take the full
  // checks, which find nothing: one bound without a branch for the usual call.
  uint64_t clear_of_outages(const LocalTimeline& timeline) const noexcept {
    const uint64_t end = std::max(deaf_to_us_, timeline.latest_outage_end());
    // end + rtt + slack without wrapping (the sum of the three fits exactly when neither of
    // two additions in a row wraps, in either order). rtt + slack's is the terms' (clear_trip:
    // UINT64_MAX when it wraps, and end + UINT64_MAX wraps but for end 0, which is UINT64_MAX).
    const uint64_t sum = end + terms_.clear_trip;
    return sum < end ? UINT64_MAX : sum;
  }

  // The peer's note: it heard nothing from us for gap_us, until ago_us before it sent the
  // datagram (one way before it arrived). That is an outage both ways only while its own
  // datagrams were lost too, so the note is believed only within our silence from it: a claim
  // made while we heard it is no outage, and the excuse never reaches past the end of our
  // silence (the inputs that ended it are on time, later ones are judged). A lag switch that
  // withholds only its sends hears us all along and says so (no note, or one of another time).
  void note_told_silence(const Link& link, uint64_t one_way, uint64_t slack) noexcept {
    const PeerSilence& t = link.told;
    const Silence& quiet = link.heard_nothing;
    if (quiet.to_us == 0) return;
    // When it heard us again, on our clock (its datagram left one way before it arrived).
    const uint64_t heard_again = t.arrived_at_us - std::min(t.arrived_at_us, one_way + t.ago_us);
    // Its sends that were lost: those that would have arrived within our silence.
    const uint64_t lost_from = quiet.from_us > one_way + slack ? quiet.from_us - one_way - slack : 0;
    const uint64_t lost_to = (quiet.to_us > one_way ? quiet.to_us - one_way : 0) + slack;
    const uint64_t from = std::max(heard_again - std::min(heard_again, t.gap_us), lost_from);
    const uint64_t to = std::min(heard_again, lost_to);
    if (to <= from) return;
    if (from > deaf_to_us_) deaf_from_us_ = from;  // a new outage
    else deaf_from_us_ = std::min(deaf_from_us_, from);
    deaf_to_us_ = std::max(deaf_to_us_, to);
    outage_ = {deaf_from_us_, deaf_to_us_};
  }

  // When each of our frames the peer acknowledges since the last call was first acknowledged.
  void note_acks(Frame acked, uint64_t now_us) noexcept {
    // Nothing new (kNullFrame among it: acked_ starts there and only grows).
    if (acked <= acked_) return;
    // The usual call: one or two new frames (a datagram acknowledges about two), without the
    // loop. acked > acked_ >= kNullFrame, so both frames marked are >= 0.
    const uint32_t step = uint32_t(acked) - uint32_t(acked_);  // > 0 (unsigned: no overflow)
    if (step <= 2) {
      if (step == 2) acks_[uint32_t(acked - 1) % LocalTimeline::kFrames] = Ack{acked - 1, now_us};
      acks_[uint32_t(acked) % LocalTimeline::kFrames] = Ack{acked, now_us};
      acked_ = acked;
      return;
    }
    const Frame from = std::max<Frame>(acked_ + 1, acked - int32_t(LocalTimeline::kFrames) + 1);
    for (Frame k = from; k <= acked; ++k) acks_[uint32_t(k) % LocalTimeline::kFrames] = Ack{k, now_us};
    acked_ = acked;
  }
  bool acked_at(Frame frame, uint64_t* at) const noexcept {
    const Ack& a = acks_[uint32_t(frame) % LocalTimeline::kFrames];
    if (a.frame != frame) return false;
    *at = a.at_us;
    return true;
  }

  struct Ack {
    Frame frame = kNullFrame;
    uint64_t at_us = 0;
  };
  Frame last_seen_ = kNullFrame;
  Frame acked_ = kNullFrame;
  std::array<Ack, LocalTimeline::kFrames> acks_{};  // when each of our frames was first acknowledged
  // The round trip and jitter of the last call; kNoRtt before the first (a round trip is
  // measured only once datagrams arrived, and quiet() wants none to have arrived since).
  static constexpr uint64_t kNoRtt = UINT64_MAX;
  uint64_t rtt_us_ = kNoRtt, jitter_us_ = kNoRtt;
  // The terms observe() judges with, from the round trip and jitter it takes (the smaller of
  // the current and the last) and the frame length; frame_us 0 until the first judgement (a
  // Link with frame_us 0 is not judged).
  struct Terms {
    uint64_t rtt = 0, jitter = 0, frame_us = 0;
    uint64_t one_way = 0;     // rtt / 2
    uint64_t slack = 0;       // 2 x jitter + a frame
    uint64_t trip = 0;        // rtt + slack (wraps as the sums it stands for did)
    uint64_t ack_within = 0;  // trip + 3 frames: when an input of ours is due back acknowledged
    int32_t allowance = 0;    // 1 + 2 x jitter in whole frames
    uint64_t clear_trip = 0;  // rtt + slack, UINT64_MAX if that wraps (clear_of_outages)
    // 2 x frame_us; for a frame past half the 64-bit range it wraps below frame_us, where no
    // time past the due time by a frame is (the division judges those)
    uint64_t two_frames = 0;
    static Terms of(uint64_t rtt, uint64_t jitter, uint64_t frame_us) noexcept {
      Terms t{rtt, jitter, frame_us};
      t.one_way = rtt / 2;
      t.slack = 2 * jitter + frame_us;
      t.trip = rtt + t.slack;
      t.ack_within = t.trip + 3 * frame_us;
      t.allowance = int32_t(1 + 2 * jitter / frame_us);
      t.clear_trip = t.trip < rtt ? UINT64_MAX : t.trip;
      t.two_frames = 2 * frame_us;
      return t;
    }
  };
  Terms terms_;
  // terms_ are those of rtt_us_, jitter_us_ and a frame length not 0 (observe's usual call).
  bool steady_ = false;
  // steady_, and the baseline learned (observe_usual's first test).
  bool usual_ = false;
  uint64_t datagrams_seen_ = 0;
  uint64_t told_seen_ = 0;  // the arrival of the last silence note taken
  Gap outage_;
  uint64_t deaf_from_us_ = 0, deaf_to_us_ = 0;      // the latest two-way outage seen
  // clear_of_outages() while the timeline's latest outage end is clear_for_end_ (this peer's
  // outage and the terms as they are: observe() works it out again after it may move them;
  // observe_usual leaves a call to observe() when the end moved). At the start: no outage, no
  // terms, a bound of 0.
  uint64_t clear_after_ = 0, clear_for_end_ = 0;
  LatenessBaseline baseline_;
  bool reported_ = false;
  uint64_t last_report_us_ = 0;
  LatenessNumbers numbers_;
};

}  // namespace retcon::detail
