#include "runtime/server/http_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "runtime/base/log.h"

namespace ft::server {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool parse_size(std::string_view text, int base, size_t& out) {
  if (text.empty() || text.size() > 16) return false;
  size_t v = 0;
  for (char c : text) {
    int d = c >= '0' && c <= '9' ? c - '0' : (base == 16 && c >= 'a' && c <= 'f') ? c - 'a' + 10
                                            : (base == 16 && c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return false;
    v = v * base + d;
  }
  out = v;
  return true;
}

// One client connection: reads requests, answers them. The ResponseWriter of
// the request being handled.
class Connection final : public ResponseWriter {
 public:
  Connection(int fd, const HttpServerOptions& options, const std::atomic<bool>& stopping)
      : fd_(fd), options_(options), stopping_(stopping) {}

  // Reads the next request; false when the connection should close (EOF, idle
  // timeout, or a malformed request, which gets its error response first).
  bool read_request(HttpRequest& request) {
    allow_origin_.clear();  // a malformed request's error goes out without the last request's CORS header
    size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (buffer_.size() > options_.max_header_bytes) return reject(431, "request headers too large");
      if (!fill(options_.idle_timeout_s * 1000)) return false;
    }
    std::string_view head(buffer_.data(), end);
    if (!parse_head(head, request)) return reject(400, "malformed HTTP request");
    buffer_.erase(0, end + 4);
    if (lower(request.header("expect")) == "100-continue" && !send_all("HTTP/1.1 100 Continue\r\n\r\n")) return false;
    if (lower(request.header("transfer-encoding")).find("chunked") != std::string::npos) {
      if (!read_chunked_body(request.body)) return false;
    } else if (std::string length = request.header("content-length"); !length.empty()) {
      size_t n;
      if (!parse_size(length, 10, n)) return reject(400, "bad Content-Length");
      if (n > options_.max_body_bytes) return reject(413, "request body too large");
      while (buffer_.size() < n)
        if (!fill(options_.idle_timeout_s * 1000)) return false;
      request.body = buffer_.substr(0, n);
      buffer_.erase(0, n);
    }
    std::string connection = lower(request.header("connection"));
    keep_alive_ = http11_ ? connection != "close" : connection == "keep-alive";
    responded_ = streaming_ = false;
    allow_origin_ = allowed_origin(request.header("origin"));
    return true;
  }

  // A CORS preflight (OPTIONS with Access-Control-Request-Method) when CORS
  // is on: answered here, before any handler or authentication. False: not one.
  bool answer_preflight(const HttpRequest& request) {
    if (options_.cors_origins.empty() || request.method != "OPTIONS" ||
        request.header("access-control-request-method").empty())
      return false;
    HttpHeaders headers;
    if (!allow_origin_.empty()) {
      std::string asked = request.header("access-control-request-headers");
      headers = {{"Access-Control-Allow-Methods", "GET, POST, OPTIONS"},
                 {"Access-Control-Allow-Headers", asked.empty() ? "Authorization, Content-Type" : asked},
                 {"Access-Control-Max-Age", "86400"}};
    }
    send(204, "text/plain", "", headers);  // without the allow headers, the browser refuses
    return true;
  }

  bool keep_open() const { return keep_alive_ && !broken_ && !stopping_.load(); }
  bool responded() const { return responded_; }

  void send(int status, std::string_view content_type, std::string_view body, const HttpHeaders& extra = {}) override {
    if (responded_) return;
    responded_ = true;
    std::string head = status_line(status);
    head += fmt::format("Content-Type: {}\r\nContent-Length: {}\r\n", content_type, body.size());
    for (const auto& [name, value] : extra) head += fmt::format("{}: {}\r\n", name, value);
    head += "\r\n";
    if (!send_all(head)) return;
    send_all(body);
  }

  bool begin_stream(int status, std::string_view content_type) override {
    if (responded_) return false;
    responded_ = streaming_ = true;
    std::string head = status_line(status);
    head += fmt::format("Content-Type: {}\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n", content_type);
    return send_all(head);
  }

  bool write(std::string_view data) override {
    if (!streaming_ || broken_) return false;
    if (data.empty()) return true;
    return send_all(fmt::format("{:x}\r\n", data.size())) && send_all(data) && send_all("\r\n");
  }

  void end_stream() override {
    if (!streaming_) return;
    streaming_ = false;
    send_all("0\r\n\r\n");
  }

