#!/usr/bin/env python3
"""A TCP proxy that adds a fixed latency to each request, as toxiproxy's latency toxic
does: the first bytes a client sends after the server last answered (a new request on a
kept-alive connection) wait DELAY_MS before they are forwarded; the rest of a request
(a PUT's body) and every answer flow at once. For tests and benchmarks of bb-seek against
an object store that answers in tens of milliseconds, not the 0.1 ms of this machine.

    scripts/latency-proxy.py LISTEN_PORT TARGET_HOST:TARGET_PORT DELAY_MS

Listens on 127.0.0.1 only; prints "listening on 127.0.0.1:PORT" once ready (PORT 0 picks
a free one); runs until killed.
"""
import socket
import sys
import threading
import time


def pump(src, dst, on_data):
    """Copies src to dst until either end closes; on_data() runs before each send."""
    try:
        while True:
            data = src.recv(256 << 10)
            if not data:
                break
            on_data()
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(client, target, delay):
    try:
        server = socket.create_connection(target)
    except OSError:
        client.close()
        return
    for s in (client, server):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    answered = threading.Event()
    answered.set()  # the first request waits too

    def request_data():
        if answered.is_set():
            answered.clear()
            time.sleep(delay)

    threading.Thread(target=pump, args=(server, client, answered.set), daemon=True).start()
    pump(client, server, request_data)
    client.close()
    server.close()


def main():
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        sys.exit(2)
    port = int(sys.argv[1])
    host, target_port = sys.argv[2].rsplit(":", 1)
    delay = float(sys.argv[3]) / 1000
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    print("listening on 127.0.0.1:%d" % listener.getsockname()[1], flush=True)
    while True:
        client, _ = listener.accept()
        threading.Thread(
            target=serve, args=(client, (host, int(target_port)), delay), daemon=True
        ).start()


if __name__ == "__main__":
    main()
