# Install rules and the packages consumers find retcon with:
#   CMake:      find_package(retcon) -> retcon::retcon (C API, shared), retcon::retcon_static
#               (C API, static), retcon::retcon_cpp (C++ API, static)
#   pkg-config: retcon (the C API, shared), retcon-static (the C API, static, with the C++ core)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(RETCON_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/retcon)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/retcon
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_SOURCE_DIR}/capi/retcon.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(TARGETS retcon retcon_static retcon_cpp EXPORT retconTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT retconTargets NAMESPACE retcon:: DESTINATION ${RETCON_CMAKE_DIR})

# Windows (MinGW): xxHash is compiled into retcon_cpp (XXH_INLINE_ALL), so the static libraries
# need no xxHash library; libsodium is the static one scripts/windows-libsodium built, which no
# Windows machine has: installed with retcon (lib/retcon/libsodium.a), and the package and
# retcon-static.pc name it there.
set(RETCON_PACKAGE_WINDOWS OFF)
set(RETCON_PACKAGE_SODIUM OFF)
if(WIN32)
  set(RETCON_PACKAGE_WINDOWS ON)
  if(RETCON_WITH_SODIUM)
    set(RETCON_PACKAGE_SODIUM ON)
    install(FILES ${RETCON_SODIUM_DIR}/lib/libsodium.a DESTINATION ${CMAKE_INSTALL_LIBDIR}/retcon)
  endif()
endif()

# The installed shared library carries no debug information (the build tree's keeps it, for
# development): 2.8 MB with it, a few hundred KB without. RETCON_INSTALL_STRIP=OFF keeps it;
# Debug builds are never stripped.
option(RETCON_INSTALL_STRIP "Strip debug information from the installed shared library" ON)
if(RETCON_INSTALL_STRIP AND CMAKE_STRIP AND NOT CMAKE_BUILD_TYPE STREQUAL "Debug" AND NOT WIN32)
  install(CODE "execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:retcon>\"
    RESULT_VARIABLE _retcon_strip)
  if(NOT _retcon_strip EQUAL 0)
    message(FATAL_ERROR \"retcon: strip failed\")
  endif()")
endif()

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/retconConfig.cmake.in
  ${PROJECT_BINARY_DIR}/retconConfig.cmake INSTALL_DESTINATION ${RETCON_CMAKE_DIR})
# Within a major version the C ABI only grows (docs/C_API.md).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/retconConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/retconConfig.cmake ${PROJECT_BINARY_DIR}/retconConfigVersion.cmake
  DESTINATION ${RETCON_CMAKE_DIR})

# retcon.pc finds its prefix from its own location (${pcfiledir}), so the installed tree can be
# moved and `cmake --install --prefix` works without reconfiguring.
set(RETCON_PC_TO_PREFIX "")
string(REPLACE "/" ";" _retcon_pc_parts "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
foreach(_part IN LISTS _retcon_pc_parts)
  if(NOT _part STREQUAL "")
    string(APPEND RETCON_PC_TO_PREFIX "/..")
  endif()
endforeach()
if(WIN32)
  set(RETCON_PC_STATIC_REQUIRES "")
  set(RETCON_PC_STATIC_LIBS "\${libdir}/libretcon_static.a \${libdir}/libretcon_cpp.a")
  if(RETCON_WITH_SODIUM)
    string(APPEND RETCON_PC_STATIC_LIBS " \${libdir}/retcon/libsodium.a -ladvapi32")
  endif()
  string(APPEND RETCON_PC_STATIC_LIBS " -lstdc++ -lws2_32 -lmswsock")
else()
  set(RETCON_PC_STATIC_REQUIRES "Requires: libxxhash libsodium")
  set(RETCON_PC_STATIC_LIBS "\${libdir}/libretcon.a \${libdir}/libretcon_cpp.a -lstdc++ -lm")
endif()
foreach(_pc retcon retcon-static)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${_pc}.pc.in ${PROJECT_BINARY_DIR}/${_pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${_pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
