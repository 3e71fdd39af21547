retcon_add_test(session_tests
  ${CMAKE_CURRENT_LIST_DIR}/local_session_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sync_test_session_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/memory_budget_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/p2p_session_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/late_spectator_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rejoin_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rejoin_robustness_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rejoin_refusal_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rejoin_partial_notice_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rejoin_two_players_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/handshake_split_test.cpp
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
  ${CMAKE_CURRENT_LIST_DIR}/desync_states_refusals_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/late_cut_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/send_pass_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/usual_tick_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/usual_paths_review_test.cpp)
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
# Late-input detection over other seeds than CI's 24: honest peers under every profile to `hell`
# (seeds 1000-1119: 2-4 players, delay 0-2, 20 s each) never flagged, every 1 s lag switch
# (8 seeds per case) flagged within a second. ~5 s. It was a known gap until silence notes
# (docs/NETWORKING.md "Late inputs"): seeds 1050 and 1068 (mobile), 1053 and 1116 (hell) flagged
# honest peers after a two-way blackout (LatenessRegression.* keeps those four). Linux only: the
# Windows run has the 24-seed tests; this repeats them with more seeds.
if(NOT WIN32)
  add_test(NAME lateness_seed_sweep COMMAND session_tests "--gtest_filter=Profiles/HonestPeers.*:LagSwitch.*")
  set_tests_properties(lateness_seed_sweep PROPERTIES TIMEOUT 120 ENVIRONMENT
    "RETCON_LATENESS_FIRST_SEED=1000;RETCON_LATENESS_SEEDS=120;RETCON_LAG_SWITCH_SEEDS=8")
  # Under ASan+UBSan it is the same pure computation ~20x slower (it timed out at 120 s on a
  # loaded 2-core machine): the release run gates it, the sanitizer run has the 24-seed tests.
  if(RETCON_SANITIZE)
    set_tests_properties(lateness_seed_sweep PROPERTIES LABELS slow)
  endif()
endif()
# docs/PROTOCOL.md's state-transfer messages against the codec.
retcon_add_test(session_state_transfer_doc_test ${CMAKE_CURRENT_LIST_DIR}/state_transfer_doc_test.cpp)
target_compile_definitions(session_state_transfer_doc_test PRIVATE RETCON_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# The rejoin property (issue 11: a leaver that comes back, over the P2P property's matches;
# RapidCheck: Linux only). Both runs gate: a fixed seed, and a fresh seed each time (suffix
# .random_seed) that keeps exploring. Its known failures are fixed (seeds 5, 18 and 30 at
# max_success=1000; seeds 1-60 x 1,000 matches pass, docs/NETWORKING.md "Rejoin"): when it finds
# one again, give it the label known_gap while that failure is open.
# The two-leaver property's fresh-seed finds are fixed (RapidCheck seed 6006849875241409222: two
# hosts stamped two rejoins at once; 7170597072767107367: the property read a state its machine
# had not yet corrected); P2PRejoinProperty.TwoLeaversReproduce and .TwoLeaversReproduceStates
# replay their shrunk cases as plain tests, discovered with the others (a RapidCheck reproduce of a
# passing case reports a failure).
if(NOT WIN32)
  retcon_add_test(session_rejoin_property_test ${CMAKE_CURRENT_LIST_DIR}/p2p_rejoin_property_test.cpp
    ENVIRONMENT "RC_PARAMS=seed=1")
  gtest_discover_tests(session_rejoin_property_test DISCOVERY_TIMEOUT 300 TEST_SUFFIX .random_seed)
endif()
# The P2P session's drain of received inputs: the one-call drain and the ring runs against the
# frame-by-frame drain, through real endpoints.
retcon_add_test(session_input_drain_test ${CMAKE_CURRENT_LIST_DIR}/input_drain_test.cpp)
