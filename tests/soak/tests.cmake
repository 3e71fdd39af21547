# Soak: a long fighter match (4 peers, 2 spectators) over a bad simulated network, one process,
# virtual clock. `retcon_soak [frames] [seed]`; see docs/SOAK.md for the long run. It needs the
# fighter sample (samples/fighter), which is built unless RETCON_BUILD_SAMPLES is OFF.
if(RETCON_BUILD_SAMPLES)
  add_executable(retcon_soak
    ${CMAKE_CURRENT_LIST_DIR}/soak_main.cpp
    ${CMAKE_CURRENT_LIST_DIR}/live_heap.cpp)
  target_link_libraries(retcon_soak PRIVATE retcon_cpp retcon_fighter retcon_warnings)
  target_include_directories(retcon_soak PRIVATE ${PROJECT_SOURCE_DIR}/lib ${PROJECT_SOURCE_DIR}/tests
    ${PROJECT_SOURCE_DIR}/samples/fighter)
  # The short form, for every build (the ASan one included): 3,000 frames = 50 s of play.
  add_test(NAME soak_short COMMAND retcon_soak 3000 1)
  set_tests_properties(soak_short PROPERTIES PASS_REGULAR_EXPRESSION "\\| PASS" TIMEOUT 300)
  # Another seed, 3 minutes of play: release builds only (label slow, skipped under ASan).
  add_test(NAME soak_medium COMMAND retcon_soak 10800 2)
  set_tests_properties(soak_medium PROPERTIES PASS_REGULAR_EXPRESSION "\\| PASS" TIMEOUT 900 LABELS slow)
  # The same seed twice gives the same match, count for count.
  add_test(NAME soak_same_seed_same_run COMMAND ${CMAKE_COMMAND} -DSOAK=$<TARGET_FILE:retcon_soak>
    "-DRUNNER=${CMAKE_CROSSCOMPILING_EMULATOR}"  # Wine in the Windows build, empty on Linux
    -DFRAMES=1200 -DSEED=4 -P ${CMAKE_CURRENT_LIST_DIR}/same_run_twice.cmake)
  # The checks catch what they are for: one planted fault each, and the matching FAIL line.
  add_test(NAME soak_detects_desync COMMAND retcon_soak 1200 3 desync)
  set_tests_properties(soak_detects_desync PROPERTIES
    PASS_REGULAR_EXPRESSION "FAIL: desync_detected events.*FAIL: machine 1 frame [0-9]+ started from")
  add_test(NAME soak_detects_leak COMMAND retcon_soak 1200 3 leak)
  set_tests_properties(soak_detects_leak PROPERTIES PASS_REGULAR_EXPRESSION "FAIL: live heap grew after warm-up")
  add_test(NAME soak_detects_vanishing_datagrams COMMAND retcon_soak 1200 3 vanish)
  set_tests_properties(soak_detects_vanishing_datagrams PROPERTIES PASS_REGULAR_EXPRESSION "FAIL: datagrams 0->")
  # Regression: a partial partition (machines 0 and 1 cannot hear each other) made peers cut a
  # player at different frames, or at a frame older than their window, and desync. Fixed by the
  # cut only moving earlier in the connect status, checkpoints behind the state ring, and no
  # checksum exchange for frames whose cut is still propagating. Seeds 8 and 16 hit the races.
  # The same problem in its most common form: one peer crashes and the others cut its player
  # at frames one apart (`leave`; seeds 1, 4 and 7 used to fail).
  foreach(seed 1 8 16)
    add_test(NAME soak_partition_${seed} COMMAND retcon_soak 3000 ${seed} partition)
    set_tests_properties(soak_partition_${seed} PROPERTIES PASS_REGULAR_EXPRESSION "\\| PASS")
  endforeach()
  foreach(seed 1 4 7)
    add_test(NAME soak_peer_leaves_${seed} COMMAND retcon_soak 3000 ${seed} leave)
    set_tests_properties(soak_peer_leaves_${seed} PROPERTIES PASS_REGULAR_EXPRESSION "\\| PASS")
  endforeach()
endif()
