# Fighter over the network: FighterPeer (a machine of a match, on any retcon Transport), used by
# fighter_net (two processes over UDP), tools/retcon_netsim and the window's --net mode.
add_library(retcon_fighter_net STATIC fighter_peer.cpp net_connect.cpp net_frame_source.cpp)
target_include_directories(retcon_fighter_net PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(retcon_fighter_net PUBLIC retcon_fighter retcon_cpp PRIVATE retcon_warnings)

add_executable(fighter_net net_main.cpp)
target_link_libraries(fighter_net PRIVATE retcon_fighter_net retcon_warnings)
if(RETCON_BUILD_TESTS)
  # Two real processes over loopback UDP for 3 s of real time. Both bind port 0 (see
  # run_net_pair.sh), so the test can run in parallel with anything.
  add_test(NAME fighter_net_two_processes
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/run_net_pair.sh $<TARGET_FILE_DIR:fighter_net> --seconds 3)
  set_tests_properties(fighter_net_two_processes PROPERTIES TIMEOUT 90
    PASS_REGULAR_EXPRESSION "OK: both peers agree")
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