  bool client_gone() override {
    if (broken_ || stopping_.load()) return true;
    pollfd p{fd_, POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return broken_ = true;
    char c;
    ssize_t n = ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) broken_ = true;
    return broken_;
  }

 private:
  std::string status_line(int status) const {
    std::string line = fmt::format("HTTP/1.1 {} {}\r\nConnection: {}\r\n{}", status, http_status_text(status),
                                   keep_open() ? "keep-alive" : "close",
                                   keep_open() ? fmt::format("Keep-Alive: timeout={}\r\n", options_.idle_timeout_s) : "");
    if (!allow_origin_.empty()) line += fmt::format("Access-Control-Allow-Origin: {}\r\n", allow_origin_);
    // The answer depends on the Origin sent (caches must not share it) unless any is allowed.
    if (!options_.cors_origins.empty() && allow_origin_ != "*") line += "Vary: Origin\r\n";
    return line;
  }

  // What Access-Control-Allow-Origin says to a request from `origin`; empty
  // when CORS is off, the request names no origin, or the origin is not allowed.
  std::string allowed_origin(const std::string& origin) const {
    if (origin.empty()) return "";
    for (const std::string& allowed : options_.cors_origins) {
      if (allowed == "*") return "*";
      if (allowed == origin) return origin;
    }
    return "";
  }

  bool parse_head(std::string_view head, HttpRequest& request) {
    size_t line_end = head.find("\r\n");
    std::string_view line = head.substr(0, line_end);
    size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
    if (sp1 == std::string_view::npos || sp2 == sp1) return false;
    request.method = std::string(line.substr(0, sp1));
    request.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
    std::string_view version = line.substr(sp2 + 1);
    if (version != "HTTP/1.1" && version != "HTTP/1.0") return false;
    if (request.target.empty() || request.target[0] != '/') return false;
    http11_ = version == "HTTP/1.1";
    request.path = request.target.substr(0, request.target.find('?'));
    request.headers.clear();
    request.body.clear();
    while (line_end != std::string_view::npos) {
      size_t start = line_end + 2;
      line_end = head.find("\r\n", start);
      std::string_view h = head.substr(start, line_end == std::string_view::npos ? std::string_view::npos : line_end - start);
      size_t colon = h.find(':');
      if (colon == std::string_view::npos || colon == 0) return false;
      // No bare CR or LF inside a field (RFC 9112): some are echoed back in
      // response headers (CORS), where one would start a header of its own.
      if (h.find_first_of("\r\n") != std::string_view::npos) return false;
      request.headers.emplace_back(lower(trim(h.substr(0, colon))), std::string(trim(h.substr(colon + 1))));
    }
    return true;
  }

  bool read_line(std::string& line) {
    size_t end;
    while ((end = buffer_.find("\r\n")) == std::string::npos) {
      if (buffer_.size() > options_.max_header_bytes) return false;
      if (!fill(options_.idle_timeout_s * 1000)) return false;
    }
    line = buffer_.substr(0, end);
    buffer_.erase(0, end + 2);
    return true;
  }

  bool read_chunked_body(std::string& body) {
    std::string line;
    for (;;) {
      if (!read_line(line)) return false;
      size_t size;
      if (!parse_size(trim(std::string_view(line).substr(0, line.find(';'))), 16, size)) return reject(400, "bad chunk size");
      if (size == 0) break;
      // body.size() <= max_body_bytes here, so the difference cannot wrap (a sum could, for a size near 2^64).
      if (size > options_.max_body_bytes - body.size()) return reject(413, "request body too large");
      while (buffer_.size() < size + 2)
        if (!fill(options_.idle_timeout_s * 1000)) return false;
      body.append(buffer_, 0, size);
      buffer_.erase(0, size + 2);
    }
    do {  // trailers, up to the empty line
      if (!read_line(line)) return false;
    } while (!line.empty());
    return true;
  }

  bool reject(int status, std::string_view message) {
    keep_alive_ = false;
    send(status, "application/json",
         fmt::format(R"({{"error":{{"message":"{}","type":"invalid_request_error","param":null,"code":null}}}})", message));
    return false;
  }

