# The programs' UTF-8 command lines and environment (cli/utf8_args.h).
retcon_add_test(cli_utf8_args_test ${CMAKE_CURRENT_LIST_DIR}/utf8_args_test.cpp)
target_link_libraries(cli_utf8_args_test PRIVATE retcon_cli)
