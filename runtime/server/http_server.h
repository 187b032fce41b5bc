// A small HTTP/1.1 server on POSIX sockets: one thread per connection,
// keep-alive, Content-Length and chunked request bodies, Expect: 100-continue,
// and chunked responses for server-sent events.
//
// Why not cpp-httplib: Debian ships it as a compiled shared library that pulls
// in OpenSSL, zlib and brotli, and ft binaries must run on a machine with only
// a GPU driver (third-party code static or header-only). What an inference
// server needs from HTTP is this much.
//
// Thread safety: listen() and serve() from one thread; stop() from any thread
// (a signal-handling thread, say). Handlers run on connection threads, several
// at once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/base/status.h"

namespace ft::server {

struct HttpRequest {
  std::string method;
  std::string target;  // as sent: path and query
  std::string path;    // without the query
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;

  // The first header of that (lower-case) name, or "".
  std::string header(std::string_view name) const;
};

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// How a handler answers: either send() once, or begin_stream(), write()
// pieces and end_stream(). A handler that does neither gets a 500.
class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;
  virtual void send(int status, std::string_view content_type, std::string_view body,
                    const HttpHeaders& extra = {}) = 0;
  // A chunked response; false when the client is already gone.
  virtual bool begin_stream(int status, std::string_view content_type) = 0;
  // False once the client is gone (a failed write, a closed connection).
  virtual bool write(std::string_view data) = 0;
  virtual void end_stream() = 0;
  // Non-blocking: whether the client has closed its side of the connection.
  virtual bool client_gone() = 0;
};

using HttpHandler = std::function<void(const HttpRequest&, ResponseWriter&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (see HttpServer::port())
  size_t max_header_bytes = 64 << 10;
  size_t max_body_bytes = 64 << 20;
  int max_connections = 1024;
  int idle_timeout_s = 30;  // an idle keep-alive connection is closed after this
  int send_timeout_s = 60;  // a write that makes no progress this long ends the connection
  // Browser origins allowed to call the server across origins (CORS), such as
  // "http://localhost:3000", or "*" for any. Empty: no CORS headers, and
  // browsers keep pages of other origins from reading the responses. When
  // set, an OPTIONS preflight is answered here (204, no authentication, as
  // browsers send none with it) and responses to an allowed Origin carry
  // Access-Control-Allow-Origin.
  std::vector<std::string> cors_origins = {};
};

const char* http_status_text(int status);

class HttpServer {
 public:
  // Binds and listens (so connections queue up at once), but does not serve
  // yet. kUnavailable when the port is in use, kInvalidArgument for a host
  // that does not resolve.
  static Result<std::unique_ptr<HttpServer>> listen(const HttpServerOptions& options, HttpHandler handler);
  ~HttpServer();

  int port() const { return port_; }
  // Accepts and serves connections until stop(); returns once every
  // connection thread has ended.
  void serve();
  // Stops accepting, shuts down open connections (their handlers see the
  // client gone) and makes serve() return.
  void stop();

 private:
  HttpServer(HttpServerOptions options, HttpHandler handler, int listen_fd, int wake_fd, int port);
  void run_connection(int fd);

  HttpServerOptions options_;
  HttpHandler handler_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: stop() wakes the accept loop
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable idle_;
  std::set<int> connections_;
  int threads_ = 0;
};

}  // namespace ft::server
