# Cross-compiling retcon for 64-bit Windows with Debian's MinGW-w64 (g++-mingw-w64-x86-64):
#   cmake -S . -B build/windows -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64.cmake
# scripts/windows does this, builds, and runs the tests under Wine.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(RETCON_MINGW_TRIPLE x86_64-w64-mingw32)

# The posix threads variant: GCC 12's win32 variant has no std::thread or std::mutex, which the
# samples use. Its runtime (libwinpthread) is linked statically below, like libstdc++.
set(CMAKE_C_COMPILER ${RETCON_MINGW_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${RETCON_MINGW_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${RETCON_MINGW_TRIPLE}-windres)

# Libraries and headers of the target only; programs (cmake, sh, wine) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${RETCON_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Why static runtimes: retcon.dll and every .exe then need only Windows' own DLLs, so a game
# ships one retcon.dll and nothing from the compiler (no libstdc++-6.dll, libgcc_s_seh-1.dll,
# libwinpthread-1.dll next to it), and Wine needs no WINEPATH to the MinGW sysroot.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static")
# Game modules (add_library MODULE: the fighter and arena modules retcon_replay loads) too:
# without it they import libstdc++-6.dll, which LoadLibrary does not find (error 126).
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-static")
# Tests run under Wine: cmake/RetconWindows.cmake sets that up when it finds wine.
