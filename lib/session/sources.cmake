# Session sources (local, sync test, peer-to-peer, spectator).
