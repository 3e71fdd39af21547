retcon_add_test(session_tests
  ${CMAKE_CURRENT_LIST_DIR}/local_session_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sync_test_session_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/memory_budget_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/p2p_session_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/late_spectator_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rejoin_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rejoin_robustness_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/p2p_attack_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/p2p_property_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/p2p_udp_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/p2p_udp_flood_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/time_sync_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/lateness_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/adaptive_delay_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/decision_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/adaptive_delay_applied_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/p2p_liveness_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/desync_states_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/desync_states_refusals_test.cpp)
# The liveness property over random schedules (RapidCheck: Linux only). The label `known_gap`
# (scripts/test runs such tests without gating) is free again: issue 9's frozen-before-the-first-
# frame gap it found is fixed.
if(NOT WIN32)
  retcon_add_test(session_liveness_property_test ${CMAKE_CURRENT_LIST_DIR}/p2p_liveness_property_test.cpp)
endif()
# The decision property over random schedules (RapidCheck: Linux only). It gates, both runs: the
# splits it found (a peer holding its inputs to everyone for one that left; a survivor waiting for
# a leaver's last input taken for frozen; peers overdue after a slow first handshake) are fixed,
# and the cases it once found failing are replayed exactly by their own executable
# (session_decision_regression_test), in every build (the Windows one too). No open case is known:
# 500 runs with a fresh seed each (50,000 schedules) passed on 42fc760, as did 200 after 110173f.
# The first run keeps a fixed RapidCheck seed (RC_PARAMS=seed=1, the same 100 schedules every CI
# run): a change that breaks one of them fails every time, on every machine, not once in N runs.
# The second (suffix .random_seed) draws a fresh seed each time and keeps exploring; when it finds
# a case it prints RapidCheck's reproduce string, and the case goes into the regression tests.
if(NOT WIN32)
  retcon_add_test(session_decision_property_test ${CMAKE_CURRENT_LIST_DIR}/decision_property_test.cpp
    ENVIRONMENT "RC_PARAMS=seed=1")
  gtest_discover_tests(session_decision_property_test DISCOVERY_TIMEOUT 300 TEST_SUFFIX .random_seed)
endif()
retcon_add_test(session_decision_regression_test ${CMAKE_CURRENT_LIST_DIR}/decision_regression_test.cpp)
# Late-input detection over other seeds than CI's 24 (an open gap of issue 12, label known_gap:
# scripts/test runs it without gating; Linux only, as the Windows step gates on all it runs).
# Seeds 1000-1119 flag honest peers (protocol 7): under `mobile` seeds 1050 and 1068 (20-21
# frames), under `hell` 1053 and 1116 (45-51), all 2 players at delay 0, right after a two-way
# blackout: the peer's first datagram to get through was sent once it had heard our resends, so
# its acknowledgements look current, as a lag switch's do (docs/NETWORKING.md "Late inputs").
if(NOT WIN32)
  add_test(NAME lateness_seed_sweep COMMAND session_tests "--gtest_filter=Profiles/HonestPeers.*:LagSwitch.*")
  set_tests_properties(lateness_seed_sweep PROPERTIES LABELS known_gap TIMEOUT 300 ENVIRONMENT
    "RETCON_LATENESS_FIRST_SEED=1000;RETCON_LATENESS_SEEDS=120;RETCON_LAG_SWITCH_SEEDS=8")
endif()
# docs/PROTOCOL.md's state-transfer messages against the codec.
retcon_add_test(session_state_transfer_doc_test ${CMAKE_CURRENT_LIST_DIR}/state_transfer_doc_test.cpp)
target_compile_definitions(session_state_transfer_doc_test PRIVATE RETCON_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# The rejoin property (issue 11: a leaver that comes back, over the P2P property's matches;
# RapidCheck: Linux only). The gating run uses a fixed seed; a fresh seed each time (suffix
# .random_seed, label known_gap) keeps exploring the open cases (docs/NETWORKING.md "Rejoin").
if(NOT WIN32)
  retcon_add_test(session_rejoin_property_test ${CMAKE_CURRENT_LIST_DIR}/p2p_rejoin_property_test.cpp
    ENVIRONMENT "RC_PARAMS=seed=1")
  gtest_discover_tests(session_rejoin_property_test DISCOVERY_TIMEOUT 300 TEST_SUFFIX .random_seed
    PROPERTIES LABELS known_gap)
endif()
