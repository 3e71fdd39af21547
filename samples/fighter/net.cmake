# Fighter over the network: FighterPeer (a machine of a match, on any retcon Transport), used by
# fighter_net (two processes over UDP), tools/retcon_netsim and the window's --net mode.
add_library(retcon_fighter_net STATIC fighter_peer.cpp net_connect.cpp net_frame_source.cpp net_overlay_feed.cpp)
target_include_directories(retcon_fighter_net PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(retcon_fighter_net PUBLIC retcon_fighter retcon_cpp PRIVATE retcon_warnings)
# --remote file:PATH opens through the library's own UTF-8 fopen (lib/replay/utf8_file.h).
target_include_directories(retcon_fighter_net PRIVATE ${PROJECT_SOURCE_DIR}/lib)

add_executable(fighter_net net_main.cpp)
target_link_libraries(fighter_net PRIVATE retcon_fighter_net retcon_cli retcon_warnings)
if(WIN32)  # timeBeginPeriod
  target_compile_definitions(fighter_net PRIVATE ${RETCON_WINDOWS_DEFINITIONS})
  target_link_libraries(fighter_net PRIVATE winmm)
endif()
if(RETCON_BUILD_TESTS)
  # Rounds ended by timed decisions and the adaptive delay, over a simulated network in-process.
  add_executable(fighter_net_tests tests/net_rounds_test.cpp)
  target_link_libraries(fighter_net_tests PRIVATE retcon_fighter_net GTest::gtest GTest::gtest_main retcon_warnings)
  include(GoogleTest)
  gtest_discover_tests(fighter_net_tests DISCOVERY_TIMEOUT 300)
  # Two real processes over loopback UDP for 3 s of real time. Both bind port 0 (see
  # run_net_pair.sh), so the test can run in parallel with anything.
  add_test(NAME fighter_net_two_processes
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/run_net_pair.sh $<TARGET_FILE_DIR:fighter_net> --seconds 3)
  set_tests_properties(fighter_net_two_processes PROPERTIES TIMEOUT 90
    PASS_REGULAR_EXPRESSION "OK: both peers agree")
  # A stranger's datagrams reach A first: A plays its configured peer all the same.
  add_test(NAME fighter_net_ignores_strangers
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/run_net_pair.sh $<TARGET_FILE_DIR:fighter_net> --seconds 2)
  set_tests_properties(fighter_net_ignores_strangers PROPERTIES TIMEOUT 90 ENVIRONMENT "NET_PAIR_STRANGER=1"
    PASS_REGULAR_EXPRESSION "OK: both peers agree")
  # --remote file:PATH in a folder named outside ASCII and the ANSI code page, with spaces: A
  # finds B's address there (cli/utf8_args.h, the library's UTF-8 fopen), on Windows too.
  add_test(NAME fighter_net_utf8_address_file
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/run_net_pair.sh $<TARGET_FILE_DIR:fighter_net> --seconds 2)
  set_tests_properties(fighter_net_utf8_address_file PROPERTIES TIMEOUT 90
    ENVIRONMENT "NET_PAIR_ADDRESS_FOLDER=Zoë Müller 対戦" PASS_REGULAR_EXPRESSION "OK: both peers agree")
endif()

# Late spectators and rejoin over real UDP, through the simulator's profiles (each process applies
# it to what it sends). Every process binds port 0 and the scripts hand the ports over through
# files and the processes' output lines, so these run in parallel with anything. In the Windows
# build every process is a fighter_net.exe under Wine (NET_RUN, below); the scripts' SIGKILL goes
# to the program under the wrapper (kill_process_tree, net_script_lib.sh).
if(RETCON_BUILD_TESTS)
  # A spectator joins 3 s into the match from a state player 0's machine sends (transatlantic:
  # ~100 ms RTT, 5% loss); both players and the spectator agree on the last frame's checksum.
  add_test(NAME fighter_net_late_spectator
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/run_net_spectate.sh $<TARGET_FILE_DIR:fighter_net> --join-at 3 --seconds 8)
  set_tests_properties(fighter_net_late_spectator PROPERTIES TIMEOUT 120
    PASS_REGULAR_EXPRESSION "OK: both players and the late spectator agree")
  # Player 1's process is killed (SIGKILL) 3 s in and started again with --rejoin on a new port
  # (transatlantic); player 0 hosts the rejoin. Both name the same live frame and checksum.
  add_test(NAME fighter_net_rejoin_after_kill
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/run_net_rejoin.sh $<TARGET_FILE_DIR:fighter_net> --kill 1 --kill-at 3
            --seconds 10 --disconnect-timeout 2000)
  # The same with player 0's process killed (the deciding machine: rounds and the adaptive delay),
  # over the mobile profile (heavy jitter, 3% loss, reordering, a 300 ms blackout every 10 s).
  add_test(NAME fighter_net_rejoin_player0_mobile
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/run_net_rejoin.sh $<TARGET_FILE_DIR:fighter_net> --kill 0 --kill-at 3
            --seconds 10 --disconnect-timeout 2000 --profile mobile)
  set_tests_properties(fighter_net_rejoin_after_kill fighter_net_rejoin_player0_mobile PROPERTIES TIMEOUT 120
    PASS_REGULAR_EXPRESSION "OK: player [01] rejoined")
  if(CMAKE_CROSSCOMPILING_EMULATOR)
    set_tests_properties(fighter_net_late_spectator fighter_net_rejoin_after_kill fighter_net_rejoin_player0_mobile
      PROPERTIES ENVIRONMENT "NET_RUN=${CMAKE_CROSSCOMPILING_EMULATOR} $<TARGET_FILE:fighter_net>")
  endif()
endif()

# Windows build: both processes run under Wine. With RETCON_LINUX_FIGHTER_NET (a Linux build's
# fighter_net; scripts/windows passes it), a Windows peer and a Linux peer play 600 frames
# (10 s) over loopback UDP through the simulator, each hosting once, and must agree on the
# checksum of the last frame.
if(RETCON_BUILD_TESTS AND CMAKE_CROSSCOMPILING_EMULATOR)
  set(windows_fighter_net "${CMAKE_CROSSCOMPILING_EMULATOR} $<TARGET_FILE:fighter_net>")
  set_property(TEST fighter_net_two_processes PROPERTY ENVIRONMENT
    "NET_PAIR_A=${windows_fighter_net}" "NET_PAIR_B=${windows_fighter_net}")
  set_property(TEST fighter_net_ignores_strangers APPEND PROPERTY ENVIRONMENT
    "NET_PAIR_A=${windows_fighter_net}" "NET_PAIR_B=${windows_fighter_net}")
  set_property(TEST fighter_net_utf8_address_file APPEND PROPERTY ENVIRONMENT
    "NET_PAIR_A=${windows_fighter_net}" "NET_PAIR_B=${windows_fighter_net}")
  set(RETCON_LINUX_FIGHTER_NET "" CACHE FILEPATH "fighter_net of a Linux build, to play the Windows one")
  if(RETCON_LINUX_FIGHTER_NET)
    add_test(NAME fighter_net_windows_hosts_linux
      COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/run_net_pair.sh $<TARGET_FILE_DIR:fighter_net> --seconds 10)
    set_property(TEST fighter_net_windows_hosts_linux PROPERTY ENVIRONMENT
      "NET_PAIR_A=${windows_fighter_net}" "NET_PAIR_B=${RETCON_LINUX_FIGHTER_NET}")
    add_test(NAME fighter_net_linux_hosts_windows
      COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/run_net_pair.sh $<TARGET_FILE_DIR:fighter_net> --seconds 10)
    set_property(TEST fighter_net_linux_hosts_windows PROPERTY ENVIRONMENT
      "NET_PAIR_A=${RETCON_LINUX_FIGHTER_NET}" "NET_PAIR_B=${windows_fighter_net}")
    set_tests_properties(fighter_net_windows_hosts_linux fighter_net_linux_hosts_windows PROPERTIES
      TIMEOUT 120 PASS_REGULAR_EXPRESSION "OK: both peers agree on frame 600:")
  endif()
endif()

# The window's --net mode uses the same FighterPeer.
if(TARGET fighter_sdl)
  target_link_libraries(fighter_sdl PRIVATE retcon_fighter_net)
endif()
if(RETCON_BUILD_TESTS AND TARGET fighter_sdl)
  find_program(XVFB_RUN xvfb-run)
  if(XVFB_RUN)
    add_test(NAME fighter_sdl_net_xvfb
      COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/run_sdl_net_pair.sh ${XVFB_RUN} $<TARGET_FILE_DIR:fighter_net>
              ${CMAKE_CURRENT_BINARY_DIR}/fighter_sdl_net.bmp)
    set_tests_properties(fighter_sdl_net_xvfb PROPERTIES TIMEOUT 120
      PASS_REGULAR_EXPRESSION "window and fighter_net played a networked match")
  endif()
endif()
