// The programs' arguments and environment in UTF-8 (cli/utf8_args.h). On Windows (these run
// under Wine there) from the UTF-16 command line, where the ANSI argv has lost what is outside
// the code page; elsewhere argv is passed on as it is. The end-to-end checks are the tool tests
// with non-ASCII paths (tool_*_utf8_*, fighter_net_utf8_address_file).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "utf8_args.h"

#if defined(_WIN32)
#ifndef NOMINMAX  // libstdc++ of MinGW defines it already
#define NOMINMAX
#endif
#ifndef WIN32_LEAN_AND_MEAN  // RETCON_WINDOWS_DEFINITIONS has it
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>  // GetCommandLineW
#endif

namespace retcon::cli {
namespace {

// "Zoë Müller" and "リプレイ" (replay), written as UTF-8 bytes.
const std::string kFolder = "Zo\xc3\xab M\xc3\xbcller";
const std::string kReplay = "\xe3\x83\xaa\xe3\x83\x97\xe3\x83\xac\xe3\x82\xa4.rpl";

#if defined(_WIN32)
TEST(Utf8Args, AWindowsCommandLineBecomesUtf8Arguments) {
  const std::vector<std::string> args = utf8_arguments_of(
      L"retcon_replay.exe play \"C:\\Users\\Zo\u00eb M\u00fcller\\\u30ea\u30d7\u30ec\u30a4.rpl\" --from 30");
  const std::vector<std::string> expected = {"retcon_replay.exe", "play", "C:\\Users\\" + kFolder + "\\" + kReplay,
                                             "--from", "30"};
  EXPECT_EQ(args, expected);
}

TEST(Utf8Args, AnUnpairedSurrogateConvertsToNothing) {
  EXPECT_TRUE(utf8_arguments_of(L"tool.exe \xd800 x").empty());
}

// The same test name on every platform (scripts/windows compares the names).
TEST(Utf8Args, UseUtf8ArgumentsKeepsTheProgramsArguments) {
  // Windows: gtest's own command line (ASCII) comes back with the same count and strings.
  int argc = 0;
  char** argv = nullptr;
  const std::vector<std::string> own = utf8_arguments_of(GetCommandLineW());
  ASSERT_FALSE(own.empty());
  std::vector<char*> pointers;
  std::vector<std::string> copy = own;
  for (std::string& s : copy) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  argc = int(own.size());
  argv = pointers.data();
  use_utf8_arguments(&argc, &argv);
  ASSERT_EQ(argc, int(own.size()));
  for (int i = 0; i < argc; ++i) EXPECT_EQ(argv[i], own[size_t(i)]);
  EXPECT_EQ(argv[argc], nullptr);
}
#else
TEST(Utf8Args, UseUtf8ArgumentsKeepsTheProgramsArguments) {
  // POSIX: argv is bytes, passed on as it is (the same pointers).
  std::string program = "retcon_replay", command = "play", path = "/home/" + kFolder + "/" + kReplay;
  char* given[] = {program.data(), command.data(), path.data(), nullptr};
  int argc = 3;
  char** argv = given;
  use_utf8_arguments(&argc, &argv);
  EXPECT_EQ(argc, 3);
  EXPECT_EQ(argv, given);
  EXPECT_EQ(argv[2], path);
}
#endif

TEST(Utf8Args, EnvironmentVariablesAreUtf8) {
  const std::string module = "C:\\" + kFolder + "\\game.dll";
#if defined(_WIN32)
  ASSERT_EQ(_wputenv(L"RETCON_UTF8_ARGS_TEST=C:\\Zo\u00eb M\u00fcller\\game.dll"), 0);
#else
  ASSERT_EQ(setenv("RETCON_UTF8_ARGS_TEST", module.c_str(), 1), 0);
#endif
  std::string value;
  ASSERT_TRUE(utf8_environment_variable("RETCON_UTF8_ARGS_TEST", &value));
  EXPECT_EQ(value, module);
  EXPECT_FALSE(utf8_environment_variable("RETCON_UTF8_ARGS_TEST_NOT_SET", &value));
}

}  // namespace
}  // namespace retcon::cli
