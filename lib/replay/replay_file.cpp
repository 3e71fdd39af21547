// Replay: the in-memory replay and its file image (docs/REPLAY_FORMAT.md). Parsing checks every
// length against what is left before reading it, so a truncated or corrupt file gives
// corrupt_data with a message saying what is wrong and where, never an out-of-bounds read.
#include <cstdio>
#include <cstring>
#include <new>

#include "core/checksum.h"
#include "replay/utf8_file.h"
#include "retcon/replay.h"

namespace retcon {
namespace {

constexpr uint8_t kMagic[8] = {'R', 'E', 'T', 'C', 'O', 'N', 'R', 'P'};
constexpr size_t kHeaderSize = 40;
constexpr size_t kTrailerSize = 8;
constexpr size_t kCheckpointFixed = 16;  // frame u32, checksum u64, state length u32

void put(std::vector<uint8_t>& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(uint8_t(v >> (8 * i)));
}

uint64_t get(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

// Reads fields in order; the first read past the end records what was being read.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool take(size_t n, const char* what, const uint8_t** out) {
    if (failed_) return false;
    if (n > size_ - pos_) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "truncated: %s needs %zu bytes at offset %zu, only %zu left", what, n, pos_,
                    size_ - pos_);
      error_ = buf;
      failed_ = true;
      return false;
    }
    *out = data_ + pos_;
    pos_ += n;
    return true;
  }
  uint64_t num(int bytes, const char* what) {
    const uint8_t* p = nullptr;
    return take(size_t(bytes), what, &p) ? get(p, bytes) : 0;
  }
  bool failed() const { return failed_; }
  size_t pos() const { return pos_; }
  const std::string& error() const { return error_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool failed_ = false;
  std::string error_;
};

Result fail(Result r, std::string* error, const std::string& message) {
  if (error) *error = "replay: " + message;
  return r;
}

}  // namespace

FrameInputs Replay::inputs(Frame frame) const noexcept {
  if (frame < 0 || frame >= frame_count()) return FrameInputs{nullptr, nullptr, header_.input_size, 0};
  FrameInputs in{inputs_.data() + size_t(frame) * input_bytes(), status_.data() + size_t(frame) * header_.num_players,
                 header_.input_size, header_.num_players};
  // Decisions are in frame order: binary search for the first of this frame.
  size_t lo = 0, hi = decisions_.size();
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (decisions_[mid].frame < frame) lo = mid + 1;
    else hi = mid;
  }
  uint32_t n = 0;
  for (size_t k = lo; k < decisions_.size() && decisions_[k].frame == frame && n < decision_views_.size(); ++k)
    decision_views_[n++] = Decision{decision_bytes_.data() + decisions_[k].offset, decisions_[k].size, decisions_[k].sender};
  if (n != 0) {
    in.decisions = decision_views_.data();
    in.decision_count = n;
  }
  return in;
}

void Replay::append_decision(Frame frame, PlayerIndex sender, const uint8_t* bytes, size_t size) {
  ReplayDecision d;
  d.frame = frame;
  d.sender = sender;
  d.offset = decision_bytes_.size();
  d.size = uint32_t(size);
  decision_bytes_.insert(decision_bytes_.end(), bytes, bytes + size);
  decisions_.push_back(d);
  header_.flags |= kReplayDecisions;
  // The views inputs() fills: as many as the busiest frame has.
  uint32_t same = 0;
  for (size_t k = decisions_.size(); k > 0 && decisions_[k - 1].frame == frame; --k) ++same;
  if (decision_views_.size() < same) decision_views_.resize(same);
}

const ReplayCheckpoint* Replay::checkpoint(Frame frame) const noexcept {
  // Checkpoints are in frame order: binary search.
  size_t lo = 0, hi = checkpoints_.size();
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (checkpoints_[mid].frame < frame) lo = mid + 1;
    else hi = mid;
  }
  return lo < checkpoints_.size() && checkpoints_[lo].frame == frame ? &checkpoints_[lo] : nullptr;
}

void Replay::append_frame(const uint8_t* inputs, const InputStatus* status) {
  inputs_.insert(inputs_.end(), inputs, inputs + input_bytes());
  status_.insert(status_.end(), status, status + header_.num_players);
}

void Replay::append_checkpoint(Frame frame, uint64_t checksum, const uint8_t* state, size_t length) {
  ReplayCheckpoint c;
  c.frame = frame;
  c.checksum = checksum;
  if ((header_.flags & kReplayStoresStates) != 0 && state != nullptr) {
    c.state_offset = states_.size();
    c.state_length = length;
    states_.insert(states_.end(), state, state + length);
  }
  checkpoints_.push_back(c);
}

