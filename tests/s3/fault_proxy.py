"""An S3 server that fails on purpose, for tests/s3/s3.sh: a proxy on 127.0.0.1 in front of
moto that passes every request on, except ranged GETs of the dataset's data objects (keys
holding "raw-"), which it answers as MODE says:
    slowdown N   the first N such GETs get 503 SlowDown with Retry-After: 0, then pass
    short        206 with a Content-Length of the range, half the bytes, then the connection
                 closes (a body shorter than its Content-Length)
    stall        206 headers and half the bytes, then nothing until the client gives up
    gone         404 NoSuchKey for raw-3-of-8.bin (deleted after the run listed it)
    part         400 InvalidPart for every PUT of a multipart upload's part 2 (other PUTs pass)
or passes every request on in the ways MODE says:
    vhost LOG    as an HTTP proxy (the client's http_proxy): a request for
                 http://BUCKET.HOST/KEY goes to moto as /BUCKET/KEY; LOG gets a line
                 "METHOD HOST TOKEN" per request (the Host header the client sent and its
                 x-amz-security-token, "-" when none)
    tls CERT KEY over TLS with that certificate and key (a self-signed test server)
usage: fault_proxy.py MOTO_PORT MODE [ARGS]; prints its port on stdout once listening."""
import http.client
import http.server
import ssl
import sys
import threading
import time
import urllib.parse

MOTO = int(sys.argv[1])
MODE = sys.argv[2]
LEFT = [int(sys.argv[3]) if MODE == "slowdown" else 0]
LOCK = threading.Lock()


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def forward(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        c = http.client.HTTPConnection("127.0.0.1", MOTO, timeout=30)
        hdrs = {k: v for k, v in self.headers.items() if k.lower() != "expect"}
        path = self.path
        if MODE == "vhost":
            url = urllib.parse.urlsplit(self.path)
            host = self.headers.get("Host", "-")
            with LOCK, open(sys.argv[3], "a") as log:
                log.write("%s %s %s\n" % (self.command, host,
                                          self.headers.get("x-amz-security-token", "-")))
            path = "/" + url.netloc.split(".")[0] + url.path + ("?" + url.query if url.query else "")
            hdrs = {k: v for k, v in hdrs.items() if k.lower() != "host"}
            hdrs["Host"] = "127.0.0.1:%d" % MOTO
        c.request(self.command, path, body=body, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(k, v)
        # a HEAD's Content-Length is the object's size, not that of the empty body
        length = r.getheader("Content-Length") if self.command == "HEAD" else None
        self.send_header("Content-Length", length or str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        c.close()

    def fault(self):
        if MODE in ("vhost", "tls", "part"):
            return False
        if MODE == "slowdown":
            with LOCK:
                if LEFT[0] <= 0:
                    return False
                LEFT[0] -= 1
            body = b"<Error><Code>SlowDown</Code><Message>Reduce your request rate</Message></Error>"
            self.send_response(503)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return True
        if MODE == "gone":
            if "raw-3-of-8.bin" not in self.path:
                return False
            body = b"<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>"
            self.send_response(404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return True
        a, b = self.headers["Range"].split("=")[-1].split("-")
        n = int(b) - int(a) + 1
        self.send_response(206)
        self.send_header("Content-Range", "bytes %s-%s/*" % (a, b))
        self.send_header("Content-Length", str(n))
        self.end_headers()
        self.wfile.write(b"\0" * (n // 2))
        self.wfile.flush()
        if MODE == "stall":
            time.sleep(3600)
        self.close_connection = True
        return True

    def do_GET(self):
        if not ("raw-" in self.path and self.headers.get("Range") and self.fault()):
            self.forward()

    def do_PUT(self):
        if MODE == "part" and "partNumber=2&" in self.path + "&":
            n = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(n)
            body = b"<Error><Code>InvalidPart</Code><Message>part refused on purpose</Message></Error>"
            self.send_response(400)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.forward()

    do_POST = do_HEAD = do_DELETE = forward


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
srv.daemon_threads = True
if MODE == "tls":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[3], sys.argv[4])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print(srv.server_address[1], flush=True)
srv.serve_forever()
