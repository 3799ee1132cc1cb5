#!/usr/bin/env python3
"""Records real traffic for the fuzz seed corpora: a TCP proxy on 127.0.0.1 that relays
between a client and a server and keeps the first bytes of each direction of each
connection in DIR/<n>-<up|down>.

    fuzz/capture.py LISTEN_PORT_FILE TARGET_HOST:PORT DIR [KEEP_BYTES]

It writes the port it listens on to LISTEN_PORT_FILE, then serves until killed.
"""
import os
import socket
import sys
import threading

port_file, target, out_dir = sys.argv[1:4]
keep = int(sys.argv[4]) if len(sys.argv) > 4 else 4096
host, port = target.rsplit(":", 1)
os.makedirs(out_dir, exist_ok=True)


def relay(src, dst, path):
    kept = bytearray()
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if len(kept) < keep:
                kept += data[: keep - len(kept)]
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with open(path, "wb") as f:
            f.write(bytes(kept))
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(64)
with open(port_file, "w") as f:
    f.write(str(listener.getsockname()[1]))
n = 0
while True:
    client, _ = listener.accept()
    server = socket.create_connection((host, int(port)))
    n += 1
    for src, dst, name in ((client, server, "up"), (server, client, "down")):
        path = os.path.join(out_dir, f"{n}-{name}")
        threading.Thread(target=relay, args=(src, dst, path), daemon=True).start()
