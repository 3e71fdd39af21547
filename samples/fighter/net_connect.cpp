// Fighter over the network: socket and peer discovery (see net_connect.h).
#include "net_connect.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "replay/utf8_file.h"

namespace fighter {

namespace {

// The first line of a file named in UTF-8 (the library's fopen for UTF-8 names, so a folder
// named "Zoë" opens on Windows too); false while the file is missing or that line is empty.
bool read_first_line(const std::string& path, std::string* line) {
  std::FILE* f = retcon::detail::open_utf8_file(path.c_str(), "rb");
  if (f == nullptr) return false;
  char text[256];
  const bool got = std::fgets(text, sizeof text, f) != nullptr;
  std::fclose(f);
  if (!got) return false;
  *line = text;
  while (!line->empty() && (line->back() == '\n' || line->back() == '\r')) line->pop_back();
  return !line->empty();
}

}  // namespace

bool parse_peer_address(const std::string& text, retcon::PeerAddress* out) {
  std::string host, port;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') return false;
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos) return false;
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 1 || p > 65535) return false;
  return retcon::make_ip_address(host.c_str(), uint16_t(p), out) == retcon::Result::ok;
}

bool open_udp_peer(const std::string& bind, uint16_t port, const std::string& remote, uint64_t wait_us,
                   std::unique_ptr<retcon::UdpTransport>* udp, retcon::PeerAddress* peer) {
  if (retcon::Result r = retcon::UdpTransport::open(bind.c_str(), port, udp); r != retcon::Result::ok) {
    std::fprintf(stderr, "cannot bind %s:%u: %s\n", bind.c_str(), port, retcon::result_name(r));
    return false;
  }
  char local[64];
  retcon::format_ip_address((*udp)->local_address(), local, sizeof local);
  std::printf("listening on %s\n", local);
  std::fflush(stdout);
  if (remote.rfind("file:", 0) != 0) {
    if (parse_peer_address(remote, peer)) return true;
    std::fprintf(stderr, "bad remote address '%s' (want HOST:PORT or file:PATH)\n", remote.c_str());
    return false;
  }
  // Datagrams that arrive meanwhile stay in the socket: the session drops every one whose sender
  // is not the configured peer (and the peer's handshake repeats anyway).
  const std::string path = remote.substr(5);
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::microseconds(wait_us)) {
    if (std::string line; read_first_line(path, &line)) {
      if (parse_peer_address(line, peer)) return true;
      std::fprintf(stderr, "bad peer address '%s' in %s\n", line.c_str(), path.c_str());
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::fprintf(stderr, "no peer address in %s within %.0f s\n", path.c_str(), double(wait_us) / 1e6);
  return false;
}

}  // namespace fighter
