# Network sources: wire codec, transports, simulator, protocol endpoint.
list(APPEND RETCON_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/peer_address.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ip_address.cpp
  ${CMAKE_CURRENT_LIST_DIR}/callback_transport.cpp
  ${CMAKE_CURRENT_LIST_DIR}/in_memory_network.cpp
  ${CMAKE_CURRENT_LIST_DIR}/delay_line.cpp
  ${CMAKE_CURRENT_LIST_DIR}/network_simulator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/udp_socket_errors.cpp
  ${CMAKE_CURRENT_LIST_DIR}/udp_transport.cpp)
# UdpTransport's io_uring receive path (Linux; lib/CMakeLists.txt says whether it is built in).
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  list(APPEND RETCON_SOURCES ${CMAKE_CURRENT_LIST_DIR}/udp_completion_ring.cpp)
endif()
list(APPEND RETCON_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/input_compression.cpp
  ${CMAKE_CURRENT_LIST_DIR}/prepared_inputs.cpp
  ${CMAKE_CURRENT_LIST_DIR}/wire.cpp
  ${CMAKE_CURRENT_LIST_DIR}/datagram_auth.cpp)
list(APPEND RETCON_SOURCES ${CMAKE_CURRENT_LIST_DIR}/endpoint.cpp)
# The reliable channel beside the endpoint (messages by stream, state blobs).
list(APPEND RETCON_SOURCES ${CMAKE_CURRENT_LIST_DIR}/reliable_channel.cpp)
