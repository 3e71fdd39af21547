// The command line and environment of retcon's programs (tools, samples) in UTF-8 on every
// platform, so a file name a player typed reaches the library's UTF-8 file functions intact.
// Why: on Windows main() gets argv in the ANSI code page, where "C:\Users\Zoë\リプレイ.rpl"
// arrives as "C:\Users\Zo?\????.rpl" (characters outside the code page are lost for good); the
// UTF-16 command line still has them. Elsewhere argv is bytes, passed on unchanged.
#pragma once

#include <string>
#include <vector>

namespace retcon::cli {

// Call first thing in main(): replaces argc/argv with the UTF-8 arguments (on Windows rebuilt
// from GetCommandLineW; the strings live until the program ends). Unchanged elsewhere, and
// unchanged on Windows should the wide command line not convert.
void use_utf8_arguments(int* argc, char*** argv);

// The arguments of a Windows command line (the rules of CommandLineToArgvW), as UTF-8; empty
// when it does not convert. Windows only (the tests give it command lines of their own).
#if defined(_WIN32)
std::vector<std::string> utf8_arguments_of(const wchar_t* command_line);
#endif

// Environment variable `name` in UTF-8 (Windows: _wgetenv, not the ANSI getenv). false when
// it is not set.
bool utf8_environment_variable(const char* name, std::string* value);

}  // namespace retcon::cli
