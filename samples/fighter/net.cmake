# Fighter over the network: FighterPeer (a machine of a match, on any retcon Transport), used by
# fighter_net (two processes over UDP), tools/retcon_netsim and the window's --net mode.
add_library(retcon_fighter_net STATIC fighter_peer.cpp)
target_include_directories(retcon_fighter_net PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(retcon_fighter_net PUBLIC retcon_fighter retcon_cpp PRIVATE retcon_warnings)
