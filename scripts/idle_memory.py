#!/usr/bin/env python3
"""Server memory per idle logged-in connection, measured the same way for our server and for Mosquitto.

    scripts/idle_memory.py ours PID PORT ADMIN_KEY [COUNT]
    scripts/idle_memory.py mosquitto PID PORT [COUNT]

Opens WARMUP connections and reads the server's RSS (/proc/PID/status), opens COUNT more, waits for the server
to settle, reads it again and prints one JSON line: the RSS before and after and the bytes per connection.
Ours: a WebSocket to /v1/signal that logs in with a token from POST /v1/tokens (admin key) and gets its welcome.
Mosquitto: an MQTT 3.1.1 CONNECT and a SUBSCRIBE to the user's topic (what the CallAPIMQTT adapter does), QoS 1.
Standard library only; every socket blocks with a timeout, so the run is bounded.
"""
import base64
import json
import os
import socket
import struct
import sys
import time
import urllib.request

WARMUP = 100
TIMEOUT = 10


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def read_until(sock, marker):
    data = b""
    while marker not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise RuntimeError("connection closed early")
        data += chunk
    return data


def masked_text_frame(text):
    payload = text.encode()
    key = os.urandom(4)
    length = len(payload)
    header = bytes([0x81]) + (bytes([0x80 | length]) if length < 126 else bytes([0x80 | 126]) + struct.pack(">H", length))
    return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def token(port, admin_key, user):
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/tokens",
        data=json.dumps({"userId": user, "ttl": 3600}).encode(),
        headers={"Authorization": f"Bearer {admin_key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        return json.load(response)["token"]


def open_ours(port, admin_key, user):
    jwt = token(port, admin_key, user)
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /v1/signal HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = read_until(sock, b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 101"):
        raise RuntimeError(head[:40])
    sock.sendall(masked_text_frame(json.dumps({"type": "login", "id": 1, "token": jwt})))
    read_until(sock, b"welcome")
    return sock


def mqtt_string(text):
    data = text.encode()
    return struct.pack(">H", len(data)) + data


def mqtt_packet(kind, body):
    length, encoded = len(body), b""
    while True:
        byte, length = length % 128, length // 128
        encoded += bytes([byte | (0x80 if length else 0)])
        if not length:
            break
    return bytes([kind]) + encoded + body


def open_mosquitto(port, user):
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    connect = mqtt_string("MQTT") + bytes([4, 0x02]) + struct.pack(">H", 60) + mqtt_string(f"idle-{user}")
    sock.sendall(mqtt_packet(0x10, connect))
    if sock.recv(4)[:1] != b"\x20":
        raise RuntimeError("no CONNACK")
    sock.sendall(mqtt_packet(0x82, struct.pack(">H", 1) + mqtt_string(f"callapi/u/{user}") + b"\x01"))
    if sock.recv(5)[:1] != b"\x90":
        raise RuntimeError("no SUBACK")
    return sock


def main():
    peer, pid, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if peer == "ours":
        admin_key, rest = sys.argv[4], sys.argv[5:]
        opener = lambda user: open_ours(port, admin_key, user)  # noqa: E731
    else:
        rest = sys.argv[4:]
        opener = lambda user: open_mosquitto(port, user)  # noqa: E731
    count = int(rest[0]) if rest else 2000
    sockets = [opener(str(100000 + n)) for n in range(WARMUP)]
    time.sleep(2)
    before = rss_kib(pid)
    start = time.monotonic()
    sockets += [opener(str(200000 + n)) for n in range(count)]
    seconds = time.monotonic() - start
    time.sleep(2)
    after = rss_kib(pid)
    report = {
        "bench": "idle-memory",
        "peer": peer,
        "count": count,
        "connectSeconds": round(seconds, 2),
        "serverBaselineRSSKiB": before,
        "serverRSSKiB": after,
        "serverBytesPerConnection": (after - before) * 1024 // count,
    }
    print(f"### Idle logged-in connections, {peer} (scripts/idle_memory.py)\n")
    print("| connections | server RSS before KiB | server RSS after KiB | server bytes/connection |")
    print("| --- | --- | --- | --- |")
    print(f"| {count} | {before} | {after} | {report['serverBytesPerConnection']} |\n")
    print(json.dumps(report))
    for sock in sockets:
        sock.close()


if __name__ == "__main__":
    main()
