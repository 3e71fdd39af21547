list(APPEND RETCON_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/replay_file.cpp
  ${CMAKE_CURRENT_LIST_DIR}/replay_recorder.cpp
  ${CMAKE_CURRENT_LIST_DIR}/replay_player.cpp
  ${CMAKE_CURRENT_LIST_DIR}/replay_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/utf8_file.cpp)
