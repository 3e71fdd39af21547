list(APPEND RETCON_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/result_names.cpp
  ${CMAKE_CURRENT_LIST_DIR}/config_validation.cpp
  ${CMAKE_CURRENT_LIST_DIR}/checksum.cpp
  ${CMAKE_CURRENT_LIST_DIR}/input_queue.cpp
  ${CMAKE_CURRENT_LIST_DIR}/state_ring.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rollback_driver.cpp)
