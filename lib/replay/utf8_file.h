// Opening files by UTF-8 name on every platform (replay files; see utf8_file.cpp).
#pragma once

#include <cstdio>

namespace retcon::detail {

// fopen, except that on Windows the name is UTF-8 too (there fopen reads it in the ANSI code
// page, so a player's "C:\Users\Zoë\replays" would not open). nullptr on failure, like fopen.
std::FILE* open_utf8_file(const char* path, const char* mode) noexcept;

}  // namespace retcon::detail
