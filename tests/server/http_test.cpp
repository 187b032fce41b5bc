// The HTTP layer against a raw socket client: framing (Content-Length,
// chunked bodies both ways, 100-continue, keep-alive), bad requests, a port
// in use, a client that goes away mid-stream, and stop() during a stream.
#include "runtime/server/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

namespace ft::server {
namespace {

// A blocking client socket; reads with a generous timeout so a broken server
// fails the test instead of hanging it.
class Client {
 public:
  explicit Client(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~Client() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  bool connected() const { return connected_; }
  void send(const std::string& data) { ASSERT_EQ(::send(fd_, data.data(), data.size(), MSG_NOSIGNAL), ssize_t(data.size())); }
  // Reads until `marker` appears in what was received (or EOF/timeout).
  std::string read_until(const std::string& marker) {
    while (received_.find(marker) == std::string::npos && read_more()) {
    }
    size_t at = received_.find(marker);
    size_t end = at == std::string::npos ? received_.size() : at + marker.size();
    std::string out = received_.substr(0, end);
    received_.erase(0, end);
    return out;
  }
  std::string read_to_eof() {
    while (read_more()) {
    }
    return std::exchange(received_, {});
  }

 private:
  bool read_more() {
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return false;
    received_.append(buf, static_cast<size_t>(n));
    return true;
  }
  int fd_ = -1;
  bool connected_ = false;
  std::string received_;
};

// A server on a free port, serving on its own thread.
struct TestServer {
  explicit TestServer(HttpHandler handler, HttpServerOptions options = {}) {
    options.port = 0;
    auto s = HttpServer::listen(options, std::move(handler));
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    if (!s.ok()) return;
    server = std::move(*s);
    thread = std::thread([this] { server->serve(); });
  }
  ~TestServer() {
    if (!server) return;
    server->stop();
    thread.join();
  }
  int port() const { return server->port(); }
  std::unique_ptr<HttpServer> server;
  std::thread thread;
};

void echo(const HttpRequest& r, ResponseWriter& w) {
  w.send(200, "text/plain", r.method + " " + r.target + " [" + r.body + "] " + r.header("x-test"));
}

TEST(HttpServer, KeepAliveServesSeveralRequestsOnOneConnection) {
  TestServer server(echo);
  Client c(server.port());
  ASSERT_TRUE(c.connected());
  c.send("POST /a?q=1 HTTP/1.1\r\nHost: x\r\nX-Test: one\r\nContent-Length: 5\r\n\r\nhello");
  std::string first = c.read_until("one");
  EXPECT_NE(first.find("HTTP/1.1 200 OK\r\n"), std::string::npos) << first;
  EXPECT_NE(first.find("Connection: keep-alive"), std::string::npos) << first;
  EXPECT_NE(first.find("POST /a?q=1 [hello] one"), std::string::npos) << first;
  c.send("GET /b HTTP/1.1\r\nHost: x\r\nX-Test: two\r\nConnection: close\r\n\r\n");
  std::string second = c.read_to_eof();  // the server closes after a Connection: close request
  EXPECT_NE(second.find("GET /b [] two"), std::string::npos) << second;
  EXPECT_NE(second.find("Connection: close"), std::string::npos) << second;
}

TEST(HttpServer, ChunkedRequestBodyAndExpectContinue) {
  TestServer server(echo);
  Client c(server.port());
  c.send("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(c.read_until("\r\n\r\n"), "HTTP/1.1 100 Continue\r\n\r\n");
  c.send("3\r\nabc\r\nA;ext=1\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n");
  std::string out = c.read_to_eof();
  EXPECT_NE(out.find("POST /c [abc0123456789]"), std::string::npos) << out;
}

// CORS: off by default (no headers, OPTIONS goes to the handler); on, a
// preflight is answered before the handler and an allowed Origin is echoed.
TEST(HttpServer, CorsHeadersAndPreflight) {
  const std::string preflight =
      "OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: x\r\nOrigin: http://app.test\r\n"
      "Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization, content-type\r\n\r\n";
  const std::string get = "GET /b HTTP/1.1\r\nHost: x\r\nOrigin: http://app.test\r\nX-Test: end\r\n\r\n";
  {
    TestServer off(echo);
    Client c(off.port());
    c.send(preflight);
    std::string out = c.read_until("] ");  // the echo handler answered it
    EXPECT_NE(out.find("OPTIONS /v1/chat/completions"), std::string::npos) << out;
    c.send(get);
    out = c.read_until("end");
    EXPECT_EQ(out.find("Access-Control"), std::string::npos) << out;
  }
  HttpServerOptions options;
  options.cors_origins = {"http://other.test", "http://app.test"};
  TestServer on(echo, options);
  Client c(on.port());
  c.send(preflight);
  std::string out = c.read_until("\r\n\r\n");
  EXPECT_EQ(out.rfind("HTTP/1.1 204 No Content\r\n", 0), 0u) << out;
  EXPECT_NE(out.find("Access-Control-Allow-Origin: http://app.test\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Access-Control-Allow-Methods: GET, POST, OPTIONS\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Access-Control-Allow-Headers: authorization, content-type\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Vary: Origin\r\n"), std::string::npos) << out;
  c.send(get);  // the same connection goes on
  out = c.read_until("end");
  EXPECT_NE(out.find("Access-Control-Allow-Origin: http://app.test\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("GET /b [] end"), std::string::npos) << out;
  c.send("GET /b HTTP/1.1\r\nHost: x\r\nOrigin: http://evil.test\r\nX-Test: evil\r\n\r\n");
  out = c.read_until("[] evil");
  EXPECT_EQ(out.find("Access-Control-Allow-Origin"), std::string::npos) << out;

  options.cors_origins = {"*"};
  TestServer any(echo, options);
  Client d(any.port());
  d.send(get);
  out = d.read_until("end");
  EXPECT_NE(out.find("Access-Control-Allow-Origin: *\r\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("Vary"), std::string::npos) << out;
}

TEST(HttpServer, MalformedRequestGets400AndClose) {
  TestServer server(echo);
  Client c(server.port());
  c.send("NONSENSE\r\n\r\n");
  std::string out = c.read_to_eof();
  EXPECT_EQ(out.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << out;
  EXPECT_NE(out.find("\"error\""), std::string::npos);
}

TEST(HttpServer, BodyOverTheLimitGets413) {
  HttpServerOptions options;
  options.max_body_bytes = 10;
  TestServer server(echo, options);
  Client c(server.port());
  c.send("POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n");
  EXPECT_EQ(c.read_to_eof().rfind("HTTP/1.1 413 ", 0), 0u);
}

// A bare LF inside a header (which CORS would echo into the response's
// headers) makes the request malformed.
TEST(HttpServer, BareLineFeedInAHeaderGets400) {
  HttpServerOptions options;
  options.cors_origins = {"*"};
  TestServer server(echo, options);
  Client c(server.port());
  c.send("OPTIONS / HTTP/1.1\r\nOrigin: http://a.test\r\nAccess-Control-Request-Method: POST\r\n"
         "Access-Control-Request-Headers: x\nSet-Cookie: a=b\r\n\r\n");
  std::string out = c.read_to_eof();
  EXPECT_EQ(out.rfind("HTTP/1.1 400 ", 0), 0u) << out;
  EXPECT_EQ(out.find("Set-Cookie"), std::string::npos) << out;
}

// A chunk size near 2^64 must not wrap the body limit's sum and slip past it.
TEST(HttpServer, HugeChunkSizeGets413) {
  HttpServerOptions options;
  options.max_body_bytes = 10;
  options.idle_timeout_s = 2;
  TestServer server(echo, options);
  Client c(server.port());
  c.send("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nFFFFFFFFFFFFFFFF\r\nxyz\r\n0\r\n\r\n");
  EXPECT_EQ(c.read_to_eof().rfind("HTTP/1.1 413 ", 0), 0u);
}

TEST(HttpServer, HandlerThatSendsNothingGives500) {
  TestServer server([](const HttpRequest&, ResponseWriter&) {});
  Client c(server.port());
  c.send("GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(c.read_to_eof().rfind("HTTP/1.1 500 ", 0), 0u);
}

TEST(HttpServer, ChunkedStreamingResponse) {
  TestServer server([](const HttpRequest&, ResponseWriter& w) {
    ASSERT_TRUE(w.begin_stream(200, "text/event-stream"));
    EXPECT_TRUE(w.write("data: 1\n\n"));
    EXPECT_TRUE(w.write("data: [DONE]\n\n"));
    w.end_stream();
  });
  Client c(server.port());
  c.send("GET /s HTTP/1.1\r\nConnection: close\r\n\r\n");
  std::string out = c.read_to_eof();
  EXPECT_NE(out.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Content-Type: text/event-stream\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\r\n\r\n9\r\ndata: 1\n\n\r\ne\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"), std::string::npos) << out;
}

// Signals from a handler thread to the test.
struct Flag {
  std::mutex m;
  std::condition_variable cv;
  bool set = false;
  void raise() {
    std::lock_guard l(m);
    set = true;
    cv.notify_all();
  }
  bool wait() {
    std::unique_lock l(m);
    return cv.wait_for(l, std::chrono::seconds(20), [&] { return set; });
  }
};

TEST(HttpServer, ClientThatGoesAwayIsSeen) {
  Flag streaming, gone;
  TestServer server([&](const HttpRequest&, ResponseWriter& w) {
    w.begin_stream(200, "text/event-stream");
    w.write("data: 1\n\n");
    streaming.raise();
    while (!w.client_gone()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    gone.raise();
  });
  Client c(server.port());
  c.send("GET / HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(streaming.wait());
  c.read_until("data: 1");
  c.close();
  EXPECT_TRUE(gone.wait());
}

TEST(HttpServer, StopEndsStreamsAndServe) {
  Flag streaming, ended;
  auto s = HttpServer::listen({.host = "127.0.0.1", .port = 0}, [&](const HttpRequest&, ResponseWriter& w) {
    w.begin_stream(200, "text/plain");
    streaming.raise();
    while (!w.client_gone()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ended.raise();
  });
  ASSERT_TRUE(s.ok());
  std::unique_ptr<HttpServer> server = std::move(*s);
  auto serving = std::async(std::launch::async, [&] { server->serve(); });
  Client c(server->port());
  c.send("GET / HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(streaming.wait());
  server->stop();
  EXPECT_TRUE(ended.wait());
  EXPECT_EQ(serving.wait_for(std::chrono::seconds(20)), std::future_status::ready);
}

TEST(HttpServer, ClientThatStopsReadingIsDroppedAfterTheSendTimeout) {
  Flag write_failed;
  HttpServerOptions options;
  options.send_timeout_s = 1;
  TestServer server(
      [&](const HttpRequest&, ResponseWriter& w) {
        w.begin_stream(200, "text/plain");
        const std::string block(1 << 20, 'x');
        for (int i = 0; i < 4096; ++i)  // 4 GiB: far beyond any socket buffer
          if (!w.write(block)) return write_failed.raise();
      },
      options);
  Client c(server.port());
  c.send("GET / HTTP/1.1\r\n\r\n");  // and never reads
  EXPECT_TRUE(write_failed.wait());
}

TEST(HttpServer, PortInUseIsAClearError) {
  TestServer first(echo);
  HttpServerOptions options;
  options.port = first.port();
  auto second = HttpServer::listen(options, echo);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(second.status().message().find("already in use"), std::string::npos) << second.status().message();
}

TEST(HttpServer, UnresolvableHostIsAnError) {
  auto s = HttpServer::listen({.host = "no-such-host.invalid", .port = 0}, echo);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace ft::server
