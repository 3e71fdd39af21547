// UTF-8 file names: fopen on POSIX systems (names are bytes there); on Windows the name is
// converted to UTF-16 for _wfopen. An invalid UTF-8 name fails to open, it is never guessed at.
#include "replay/utf8_file.h"

#if defined(_WIN32)
#include <windows.h>

#include <string>
#endif

namespace retcon::detail {

#if defined(_WIN32)
std::FILE* open_utf8_file(const char* path, const char* mode) noexcept {
  if (path == nullptr || mode == nullptr) return nullptr;
  wchar_t wide_mode[8] = {};
  for (size_t i = 0; mode[i] != '\0'; ++i) {
    if (i + 1 >= sizeof wide_mode / sizeof wide_mode[0]) return nullptr;
    wide_mode[i] = static_cast<wchar_t>(static_cast<unsigned char>(mode[i]));
  }
  const int length = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, nullptr, 0);
  if (length <= 0) return nullptr;
  try {
    std::wstring wide(static_cast<size_t>(length), L'\0');
    if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, wide.data(), length) != length) {
      return nullptr;
    }
    return _wfopen(wide.c_str(), wide_mode);
  } catch (...) {  // std::bad_alloc
    return nullptr;
  }
}
#else
std::FILE* open_utf8_file(const char* path, const char* mode) noexcept {
  if (path == nullptr || mode == nullptr) return nullptr;
  return std::fopen(path, mode);
}
#endif

}  // namespace retcon::detail
