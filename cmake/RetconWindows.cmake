# Windows builds (MinGW-w64 today; see README "Windows"): how retcon's dependencies are found
# there, the Winsock libraries, and running the tests under Wine when cross-compiling.
# Included from the top-level CMakeLists.txt when WIN32; Linux builds never read this file.

# Why these definitions: asio needs to know the oldest Windows it may call (Windows 10 here);
# <windows.h> must not define min/max macros over std::min/std::max, nor pull in all of Win32.
set(RETCON_WINDOWS_DEFINITIONS _WIN32_WINNT=0x0A00 WIN32_LEAN_AND_MEAN NOMINMAX)

# Header-only dependencies come from the host's Debian packages (libasio-dev, libxxhash-dev):
# asio supports Winsock, and xxHash is compiled in from its header (XXH_INLINE_ALL), since
# Debian has no MinGW build of libxxhash. Only these headers are exposed to the cross compiler
# (a staging folder of links), never the whole of /usr/include, whose glibc headers would
# shadow MinGW's.
set(RETCON_HOST_HEADERS ${CMAKE_BINARY_DIR}/host-headers)
file(MAKE_DIRECTORY ${RETCON_HOST_HEADERS})
foreach(header asio asio.hpp xxhash.h)
  if(NOT EXISTS /usr/include/${header})
    message(FATAL_ERROR "Windows build: /usr/include/${header} missing (scripts/install-deps installs it)")
  endif()
  if(NOT EXISTS ${RETCON_HOST_HEADERS}/${header})
    file(CREATE_LINK /usr/include/${header} ${RETCON_HOST_HEADERS}/${header} SYMBOLIC)
  endif()
endforeach()
set(ASIO_INCLUDE_DIR ${RETCON_HOST_HEADERS} CACHE PATH "asio headers" FORCE)
# The same target name the Linux build gets from pkg-config, so lib/ and fuzz/ link it unchanged.
add_library(PkgConfig::XXHASH INTERFACE IMPORTED)
set_target_properties(PkgConfig::XXHASH PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${RETCON_HOST_HEADERS}
  INTERFACE_COMPILE_DEFINITIONS XXH_INLINE_ALL)

# libsodium (match keys): a static build for Windows in RETCON_SODIUM_DIR, never the host's
# (pkg-config would find the Linux one). scripts/windows-libsodium builds Debian's source
# package into build/windows/deps/libsodium. The same target name as the Linux build's, so
# lib/ links it unchanged. SODIUM_STATIC: sodium.h then declares nothing dllimport.
if(RETCON_WITH_SODIUM)
  if(NOT RETCON_SODIUM_DIR OR NOT EXISTS ${RETCON_SODIUM_DIR}/lib/libsodium.a
     OR NOT EXISTS ${RETCON_SODIUM_DIR}/include/sodium.h)
    message(FATAL_ERROR "Windows build with RETCON_WITH_SODIUM: RETCON_SODIUM_DIR='${RETCON_SODIUM_DIR}' has no "
      "lib/libsodium.a and include/sodium.h (scripts/windows-libsodium builds them)")
  endif()
  add_library(PkgConfig::SODIUM STATIC IMPORTED)
  set_target_properties(PkgConfig::SODIUM PROPERTIES
    IMPORTED_LOCATION ${RETCON_SODIUM_DIR}/lib/libsodium.a
    INTERFACE_INCLUDE_DIRECTORIES ${RETCON_SODIUM_DIR}/include
    INTERFACE_COMPILE_DEFINITIONS SODIUM_STATIC=1
    INTERFACE_LINK_LIBRARIES advapi32)  # randombytes: RtlGenRandom
endif()

# GoogleTest from its sources (libgtest-dev ships them in /usr/src/googletest), built with the
# cross compiler inside this build tree. RapidCheck has no sources in Debian, only a Linux
# static library: the property tests are Linux-only (tests/CMakeLists.txt lists them).
macro(retcon_windows_googletest)
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
  set(gtest_force_shared_crt ON CACHE BOOL "" FORCE)
  add_subdirectory(/usr/src/googletest ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL SYSTEM)
  if(NOT TARGET GTest::gtest)  # googletest >= 1.11 defines these aliases itself
    add_library(GTest::gtest ALIAS gtest)
    add_library(GTest::gtest_main ALIAS gtest_main)
  endif()
endmacro()

# Cross builds run their programs under Wine: ctest, and gtest_discover_tests listing the tests,
# use this target property (initialised from CMAKE_CROSSCOMPILING_EMULATOR for every target
# created after this point). cmake/wine_run.sh.in: a private prefix in this build tree, no
# display, no Wine debug output, CR LF output turned into LF.
if(CMAKE_CROSSCOMPILING AND NOT CMAKE_CROSSCOMPILING_EMULATOR)
  find_program(RETCON_WINE NAMES wine wine64)
  if(RETCON_WINE)
    set(RETCON_WINEPREFIX ${CMAKE_BINARY_DIR}/wineprefix CACHE PATH "Wine prefix the tests run in")
    configure_file(${CMAKE_CURRENT_LIST_DIR}/wine_run.sh.in ${CMAKE_BINARY_DIR}/wine_run @ONLY
      FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
    set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_BINARY_DIR}/wine_run)
    # Test names are listed when ctest starts (PRE_TEST), not by the build: listing runs each
    # test program under Wine, which in the middle of a parallel build on a loaded machine took
    # over a minute and failed the build. ctest runs them one after the other, with the
    # persistent wineserver scripts/windows starts.
    set(CMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE PRE_TEST)
  else()
    message(STATUS "Windows cross build: no wine found, tests are built but cannot run")
  endif()
endif()

# Executables and DLLs side by side (Windows finds a program's DLLs in its own folder), so the
# tests, samples and tools load this build's retcon.dll without any PATH.
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)

# The build's programs and DLLs need no compiler runtime DLL (cmake/check_windows_imports.sh).
# Added once the whole project is read (deferred), so it sits beside the other ctests.
function(retcon_windows_import_test)
  if(RETCON_BUILD_TESTS)
    add_test(NAME windows_programs_import_no_compiler_runtime
      COMMAND sh ${PROJECT_SOURCE_DIR}/cmake/check_windows_imports.sh ${CMAKE_OBJDUMP} ${PROJECT_BINARY_DIR})
    set_tests_properties(windows_programs_import_no_compiler_runtime PROPERTIES
      PASS_REGULAR_EXPRESSION "OK: [0-9]+ programs and DLLs")
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL retcon_windows_import_test)
