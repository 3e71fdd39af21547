# Network tests: codec, transports, simulator, endpoint, wire spec.
retcon_add_test(net_wire_test ${CMAKE_CURRENT_LIST_DIR}/wire_test.cpp)
retcon_add_test(net_endpoint_test ${CMAKE_CURRENT_LIST_DIR}/endpoint_test.cpp)
retcon_add_test(net_transport_test ${CMAKE_CURRENT_LIST_DIR}/transport_test.cpp)
# UdpTransport on loopback, and its socket-error rules with the platform's own error values.
retcon_add_test(net_udp_test ${CMAKE_CURRENT_LIST_DIR}/udp_test.cpp ${CMAKE_CURRENT_LIST_DIR}/udp_socket_errors_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/udp_receive_path_test.cpp)
if(RETCON_HAVE_IO_URING)  # the tests check the ring is used where the kernel allows it
  target_compile_definitions(net_udp_test PRIVATE RETCON_HAVE_IO_URING=1)
endif()
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  # The ring refused (seccomp, as in many containers): its own process, where main() installs
  # the filter first; the transport must fall back to recvmmsg and work.
  retcon_add_test(net_udp_ring_refused_test ${CMAKE_CURRENT_LIST_DIR}/udp_ring_refused_test.cpp)
endif()
retcon_add_test(net_allocation_test ${CMAKE_CURRENT_LIST_DIR}/allocation_test.cpp)
retcon_add_test(net_wire_bytes_test ${CMAKE_CURRENT_LIST_DIR}/wire_bytes_test.cpp)
retcon_add_test(net_protocol_doc_test ${CMAKE_CURRENT_LIST_DIR}/protocol_doc_test.cpp)
# The test reads docs/PROTOCOL.md from the source tree.
target_compile_definitions(net_protocol_doc_test PRIVATE RETCON_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
retcon_add_test(net_soak_test ${CMAKE_CURRENT_LIST_DIR}/soak_test.cpp)
retcon_add_test(net_endpoint_attack_test ${CMAKE_CURRENT_LIST_DIR}/endpoint_attack_test.cpp)
retcon_add_test(net_send_policy_test ${CMAKE_CURRENT_LIST_DIR}/send_policy_test.cpp)
retcon_add_test(net_remote_frame_estimator_test ${CMAKE_CURRENT_LIST_DIR}/remote_frame_estimator_test.cpp)
retcon_add_test(net_replay_window_test ${CMAKE_CURRENT_LIST_DIR}/replay_window_test.cpp)
# The reliable channel: loss, duplication, reordering, a sender that goes away, the time bound
# (it prints the times); through real endpoints with and without a match key; docs/PROTOCOL.md's
# channel examples.
retcon_add_test(net_reliable_channel_test ${CMAKE_CURRENT_LIST_DIR}/reliable_channel_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/support/alloc_counter.cpp)
target_link_libraries(net_reliable_channel_test PRIVATE PkgConfig::XXHASH)
retcon_add_test(net_channel_endpoint_test ${CMAKE_CURRENT_LIST_DIR}/channel_endpoint_test.cpp)
retcon_add_test(net_channel_doc_test ${CMAKE_CURRENT_LIST_DIR}/channel_doc_test.cpp)
target_compile_definitions(net_channel_doc_test PRIVATE RETCON_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
retcon_add_test(net_simulator_flood_test ${CMAKE_CURRENT_LIST_DIR}/simulator_flood_test.cpp)
