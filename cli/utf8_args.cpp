// UTF-8 command lines (utf8_args.h): UTF-16 to UTF-8 on Windows, nothing to do elsewhere.
#include "utf8_args.h"

#include <cstdlib>

#if defined(_WIN32)
#ifndef NOMINMAX  // libstdc++ of MinGW defines it already
#define NOMINMAX
#endif
#ifndef WIN32_LEAN_AND_MEAN  // RETCON_WINDOWS_DEFINITIONS has it
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <shellapi.h>  // CommandLineToArgvW
#endif

namespace retcon::cli {

#if defined(_WIN32)
namespace {

bool to_utf8(const wchar_t* wide, std::string* out) {
  const int size = WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, wide, -1, nullptr, 0, nullptr, nullptr);
  if (size <= 0) return false;
  out->assign(static_cast<size_t>(size), '\0');
  if (WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, wide, -1, out->data(), size, nullptr, nullptr) != size) {
    return false;
  }
  out->pop_back();  // the terminator WideCharToMultiByte counted
  return true;
}

}  // namespace

std::vector<std::string> utf8_arguments_of(const wchar_t* command_line) {
  std::vector<std::string> out;
  int count = 0;
  wchar_t** wide = CommandLineToArgvW(command_line, &count);
  if (wide == nullptr) return out;
  out.resize(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    if (!to_utf8(wide[i], &out[static_cast<size_t>(i)])) {
      out.clear();
      break;
    }
  }
  LocalFree(wide);
  return out;
}

void use_utf8_arguments(int* argc, char*** argv) {
  static std::vector<std::string> strings;  // for the whole run, as argv's own are
  static std::vector<char*> pointers;
  strings = utf8_arguments_of(GetCommandLineW());
  // The wide command line is the one argv came from: same count, or something is off (then
  // argv as it was is the better guess).
  if (strings.empty() || static_cast<int>(strings.size()) != *argc) return;
  pointers.clear();
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);  // argv[argc] is a null pointer
  *argv = pointers.data();
}

bool utf8_environment_variable(const char* name, std::string* value) {
  std::wstring wide_name;
  for (const char* c = name; *c != '\0'; ++c) wide_name.push_back(static_cast<wchar_t>(static_cast<unsigned char>(*c)));
  const wchar_t* wide = _wgetenv(wide_name.c_str());
  return wide != nullptr && to_utf8(wide, value);
}
#else
void use_utf8_arguments(int*, char***) {}

bool utf8_environment_variable(const char* name, std::string* value) {
  const char* text = std::getenv(name);
  if (text == nullptr) return false;
  *value = text;
  return true;
}
#endif

}  // namespace retcon::cli
