// Loading a game module (a shared library) and the few other OS calls retcon_replay needs, on
// POSIX systems (dlopen) and on Windows (LoadLibrary). Names are UTF-8 on both.
#pragma once

#include <cstring>
#include <string>

#if defined(_WIN32)
#ifndef NOMINMAX  // libstdc++ of MinGW defines it already
#define NOMINMAX
#endif
#define WIN32_LEAN_AND_MEAN
#include <io.h>
#include <windows.h>

#include <cstdio>
#else
#include <dlfcn.h>
#include <unistd.h>
#endif

namespace retcon::tools {

// nullptr on failure, with *error saying why.
inline void* open_shared_library(const std::string& path, std::string* error) {
#if defined(_WIN32)
  const int length = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path.c_str(), -1, nullptr, 0);
  if (length <= 0) {
    *error = "not a UTF-8 file name";
    return nullptr;
  }
  std::wstring wide(static_cast<size_t>(length), L'\0');
  MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path.c_str(), -1, wide.data(), length);
  HMODULE module = LoadLibraryW(wide.c_str());
  if (module == nullptr) *error = "LoadLibrary error " + std::to_string(GetLastError());
  return reinterpret_cast<void*>(module);
#else
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) *error = dlerror();
  return handle;
#endif
}

// The address of an exported function, as an object pointer (the caller copies it into the
// function pointer type, as POSIX allows); nullptr when not exported.
inline void* find_shared_library_symbol(void* library, const char* name) {
#if defined(_WIN32)
  const FARPROC function = GetProcAddress(reinterpret_cast<HMODULE>(library), name);
  void* address = nullptr;
  static_assert(sizeof address == sizeof function);
  std::memcpy(&address, &function, sizeof address);
  return address;
#else
  return dlsym(library, name);
#endif
}

inline void close_shared_library(void* library) {
#if defined(_WIN32)
  FreeLibrary(reinterpret_cast<HMODULE>(library));
#else
  dlclose(library);
#endif
}

inline bool stderr_is_terminal() {
#if defined(_WIN32)
  return _isatty(_fileno(stderr)) != 0;
#else
  return isatty(2) != 0;
#endif
}

}  // namespace retcon::tools
