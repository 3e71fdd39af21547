retcon_add_test(replay_tests ${CMAKE_CURRENT_LIST_DIR}/replay_test.cpp)