  bool fill(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    int r;
    do r = ::poll(&p, 1, timeout_ms);
    while (r < 0 && errno == EINTR);
    if (r <= 0 || stopping_.load()) return false;
    char chunk[16384];
    ssize_t n;
    do n = ::recv(fd_, chunk, sizeof chunk, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  bool send_all(std::string_view data) {
    while (!data.empty() && !broken_) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        broken_ = true;
        break;
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return !broken_;
  }

  int fd_;
  const HttpServerOptions& options_;
  const std::atomic<bool>& stopping_;
  std::string buffer_;
  bool http11_ = true;
  bool keep_alive_ = false;
  bool responded_ = false;
  bool streaming_ = false;
  bool broken_ = false;
  std::string allow_origin_;  // the current request's Access-Control-Allow-Origin, or empty
};

}  // namespace

std::string HttpRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (key == name) return value;
  return "";
}

const char* http_status_text(int status) {
  switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Content Too Large";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Unknown";
  }
}

Result<std::unique_ptr<HttpServer>> HttpServer::listen(const HttpServerOptions& options, HttpHandler handler) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  std::string port = std::to_string(options.port);
  if (int rc = ::getaddrinfo(options.host.c_str(), port.c_str(), &hints, &found); rc != 0)
    return FT_ERROR(ErrorCode::kInvalidArgument, "cannot resolve host '{}': {}", options.host, gai_strerror(rc));
  int fd = -1, last_errno = 0;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last_errno = errno;
      continue;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 512) != 0) {
      last_errno = errno;
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) {
    if (last_errno == EADDRINUSE)
      return FT_ERROR(ErrorCode::kUnavailable, "port {} on {} is already in use", options.port, options.host);
    return FT_ERROR(ErrorCode::kIo, "cannot listen on {}:{}: {}", options.host, options.port, std::strerror(last_errno));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  int bound_port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                               : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    ::close(fd);
    return FT_ERROR(ErrorCode::kIo, "eventfd: {}", std::strerror(errno));
  }
  return std::unique_ptr<HttpServer>(new HttpServer(options, std::move(handler), fd, wake, bound_port));
}

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler, int listen_fd, int wake_fd, int port)
    : options_(std::move(options)), handler_(std::move(handler)), listen_fd_(listen_fd), wake_fd_(wake_fd), port_(port) {}

HttpServer::~HttpServer() {
  stop();
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return threads_ == 0; });
  ::close(listen_fd_);
  ::close(wake_fd_);
}

void HttpServer::serve() {
  while (!stopping_.load()) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      log::error("http: poll failed: {}", std::strerror(errno));
      break;
    }
    if (stopping_.load()) break;
    if (!(p[0].revents & POLLIN)) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // SSE chunks go out as they come
    // A client that stops reading but keeps its connection open would block a
    // write forever; after this long the connection counts as gone.
    timeval send_timeout{options_.send_timeout_s, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout);
    std::lock_guard lock(mutex_);
    if (static_cast<int>(connections_.size()) >= options_.max_connections) {
      static constexpr std::string_view kBusy =
          "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
      (void)::send(fd, kBusy.data(), kBusy.size(), MSG_NOSIGNAL);
      ::close(fd);
      continue;
    }
    connections_.insert(fd);
    ++threads_;
    std::thread([this, fd] { run_connection(fd); }).detach();
  }
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return threads_ == 0; });
}

void HttpServer::stop() {
  if (stopping_.exchange(true)) return;
  uint64_t one = 1;
  (void)::write(wake_fd_, &one, sizeof one);
  std::lock_guard lock(mutex_);
  for (int fd : connections_) ::shutdown(fd, SHUT_RDWR);
}

void HttpServer::run_connection(int fd) {
  {
    Connection connection(fd, options_, stopping_);
    HttpRequest request;
    while (!stopping_.load() && connection.read_request(request)) {
      if (connection.answer_preflight(request)) {
        if (!connection.keep_open()) break;
        continue;
      }
      try {
        handler_(request, connection);
      } catch (const std::exception& e) {
        log::error("http: handler for {} {} threw: {}", request.method, request.path, e.what());
      }
      connection.end_stream();  // a handler that returned mid-stream still ends the chunked body
      if (!connection.responded())
        connection.send(500, "application/json",
                        R"({"error":{"message":"internal error","type":"server_error","param":null,"code":null}})");
      if (!connection.keep_open()) break;
    }
  }
  std::lock_guard lock(mutex_);
  connections_.erase(fd);
  ::close(fd);
  if (--threads_ == 0) idle_.notify_all();
}

}  // namespace ft::server
