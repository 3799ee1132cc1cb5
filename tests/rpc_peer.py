#!/usr/bin/env python3
"""An independent bb-rpc peer, written from README's protocol section with Python's
msgpack package, so the tests check bb-rpc's MessagePack bytes with code that is not
boardbench's.

    rpc_peer.py client unix:PATH|tcp:HOST:PORT   calls echo, add, stats; checks replies
    rpc_peer.py serve PORT                       serves echo, add, stats on 127.0.0.1
"""
import resource
import socket
import struct
import sys
import threading

import msgpack

HELLO = b"BBW\x01"
HEADER = struct.Struct("<IIHBB")  # len, id, method, flags, status
ECHO, ADD, STATS = 1, 2, 3
RESPONSE, MSGPACK = 0x01, 0x80


def read_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError("connection closed after %d of %d bytes" % (len(data), n))
        data += chunk
    return data


def read_frame(sock):
    length, ident, method, flags, status = HEADER.unpack(read_exact(sock, HEADER.size))
    return ident, method, flags, status, read_exact(sock, length)


def send_frame(sock, ident, method, flags, status, payload):
    sock.sendall(HEADER.pack(len(payload), ident, method, flags, status) + payload)


def connect(addr):
    kind, _, rest = addr.partition(":")
    if kind == "unix":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(rest)
    else:
        host, _, port = rest.rpartition(":")
        sock = socket.create_connection((host, int(port)))
    sock.settimeout(10)
    sock.sendall(HELLO)
    hello = read_exact(sock, 4)
    assert hello == HELLO, hello
    return sock


def call(sock, ident, method, args):
    send_frame(sock, ident, method, MSGPACK, 0, msgpack.packb(args, use_bin_type=True))
    rid, rmethod, flags, status, payload = read_frame(sock)
    assert (rid, rmethod) == (ident, method), (rid, rmethod, ident, method)
    assert flags == RESPONSE | MSGPACK, flags
    assert status == 0, (status, payload)
    return msgpack.unpackb(payload, raw=False)


def client(addr):
    sock = connect(addr)
    ident = 0
    for size in (0, 1, 16, 255, 256, 1024, 65535, 65536, 100000):
        data = bytes((i * 7 + size) % 256 for i in range(size))
        ident += 1
        back = call(sock, ident, ECHO, data)
        assert isinstance(back, bytes) and back == data, size
    for a, b in ((1, 2), (-33, 200), (2**40, -(2**35)), (-(2**63), 2**63 - 1), (127, -32)):
        ident += 1
        assert call(sock, ident, ADD, [a, b]) == a + b, (a, b)
    ident += 1
    stats = call(sock, ident, STATS, None)
    assert set(stats) == {"user_us", "sys_us", "connections", "echo_calls",
                          "add_calls", "stats_calls", "errors"}, stats
    assert stats["echo_calls"] >= 9 and stats["add_calls"] >= 5, stats
    assert stats["stats_calls"] >= 1, stats
    # An unknown method is an error reply and the connection stays open.
    send_frame(sock, 999, 42, MSGPACK, 0, msgpack.packb(None))
    rid, _, flags, status, payload = read_frame(sock)
    assert (rid, status) == (999, 2), (rid, status)
    assert b"unknown method" in payload, payload
    assert call(sock, 1000, ADD, [20, 22]) == 42
    print("ok", ident + 2, "calls")


class Counts:
    def __init__(self):
        self.lock = threading.Lock()
        self.connections = self.echo = self.add = self.stats = self.errors = 0


def serve_connection(conn, counts):
    conn.sendall(HELLO)
    if read_exact(conn, 4) != HELLO:
        conn.close()
        return
    while True:
        try:
            ident, method, flags, status, payload = read_frame(conn)
        except EOFError:
            return
        assert flags == MSGPACK, "this peer speaks MessagePack only"
        args = msgpack.unpackb(payload, raw=False)
        with counts.lock:
            if method == ECHO:
                counts.echo += 1
                result = bytes(args)
            elif method == ADD:
                counts.add += 1
                result = args[0] + args[1]
            elif method == STATS:
                counts.stats += 1
                usage = resource.getrusage(resource.RUSAGE_SELF)
                result = {"user_us": int(usage.ru_utime * 1e6), "sys_us": int(usage.ru_stime * 1e6),
                          "connections": counts.connections, "echo_calls": counts.echo,
                          "add_calls": counts.add, "stats_calls": counts.stats,
                          "errors": counts.errors}
            else:
                counts.errors += 1
                send_frame(conn, ident, method, RESPONSE | MSGPACK, 2, b"unknown method")
                continue
        send_frame(conn, ident, method, RESPONSE | MSGPACK, 0,
                   msgpack.packb(result, use_bin_type=True))


def serve(port):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    print("listening on tcp:127.0.0.1:%d" % listener.getsockname()[1], flush=True)
    counts = Counts()
    while True:
        conn, _ = listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with counts.lock:
            counts.connections += 1
        threading.Thread(target=serve_connection, args=(conn, counts), daemon=True).start()


if __name__ == "__main__":
    if sys.argv[1] == "client":
        client(sys.argv[2])
    else:
        serve(int(sys.argv[2]))
