// Reads the example bytes docs/PROTOCOL.md gives, so tests can check the specification against
// the code. Include from a test compiled with RETCON_SOURCE_DIR (the source tree).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef RETCON_SOURCE_DIR
#error "RETCON_SOURCE_DIR must point at the source tree"
#endif

namespace retcon::test {

// The hex bytes of the ```text block following "<!-- example: NAME -->".
inline std::vector<uint8_t> doc_example(const std::string& name) {
  std::ifstream file(std::string(RETCON_SOURCE_DIR) + "/docs/PROTOCOL.md");
  EXPECT_TRUE(file.good()) << "docs/PROTOCOL.md not found";
  std::stringstream all;
  all << file.rdbuf();
  const std::string text = all.str();
  const size_t marker = text.find("<!-- example: " + name + " -->");
  EXPECT_NE(marker, std::string::npos) << "no example " << name;
  if (marker == std::string::npos) return {};
  const size_t open = text.find("```text\n", marker);
  const size_t close = text.find("```", open + 8);
  std::istringstream hex(text.substr(open + 8, close - open - 8));
  std::vector<uint8_t> bytes;
  std::string token;
  while (hex >> token) bytes.push_back(uint8_t(std::strtoul(token.c_str(), nullptr, 16)));
  return bytes;
}

// Bytes as the doc writes them ("52 43 ..."), for failure messages that say what to write.
inline std::string doc_hex(const std::vector<uint8_t>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    if (!s.empty()) s += ' ';
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

}  // namespace retcon::test
