retcon_add_test(session_tests
  ${CMAKE_CURRENT_LIST_DIR}/local_session_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sync_test_session_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/p2p_session_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/p2p_attack_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/p2p_property_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/p2p_udp_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/time_sync_test.cpp)
