// retcon_netsim: a whole fighter match of 2-4 bot players (and optional spectators) in one
// process, over simulated network conditions, on a virtual clock (it runs as fast as the CPU
// allows). Prints a report; with --report FILE.html also writes charts over time.
// Exit status: 0 every machine confirmed the last frame with the same checksum, 1 a desync, a
// checksum mismatch or a match that did not finish, 2 bad usage.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fighter_match.h"
#include "html_report.h"
#include "net_profiles.h"
#include "netsim_series.h"
#include "replay/utf8_file.h"
#include "utf8_args.h"

namespace {

using retcon::tools::FighterMatch;

struct Options {
  retcon::tools::FighterMatchOptions match;
  std::string profile = "broadband";
  const char* report = nullptr;
  const char* replay = nullptr;
  bool quiet = false;
  bool series = false;
  const char* row = nullptr;  // --series: only the conditions whose name contains this
  bool delay_given = false;   // --series: only that input delay
};

void usage() {
  std::fprintf(stderr,
               "usage: retcon_netsim [--peers 2..4] [--spectators N] [--frames N] [--seed S]\n"
               "                     [--profile lan|broadband|transatlantic|mobile|hell]\n"
               "                     [--latency-ms MS] [--jitter-ms MS] [--loss P] [--dup P] [--reorder P]\n"
               "                     [--blackout-every-ms MS] [--blackout-ms MS] [--blackout MS] [--max-prediction F]\n"
               "                     [--delay F] [--report FILE.html] [--replay FILE] [--quiet] [--inject-desync FRAME]\n"
               "       retcon_netsim --series [--frames N] [--max-prediction F] [--row TEXT] [--delay F]\n"
               "  --blackout MS: a blackout of MS every 8 s (from 3 s), unless --blackout-every-ms says otherwise.\n"
               "  --series: the network-quality report (docs/NETWORKING.md): five conditions x delays 0 and 2 x 3 seeds.\n"
               "  P is a probability (0.05) or a percentage (5%%). Custom flags override the profile's values.\n"
               "profiles:\n");
  for (const fighter::NamedProfile& p : fighter::kNetProfiles) std::fprintf(stderr, "  %-14s %s\n", p.name, p.description);
}

bool parse_probability(const char* text, double* out) {
  char* end = nullptr;
  double v = std::strtod(text, &end);
  if (end == text) return false;
  if (*end == '%') {
    v /= 100.0;
    ++end;
  }
  if (*end != '\0' || v < 0 || v > 1) return false;
  *out = v;
  return true;
}

bool parse(int argc, char** argv, Options* o) {
  // The profile first, so custom flags can override its fields wherever they appear.
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--profile") == 0) o->profile = argv[i + 1];
  const fighter::NamedProfile* named = fighter::find_net_profile(o->profile.c_str());
  if (named == nullptr) {
    std::fprintf(stderr, "unknown profile '%s'\n", o->profile.c_str());
    return false;
  }
  retcon::LinkProfile& l = o->match.link;
  l = fighter::to_link(*named);
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--quiet") == 0) {
      o->quiet = true;
      continue;
    }
    if (std::strcmp(a, "--series") == 0) {
      o->series = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    if (std::strcmp(a, "--profile") == 0) continue;
    if (std::strcmp(a, "--peers") == 0) o->match.players = std::atoi(v);
    else if (std::strcmp(a, "--spectators") == 0) o->match.spectators = std::atoi(v);
    else if (std::strcmp(a, "--frames") == 0) o->match.frames = std::atoi(v);
    else if (std::strcmp(a, "--seed") == 0) o->match.seed = std::strtoull(v, nullptr, 10);
    else if (std::strcmp(a, "--max-prediction") == 0) o->match.max_prediction = std::atoi(v);
    else if (std::strcmp(a, "--latency-ms") == 0) l.latency_us = std::strtoull(v, nullptr, 10) * 1000;
    else if (std::strcmp(a, "--jitter-ms") == 0) l.jitter_us = std::strtoull(v, nullptr, 10) * 1000;
    else if (std::strcmp(a, "--blackout-every-ms") == 0) l.blackout_period_us = std::strtoull(v, nullptr, 10) * 1000;
    else if (std::strcmp(a, "--blackout-ms") == 0) l.blackout_duration_us = std::strtoull(v, nullptr, 10) * 1000;
    else if (std::strcmp(a, "--blackout") == 0) {
      l.blackout_duration_us = std::strtoull(v, nullptr, 10) * 1000;
      if (l.blackout_period_us == 0) {
        l.blackout_period_us = 8000000;
        l.blackout_offset_us = 3000000;
      }
    }
    else if (std::strcmp(a, "--delay") == 0) {
      o->match.input_delay = std::atoi(v);
      o->delay_given = true;
    } else if (std::strcmp(a, "--row") == 0) o->row = v;
    else if (std::strcmp(a, "--loss") == 0) { if (!parse_probability(v, &l.loss)) return false; }
    else if (std::strcmp(a, "--dup") == 0) { if (!parse_probability(v, &l.duplicate)) return false; }
    else if (std::strcmp(a, "--reorder") == 0) { if (!parse_probability(v, &l.reorder)) return false; }
    else if (std::strcmp(a, "--report") == 0) o->report = v;
    else if (std::strcmp(a, "--replay") == 0) o->replay = v;
    else if (std::strcmp(a, "--inject-desync") == 0) o->match.diverge_at = std::atoi(v);
    else return false;
  }
  return o->match.players >= 2 && o->match.players <= 4 && o->match.spectators >= 0 && o->match.frames > 0 &&
         o->match.max_prediction >= 0 && o->match.max_prediction <= retcon::kMaxPredictionFrames &&
         o->match.input_delay >= 0 && o->match.input_delay <= 32 &&
         (l.blackout_period_us == 0 || l.blackout_duration_us < l.blackout_period_us);
}

