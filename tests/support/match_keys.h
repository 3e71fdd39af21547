// Builds without libsodium (RETCON_WITH_SODIUM=OFF: e.g. a Windows build configured without
// RETCON_SODIUM_DIR; CI's Windows build has it) have no match keys: a key is
// refused with Result::unsupported. Tests of keyed behaviour skip there (ctest shows them as
// skipped, with this reason); CapiNetMatch.MatchKeyIsRefusedOnlyWithoutLibsodium checks the
// refusal itself.
#pragma once

#include <gtest/gtest.h>

#include "net/datagram_auth.h"

#define RETCON_SKIP_WITHOUT_MATCH_KEYS(keyed)                                               \
  do {                                                                                      \
    if ((keyed) && !::retcon::detail::match_keys_supported())                               \
      GTEST_SKIP() << "built without libsodium (RETCON_WITH_SODIUM=OFF): no match keys";   \
  } while (0)
