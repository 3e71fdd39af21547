list(APPEND RETCON_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/local_session.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sync_test_session.cpp
  ${CMAKE_CURRENT_LIST_DIR}/p2p_session.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spectator_session.cpp
  ${CMAKE_CURRENT_LIST_DIR}/snapshot_server.cpp
  ${CMAKE_CURRENT_LIST_DIR}/snapshot_client.cpp
  ${CMAKE_CURRENT_LIST_DIR}/desync_states.cpp
  ${CMAKE_CURRENT_LIST_DIR}/config_checks.cpp
  ${CMAKE_CURRENT_LIST_DIR}/decision_queue.cpp
  ${CMAKE_CURRENT_LIST_DIR}/decision_exchange.cpp)