std::string name_of(const FighterMatch& m, size_t i) {
  const int players = m.options().players;
  // Appended rather than "p" + std::to_string(...): GCC 12 at -O3 warns (-Wrestrict) on that
  // operator+ inside libstdc++, a known false positive that -Werror turns into a failure.
  std::string name = int(i) < players ? "p" : "spec";
  name += std::to_string(int(i) < players ? int(i) : int(i) - players);
  return name;
}

void progress(const FighterMatch& m, bool done) {
  retcon::Frame least = INT32_MAX;
  for (size_t i = 0; i < m.machines(); ++i) least = std::min(least, m.peer(i).recorder().recorded_frames());
  const double total = double(m.options().frames) + 1;
  const double f = std::min(1.0, double(least) / total);
  char bar[41];
  const int filled = int(f * 40);
  for (int i = 0; i < 40; ++i) bar[i] = i < filled ? '#' : '.';
  bar[40] = '\0';
  std::fprintf(stderr, "\r[%s] %3d%%  confirmed frame %d/%d  virtual %.1f s%s", bar, int(f * 100), least - 1,
               m.options().frames, double(m.now_us()) / 1e6, done ? "\n" : "");
  std::fflush(stderr);
}

}  // namespace

int main(int argc, char** argv) {
  retcon::cli::use_utf8_arguments(&argc, &argv);  // file names as typed, on Windows too
  Options opt;
  if (!parse(argc, argv, &opt)) {
    usage();
    return 2;
  }
  if (opt.series)
    return retcon::tools::run_netsim_series(opt.match.frames, opt.match.max_prediction, opt.row,
                                            opt.delay_given ? opt.match.input_delay : -1);
  FighterMatch match(opt.match);
  if (retcon::Result r = match.build(); r != retcon::Result::ok) {
    std::fprintf(stderr, "cannot build the match: %s\n", retcon::result_name(r));
    return 2;
  }
  // Generous: blackouts and time sync slow a match, but never by 4x plus a minute.
  const uint64_t max_ticks = uint64_t(opt.match.frames) * 4 + 3600;
  bool finished = false;
  while (!finished && match.ticks() < max_ticks) {
    finished = match.tick();
    if (!opt.quiet && match.ticks() % 60 == 0) progress(match, false);
  }
  if (!opt.quiet) progress(match, true);

  char link[256];
  fighter::describe_link(opt.match.link, link, sizeof link);
  const retcon::Frame last = opt.match.frames;
  const double seconds = double(match.now_us()) / 1e6;
  std::printf("retcon netsim report\n");
  std::printf("  %d players + %d spectators, profile %s (%s)\n", opt.match.players, opt.match.spectators,
              opt.profile.c_str(), link);
  std::printf("  frames %d, seed %" PRIu64 ", max prediction %d, virtual time %.1f s (%" PRIu64 " ticks)\n", last,
              opt.match.seed, opt.match.max_prediction, seconds, match.ticks());
  std::printf("  input delay %d, mean frame skew %.2f\n", opt.match.input_delay, match.mean_skew());
  std::printf("  %-6s %6s %9s %10s %10s %9s %7s %7s %8s %9s %9s %7s  %-16s\n", "peer", "frames", "rollbacks", "mean depth", "max depth",
              "stalls", "waits", "ping", "sent B/s", "recv B/s", "lost", "desyncs", "checksum@frame");
  std::vector<std::vector<std::string>> table = {{"peer", "frames", "rollbacks", "mean depth", "max depth", "stalls", "waits", "mean ping ms",
                                                  "sent B/s", "recv B/s", "desyncs", "checksum at frame " + std::to_string(last)}};
  bool ok = finished;
  bool have_reference = false;
  uint64_t reference = 0;
  for (size_t i = 0; i < match.machines(); ++i) {
    const fighter::FighterPeer& p = match.peer(i);
    const retcon::tools::MachineTotals& t = match.totals(i);
    uint64_t sum = 0;
    const bool have = p.confirmed_checksum(last, &sum);
    if (!have) ok = false;
    if (have && !have_reference) {
      reference = sum;
      have_reference = true;
    } else if (have && sum != reference) {
      ok = false;
    }
    if (p.desyncs() || p.errors() || p.recorder().error() != retcon::Result::ok) ok = false;
    const double mean = t.rollbacks ? double(t.frames_resimulated) / double(t.rollbacks) : 0.0;
    const double ping = t.ping_samples ? double(t.ping_sum_us) / double(t.ping_samples) / 1000.0 : 0.0;
    const double sent = double(p.bytes_sent()) / seconds, recv = double(p.bytes_received()) / seconds;
    const retcon::SimulatorStats& out = match.simulator(i).outgoing_stats();
    char checksum[32];
    if (have) std::snprintf(checksum, sizeof checksum, "%016" PRIx64, sum);
    else std::snprintf(checksum, sizeof checksum, "(not confirmed)");
    const int frames = p.running() ? p.session().current_frame() : 0;
    std::printf("  %-6s %6d %9" PRIu64 " %10.2f %10u %9" PRIu64 " %7" PRIu64 " %5.0fms %8.0f %9.0f %9" PRIu64 " %7" PRIu64 "  %s\n",
                name_of(match, i).c_str(), frames, t.rollbacks, mean, t.max_depth, t.stalls, t.waits, ping, sent, recv,
                out.dropped_loss + out.dropped_blackout, p.desyncs(), checksum);
    char buf[6][32];
    std::snprintf(buf[0], 32, "%.2f", mean);
    std::snprintf(buf[1], 32, "%.0f", ping);
    std::snprintf(buf[2], 32, "%.0f", sent);
    std::snprintf(buf[3], 32, "%.0f", recv);
    table.push_back({name_of(match, i), std::to_string(frames), std::to_string(t.rollbacks), buf[0], std::to_string(t.max_depth),
                     std::to_string(t.stalls), std::to_string(t.waits), buf[1], buf[2], buf[3], std::to_string(p.desyncs()), checksum});
  }
  if (!finished) std::printf("  result: FAILED: not every machine confirmed frame %d in %" PRIu64 " ticks\n", last, match.ticks());
  else if (ok) std::printf("  result: OK, all %zu machines agree at frame %d: %016" PRIx64 "\n", match.machines(), last, reference);
  else std::printf("  result: DESYNC or checksum mismatch%s\n",
                   opt.match.diverge_at >= 0 ? " (injected with --inject-desync on the last player machine)" : "");

  if (opt.replay) {
    const retcon::Result r = match.peer(0).recorder().write_file(opt.replay);
    std::printf("  replay of p0 (%d frames): %s %s\n", match.peer(0).recorder().recorded_frames(), opt.replay,
                retcon::result_name(r));
    if (r != retcon::Result::ok) ok = false;
  }
  if (opt.report) {
    retcon::tools::HtmlReport report;
    report.title = "retcon netsim: " + std::to_string(opt.match.players) + " players, profile " + opt.profile;
    report.notes.push_back(std::string("Link (each machine's outgoing traffic): ") + link + ".");
    report.notes.push_back("Frames " + std::to_string(last) + ", seed " + std::to_string(opt.match.seed) +
                           ", virtual time " + std::to_string(int(seconds)) + " s. Result: " +
                           (ok ? "all machines agree on the final checksum." : "DESYNC or mismatch."));
    report.table = table;
    report.times = match.sample_times();
    struct Metric {
      const char* title;
      const char* unit;
      double retcon::tools::MachineSample::*field;
      bool spectators;
    };
    const Metric metrics[] = {
        {"Ping (mean over remote machines)", "ms", &retcon::tools::MachineSample::ping_ms, false},
        {"Frame advantage over the first remote machine", "frames", &retcon::tools::MachineSample::advantage, false},
        {"Deepest rollback per half second", "frames", &retcon::tools::MachineSample::max_depth, false},
        {"Rollbacks per half second", "count", &retcon::tools::MachineSample::rollbacks, false},
        {"Stalled ticks per half second (prediction window full)", "ticks", &retcon::tools::MachineSample::stalls, true},
        {"Time-sync wait ticks per half second", "ticks", &retcon::tools::MachineSample::waits, false},
        {"Link in a blackout (share of the half second)", "share", &retcon::tools::MachineSample::dark, false},
        {"Bytes sent per second", "B/s", &retcon::tools::MachineSample::sent_bps, true},
        {"Bytes received per second", "B/s", &retcon::tools::MachineSample::received_bps, true},
    };
    for (const Metric& metric : metrics) {
      retcon::tools::Chart chart{metric.title, metric.unit, {}};
      for (size_t i = 0; i < match.machines(); ++i) {
        if (!metric.spectators && int(i) >= opt.match.players) continue;
        retcon::tools::ChartSeries s{name_of(match, i), {}};
        for (const auto& sample : match.samples(i)) s.values.push_back(sample.*metric.field);
        chart.series.push_back(std::move(s));
      }
      report.charts.push_back(std::move(chart));
    }
    const std::string html = retcon::tools::render_html(report);
    std::FILE* f = retcon::detail::open_utf8_file(opt.report, "wb");  // UTF-8 on Windows too
    const bool written = f && std::fwrite(html.data(), 1, html.size(), f) == html.size();
    if (f && std::fclose(f) != 0) ok = false;
    std::printf("  html report: %s %s\n", opt.report, written ? "written" : "NOT WRITTEN");
    if (!written) ok = false;
  }
  return ok ? 0 : 1;
}
