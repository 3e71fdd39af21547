// retcon.h compiles as C++ on its own (built as C++11 with -pedantic-errors -Werror; no C++
// retcon header included), with extern "C" linkage that links against libretcon.so.
#include "retcon.h"

#include <cstdio>
#include <cstring>

int main() {
  retcon_session_config config;
  if (retcon_session_config_init(&config) != RETCON_RESULT_OK) return 1;
  retcon_game_callbacks callbacks;
  if (retcon_game_callbacks_init(&callbacks) != RETCON_RESULT_OK) return 1;
  retcon_session* session = nullptr;
  if (retcon_local_session_create(&config, &callbacks, &session) != RETCON_RESULT_INVALID_ARGUMENT) return 1;
  if (session != nullptr || retcon_session_destroy(session) != RETCON_RESULT_OK) return 1;
  if (std::strcmp(retcon_result_name(RETCON_RESULT_OK), "ok") != 0) return 1;
  std::printf("retcon.h as C++: ok (retcon %s)\n", retcon_version_string());
  return 0;
}