void Replay::revise_frame(Frame frame, const uint8_t* inputs, const InputStatus* status) noexcept {
  if (frame < 0 || frame >= frame_count()) return;
  std::memcpy(inputs_.data() + size_t(frame) * input_bytes(), inputs, input_bytes());
  std::memcpy(status_.data() + size_t(frame) * header_.num_players, status, header_.num_players * sizeof(InputStatus));
}

void Replay::revise_checkpoint(Frame frame, uint64_t checksum, const uint8_t* state, size_t length) noexcept {
  for (ReplayCheckpoint& c : checkpoints_) {
    if (c.frame != frame) continue;
    c.checksum = checksum;
    // A stored state is replaced when it keeps its length, otherwise dropped (offsets are fixed).
    if (c.state_length != 0) {
      if (state != nullptr && length == c.state_length) std::memcpy(states_.data() + c.state_offset, state, length);
      else c.state_length = 0;
    }
    return;
  }
}

void Replay::reserve_checkpoints(size_t checkpoints, size_t state_bytes) {
  checkpoints_.reserve(checkpoints);
  states_.reserve(state_bytes);
}

void Replay::reserve_frames(size_t frames) {
  inputs_.reserve(frames * input_bytes());
  status_.reserve(frames * header_.num_players);
}

Result Replay::serialize(std::vector<uint8_t>* out) const {
  if (out == nullptr) return Result::invalid_argument;
  try {
    std::vector<uint8_t>& o = *out;
    o.clear();
    o.reserve(kHeaderSize + user_data_.size() + inputs_.size() + status_.size() + checkpoints_.size() * kCheckpointFixed +
              states_.size() + kTrailerSize);
    o.insert(o.end(), kMagic, kMagic + 8);
    put(o, kReplayVersion, 2);
    put(o, kHeaderSize, 2);
    put(o, header_.num_players, 1);
    put(o, 0, 1);
    put(o, header_.input_size, 2);
    put(o, header_.frame_rate, 2);
    put(o, 0, 2);
    put(o, header_.flags, 4);
    put(o, header_.checksum_interval, 4);
    put(o, uint32_t(frame_count()), 4);
    put(o, uint32_t(checkpoints_.size()), 4);
    put(o, uint32_t(user_data_.size()), 4);
    o.insert(o.end(), user_data_.begin(), user_data_.end());
    const Frame frames = frame_count();
    for (Frame f = 0; f < frames; ++f) {
      const uint8_t* in = inputs_.data() + size_t(f) * input_bytes();
      o.insert(o.end(), in, in + input_bytes());
      for (uint32_t k = 0; k < header_.num_players; ++k) o.push_back(uint8_t(status_[size_t(f) * header_.num_players + k]));
    }
    for (const ReplayCheckpoint& c : checkpoints_) {
      put(o, uint32_t(c.frame), 4);
      put(o, c.checksum, 8);
      put(o, uint32_t(c.state_length), 4);
      o.insert(o.end(), states_.begin() + ptrdiff_t(c.state_offset),
               states_.begin() + ptrdiff_t(c.state_offset + c.state_length));
    }
    if ((header_.flags & kReplayDecisions) != 0) {
      put(o, uint32_t(decisions_.size()), 4);
      for (const ReplayDecision& d : decisions_) {
        put(o, uint32_t(d.frame), 4);
        put(o, uint32_t(d.sender), 1);
        put(o, d.size, 1);
        o.insert(o.end(), decision_bytes_.begin() + ptrdiff_t(d.offset),
                 decision_bytes_.begin() + ptrdiff_t(d.offset + d.size));
      }
    }
    put(o, detail::xxh3_64(o.data(), o.size()), 8);
  } catch (const std::bad_alloc&) {
    return Result::out_of_memory;
  }
  return Result::ok;
}

Result Replay::write_file(const char* path) const {
  if (path == nullptr) return Result::invalid_argument;
  std::vector<uint8_t> image;
  if (Result r = serialize(&image); r != Result::ok) return r;
  std::FILE* f = detail::open_utf8_file(path, "wb");
  if (f == nullptr) return Result::io_error;
  const bool written = std::fwrite(image.data(), 1, image.size(), f) == image.size();
  const bool closed = std::fclose(f) == 0;
  return written && closed ? Result::ok : Result::io_error;
}

