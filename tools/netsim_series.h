// retcon_netsim --series: the network-quality report of docs/NETWORKING.md. Five link
// conditions x input delays 0 and 2 x three seeds, each a 2-player fighter match on the
// virtual clock; prints one table row per condition and delay (means over the seeds).
#pragma once

#include <cstdint>

namespace retcon::tools {

// Returns 0 when every match finished with agreeing checksums, 1 otherwise.
int run_netsim_series(int32_t frames, int32_t max_prediction);

}  // namespace retcon::tools
