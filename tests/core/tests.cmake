retcon_add_test(core_tests
  ${CMAKE_CURRENT_LIST_DIR}/input_queue_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/state_ring_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rollback_driver_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rollback_property_test.cpp)
retcon_add_test(no_allocation_tests
  ${CMAKE_CURRENT_LIST_DIR}/no_allocation_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/support/alloc_counter.cpp)