Result Replay::parse(const uint8_t* data, size_t size, Replay* out, std::string* error) {
  if (out == nullptr || (data == nullptr && size != 0)) return fail(Result::invalid_argument, error, "null argument");
  Reader in(data, size);
  const uint8_t* magic = nullptr;
  if (!in.take(8, "the magic", &magic)) return fail(Result::corrupt_data, error, in.error());
  if (std::memcmp(magic, kMagic, 8) != 0) return fail(Result::corrupt_data, error, "not a retcon replay (bad magic)");
  const uint32_t version = uint32_t(in.num(2, "the version"));
  const uint32_t header_size = uint32_t(in.num(2, "the header size"));
  if (in.failed()) return fail(Result::corrupt_data, error, in.error());
  if (version > kReplayVersion)
    return fail(Result::version_mismatch, error,
                "format version " + std::to_string(version) + " is newer than this reader (" +
                    std::to_string(kReplayVersion) + ")");
  if (version == 0) return fail(Result::corrupt_data, error, "format version 0 does not exist");
  if (header_size != kHeaderSize)
    return fail(Result::corrupt_data, error, "header size " + std::to_string(header_size) + ", expected 40");
  ReplayHeader h;
  h.num_players = uint32_t(in.num(1, "the player count"));
  const uint64_t reserved_byte = in.num(1, "a reserved byte");
  h.input_size = uint32_t(in.num(2, "the input size"));
  h.frame_rate = uint32_t(in.num(2, "the frame rate"));
  const uint64_t reserved_field = in.num(2, "a reserved field");
  // Reserved bytes are 0 (docs/REPLAY_FORMAT.md): two different files never parse alike.
  if (reserved_byte != 0 || reserved_field != 0) return fail(Result::corrupt_data, error, "reserved header bytes are not 0");
  h.flags = uint32_t(in.num(4, "the flags"));
  h.checksum_interval = uint32_t(in.num(4, "the checksum interval"));
  const uint64_t frames = in.num(4, "the frame count");
  const uint64_t checkpoints = in.num(4, "the checkpoint count");
  const uint64_t user_size = in.num(4, "the user data size");
  if (in.failed()) return fail(Result::corrupt_data, error, in.error());
  if (h.num_players < 1 || h.num_players > uint32_t(kMaxPlayers))
    return fail(Result::corrupt_data, error, "player count " + std::to_string(h.num_players) + " is not 1..8");
  if (h.input_size < 1 || h.input_size > kMaxInputSize)
    return fail(Result::corrupt_data, error, "input size " + std::to_string(h.input_size) + " is not 1..256");
  if (h.frame_rate < 1) return fail(Result::corrupt_data, error, "frame rate 0");
  if ((h.flags & ~kReplayKnownFlags) != 0)
    return fail(Result::corrupt_data, error, "unknown flag bits " + std::to_string(h.flags & ~kReplayKnownFlags));
  if (frames > uint64_t(INT32_MAX)) return fail(Result::corrupt_data, error, "frame count out of range");

  // The trailer covers every byte before it: check it before trusting any count below, but
  // after the header, so truncation inside the header gets the message above.
  if (size < kHeaderSize + kTrailerSize)
    return fail(Result::corrupt_data, error, "truncated: no room for the 8-byte file checksum");
  const uint64_t stored_hash = get(data + size - kTrailerSize, 8);

  try {
    Replay r(h);
    const uint8_t* p = nullptr;
    if (!in.take(size_t(user_size), "the user data", &p)) return fail(Result::corrupt_data, error, in.error());
    r.user_data_.assign(p, p + user_size);
    const uint64_t stride = uint64_t(h.num_players) * (h.input_size + 1);
    if (frames * stride > size) {
      return fail(Result::corrupt_data, error,
                  "truncated: " + std::to_string(frames) + " frames need " + std::to_string(frames * stride) +
                      " bytes, the file has " + std::to_string(size));
    }
    if (!in.take(size_t(frames * stride), "the frames", &p)) return fail(Result::corrupt_data, error, in.error());
    const size_t input_bytes = size_t(h.num_players) * h.input_size;
    r.inputs_.reserve(size_t(frames) * input_bytes);
    r.status_.reserve(size_t(frames) * h.num_players);
    for (uint64_t f = 0; f < frames; ++f) {
      const uint8_t* row = p + f * stride;
      r.inputs_.insert(r.inputs_.end(), row, row + input_bytes);
      for (uint32_t k = 0; k < h.num_players; ++k) {
        const uint8_t s = row[input_bytes + k];
        // Only confirmed (0) and disconnected (2): a replay never holds a predicted input.
        if (s != uint8_t(InputStatus::confirmed) && s != uint8_t(InputStatus::disconnected))
          return fail(Result::corrupt_data, error,
                      "frame " + std::to_string(f) + " player " + std::to_string(k) + ": bad input status " +
                          std::to_string(s));
        r.status_.push_back(InputStatus(s));
      }
    }
    if (checkpoints * kCheckpointFixed > size)
      return fail(Result::corrupt_data, error, "truncated: " + std::to_string(checkpoints) + " checkpoints do not fit");
    r.checkpoints_.reserve(size_t(checkpoints));
    Frame previous = kNullFrame;
    for (uint64_t c = 0; c < checkpoints; ++c) {
      const uint64_t frame = in.num(4, "a checkpoint frame");
      const uint64_t sum = in.num(8, "a checkpoint checksum");
      const uint64_t length = in.num(4, "a checkpoint state length");
      if (in.failed()) return fail(Result::corrupt_data, error, in.error());
      if (frame > frames || Frame(frame) <= previous)
        return fail(Result::corrupt_data, error,
                    "checkpoint " + std::to_string(c) + " has frame " + std::to_string(frame) +
                        " (out of order or past the last frame)");
      if (length != 0 && (h.flags & kReplayStoresStates) == 0)
        return fail(Result::corrupt_data, error, "checkpoint " + std::to_string(c) + " holds a state the flags do not announce");
      if (!in.take(size_t(length), "a checkpoint state", &p)) return fail(Result::corrupt_data, error, in.error());
      ReplayCheckpoint cp;
      cp.frame = Frame(frame);
      cp.checksum = sum;
      cp.state_offset = r.states_.size();
      cp.state_length = size_t(length);
      r.states_.insert(r.states_.end(), p, p + length);
      r.checkpoints_.push_back(cp);
      previous = Frame(frame);
    }
    if ((h.flags & kReplayDecisions) != 0) {
      const uint64_t count = in.num(4, "the decision count");
      if (in.failed()) return fail(Result::corrupt_data, error, in.error());
      if (count * 7 > size) return fail(Result::corrupt_data, error, "truncated: " + std::to_string(count) + " decisions do not fit");
      Frame last = 0;
      for (uint64_t k = 0; k < count; ++k) {
        const uint64_t frame = in.num(4, "a decision frame");
        const uint64_t sender = in.num(1, "a decision sender");
        const uint64_t length = in.num(1, "a decision size");
        if (in.failed()) return fail(Result::corrupt_data, error, in.error());
        if (frame >= frames || Frame(frame) < last || sender >= h.num_players || length < 1 || length > kMaxDecisionSize)
          return fail(Result::corrupt_data, error,
                      "decision " + std::to_string(k) + " (frame " + std::to_string(frame) + ", sender " +
                          std::to_string(sender) + ", " + std::to_string(length) +
                          " bytes) is out of order, past the last frame or out of range");
        if (!in.take(size_t(length), "a decision's bytes", &p)) return fail(Result::corrupt_data, error, in.error());
        r.append_decision(Frame(frame), PlayerIndex(sender), p, size_t(length));
        last = Frame(frame);
      }
    }
    if (size - in.pos() != kTrailerSize) {
      return fail(Result::corrupt_data, error,
                  size - in.pos() < kTrailerSize ? "truncated: the 8-byte file checksum is missing"
                                                 : std::to_string(size - in.pos() - kTrailerSize) +
                                                       " unexpected bytes before the file checksum");
    }
    if (detail::xxh3_64(data, size - kTrailerSize) != stored_hash)
      return fail(Result::corrupt_data, error, "file checksum mismatch: the file was damaged");
    *out = std::move(r);
  } catch (const std::bad_alloc&) {
    return fail(Result::out_of_memory, error, "out of memory");
  }
  if (error) error->clear();
  return Result::ok;
}

Result Replay::read_file(const char* path, Replay* out, std::string* error) {
  if (path == nullptr || out == nullptr) return fail(Result::invalid_argument, error, "null argument");
  std::FILE* f = detail::open_utf8_file(path, "rb");
  if (f == nullptr) return fail(Result::io_error, error, std::string("cannot open ") + path);
  std::vector<uint8_t> image;
  uint8_t buffer[65536];
  size_t n = 0;
  try {
    while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) image.insert(image.end(), buffer, buffer + n);
  } catch (const std::bad_alloc&) {
    std::fclose(f);
    return fail(Result::out_of_memory, error, "out of memory");
  }
  const bool bad = std::ferror(f) != 0;
  std::fclose(f);
  if (bad) return fail(Result::io_error, error, std::string("cannot read ") + path);
  return parse(image.data(), image.size(), out, error);
}

}  // namespace retcon
