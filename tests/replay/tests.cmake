retcon_add_test(replay_tests ${CMAKE_CURRENT_LIST_DIR}/replay_test.cpp)
retcon_add_test(replay_allocation_tests
  ${CMAKE_CURRENT_LIST_DIR}/replay_allocation_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/support/alloc_counter.cpp)
