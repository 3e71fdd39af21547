# Limits: the README's limits table, each at the limit (works) and one past it (a clear error),
# and out of memory during session creation (every allocation failing in turn).
retcon_add_test(limits_tests ${CMAKE_CURRENT_LIST_DIR}/limits_test.cpp)
target_link_libraries(limits_tests PRIVATE retcon)
retcon_add_test(out_of_memory_tests
  ${CMAKE_CURRENT_LIST_DIR}/out_of_memory_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/failing_alloc.cpp)
target_link_libraries(out_of_memory_tests PRIVATE ${RETCON_C_LIBRARY_FOR_TESTS} retcon_c_test_game)
target_include_directories(out_of_memory_tests PRIVATE ${PROJECT_SOURCE_DIR})
