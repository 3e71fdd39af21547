// retcon_netsim --series: the network-quality report of docs/NETWORKING.md. Five link
// conditions x input delays 0 and 2 x three seeds, each a 2-player fighter match on the
// virtual clock; prints one table row per condition and delay (means over the seeds).
#pragma once

#include <cstdint>

namespace retcon::tools {

// Returns 0 when every match finished with agreeing checksums, 1 otherwise. `row` (null: all)
// keeps only the conditions whose name contains it, `only_delay` (-1: 0 and 2) one input delay:
// one row in a second or so, to iterate on it (scripts/netquality --row jitter --delay 2).
int run_netsim_series(int32_t frames, int32_t max_prediction, const char* row = nullptr,
                      int32_t only_delay = -1);

}  // namespace retcon::tools
