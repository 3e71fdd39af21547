# C API tests: the header as strict C99 and as C++, misuse and names (gtest), C API sessions
# against C++ sessions (RapidCheck), the exported symbols of libretcon.so, and installing the
# package and building consumers against it.
set(RETCON_CAPI_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

# The C library the C API tests link. Windows: the static one, because a DLL keeps its own
# operator new (the one in its statically linked C++ runtime) and the tests that replace
# operator new to count or fail allocations would see none of the DLL's. retcon.dll itself is
# exercised by the header checks, limits_tests and the C sample, and its exports are checked.
if(WIN32)
  set(RETCON_C_LIBRARY_FOR_TESTS retcon_static)
else()
  set(RETCON_C_LIBRARY_FOR_TESTS retcon)
endif()

# A game written in C, shared by the C API tests.
add_library(retcon_c_test_game STATIC ${RETCON_CAPI_TEST_DIR}/c_test_game.c)
target_link_libraries(retcon_c_test_game PUBLIC ${RETCON_C_LIBRARY_FOR_TESTS} PRIVATE retcon_warnings)
set_target_properties(retcon_c_test_game PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF)

retcon_add_test(capi_tests
  ${RETCON_CAPI_TEST_DIR}/capi_misuse_test.cpp
  ${RETCON_CAPI_TEST_DIR}/capi_property_test.cpp
  ${RETCON_CAPI_TEST_DIR}/capi_p2p_test.cpp
  ${RETCON_CAPI_TEST_DIR}/capi_replay_test.cpp
  ${RETCON_CAPI_TEST_DIR}/capi_checks_test.cpp
  ${RETCON_CAPI_TEST_DIR}/capi_reentry_test.cpp
  ${RETCON_CAPI_TEST_DIR}/capi_transport_settings_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/support/alloc_counter.cpp)
target_link_libraries(capi_tests PRIVATE ${RETCON_C_LIBRARY_FOR_TESTS} retcon_c_test_game)

add_executable(capi_header_c99 ${RETCON_CAPI_TEST_DIR}/header_c99.c)
set_target_properties(capi_header_c99 PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(capi_header_c99 PRIVATE -std=c99 -Wall -Wextra -Wpedantic -pedantic-errors -Werror)
target_link_libraries(capi_header_c99 PRIVATE retcon)
add_test(NAME capi_header_c99 COMMAND capi_header_c99)

add_executable(capi_header_cxx ${RETCON_CAPI_TEST_DIR}/header_cxx.cpp)
set_target_properties(capi_header_cxx PROPERTIES CXX_STANDARD 11 CXX_EXTENSIONS OFF)
target_compile_options(capi_header_cxx PRIVATE -Wall -Wextra -Wpedantic -pedantic-errors -Werror)
target_link_libraries(capi_header_cxx PRIVATE retcon)
add_test(NAME capi_header_cxx COMMAND capi_header_cxx)

if(WIN32)  # retcon.dll's export table and its import library (objdump -p, nm)
  add_test(NAME capi_exported_symbols
    COMMAND sh ${RETCON_CAPI_TEST_DIR}/check_exports.sh $<TARGET_FILE:retcon> ${PROJECT_SOURCE_DIR}/capi/retcon.h
            $<TARGET_LINKER_FILE:retcon>)
  set_tests_properties(capi_exported_symbols PROPERTIES ENVIRONMENT "OBJDUMP=${CMAKE_OBJDUMP};NM=${CMAKE_NM}")
else()
  add_test(NAME capi_exported_symbols
    COMMAND sh ${RETCON_CAPI_TEST_DIR}/check_exports.sh $<TARGET_FILE:retcon> ${PROJECT_SOURCE_DIR}/capi/retcon.h)
endif()

# Windows: a C game built with the plain MinGW C compiler the way README "Windows" says, against
# retcon.dll's import library and against the static library (RETCON_STATIC), run under Wine.
# The static link needs libsodium too when the build has match keys (RETCON_SODIUM_DIR).
if(WIN32 AND CMAKE_CROSSCOMPILING_EMULATOR)
  set(windows_static_extra_libs "")
  if(RETCON_WITH_SODIUM)
    set(windows_static_extra_libs ${RETCON_SODIUM_DIR}/lib/libsodium.a)
  endif()
  add_test(NAME windows_c_consumers
    COMMAND sh ${RETCON_CAPI_TEST_DIR}/windows_c_consumers.sh ${CMAKE_C_COMPILER} ${CMAKE_OBJDUMP}
            ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR} ${CMAKE_CROSSCOMPILING_EMULATOR}
            "${windows_static_extra_libs}")
  set_tests_properties(windows_c_consumers PROPERTIES
    PASS_REGULAR_EXPRESSION "OK: C consumers of retcon.dll and of the static library build and run")
  # The installed package (cmake --install): find_package(retcon) and retcon-static.pc in a
  # MinGW build, each consumer run under Wine.
  add_test(NAME windows_install_consumers
    COMMAND sh ${RETCON_CAPI_TEST_DIR}/windows_install_consumers.sh ${PROJECT_BINARY_DIR}
            ${RETCON_CAPI_TEST_DIR}/consumers ${CMAKE_TOOLCHAIN_FILE} ${CMAKE_C_COMPILER} ${CMAKE_CROSSCOMPILING_EMULATOR})
  set_tests_properties(windows_install_consumers PROPERTIES TIMEOUT 300
    PASS_REGULAR_EXPRESSION "OK: the installed Windows package builds and runs its consumers")
endif()

# A packaging test: with RETCON_SANITIZE the installed libraries need the sanitizer runtimes,
# which plain consumers do not link, so it runs in normal builds only.
# Not in cross builds either: the consumers are built with the host's cc and pkg-config
# (listed in RETCON_LINUX_ONLY_TESTS).
if(NOT RETCON_SANITIZE AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME install_consumers
    COMMAND sh ${RETCON_CAPI_TEST_DIR}/install_consumers.sh ${PROJECT_BINARY_DIR} ${RETCON_CAPI_TEST_DIR}/consumers
            ${PROJECT_SOURCE_DIR})
  set_tests_properties(install_consumers PROPERTIES TIMEOUT 600 RESOURCE_LOCK retcon_install)
endif()
