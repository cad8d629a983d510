#!/usr/bin/env python3
"""tsd_net_bench.py MNT HTTP_PORT TELNET_PORT [-n POINTS] [-s SERIES]

Prints a table: points/s ingested by three paths into one mounted
cellfs (its HTTP and telnet ports on 127.0.0.1), each path its own
metric, the same POINTS points over SERIES series (host=h0..):

  file     write(2)s of 64 KiB of put lines to MNT/tsd/put
  telnet   one connection, put lines sent as fast as the socket takes
           them, then "version" answered (every line before it stored)
  http     POST /api/put of JSON arrays of 1000 points, one after the
           other on one keep-alive connection

then the latency of Grafana's typical panel over HTTP: a day of one
point a minute for 100 series, GET /api/query 1m-avg grouped by host
(median and best of 5), beside the same query read from MNT/tsd/q/.  The client is python3, single-threaded; what
it costs is part of the figures (the JSON and lines are built before the
clock starts).
"""
import http.client
import json
import socket
import sys
import time

T0 = 1356998400


def lines(metric, n, series):
    return ["%s %d %d host=h%d\n" % (metric, T0 + i // series, i, i % series)
            for i in range(n)]


def bench_file(mnt, n, series):
    data = "".join(lines("bench.file", n, series)).encode()
    t = time.time()
    with open(mnt + "/tsd/put", "wb", buffering=0) as f:
        off = 0
        while off < len(data):
            end = data.rfind(b"\n", off, off + 65536) + 1
            f.write(data[off:end])
            off = end
    return time.time() - t


def bench_telnet(port, n, series):
    data = "".join("put " + l for l in lines("bench.telnet", n, series))
    data = data.encode() + b"version\n"
    s = socket.create_connection(("127.0.0.1", port))
    t = time.time()
    s.sendall(data)
    buf = b""
    while buf.count(b"\n") < 2:
        b = s.recv(4096)
        if not b:
            break
        buf += b
    el = time.time() - t
    s.close()
    if not buf.startswith(b"net.opentsdb"):
        raise SystemExit("telnet: unexpected answer %r" % buf[:200])
    return el


def bench_http(port, n, series):
    bodies = []
    for b in range(0, n, 1000):
        bodies.append(json.dumps([
            {"metric": "bench.http", "timestamp": T0 + i // series,
             "value": i, "tags": {"host": "h%d" % (i % series)}}
            for i in range(b, min(n, b + 1000))]).encode())
    c = http.client.HTTPConnection("127.0.0.1", port)
    t = time.time()
    for body in bodies:
        c.request("POST", "/api/put", body,
                  {"Content-Type": "application/json"})
        r = c.getresponse()
        r.read()
        if r.status != 204:
            raise SystemExit("http: status %d" % r.status)
    return time.time() - t


def bench_panel(mnt, port):
    day = 1440
    with open(mnt + "/tsd/put", "w") as f:
        for m in range(day):
            f.write("".join("panel.cpu %d %d host=h%d\n" %
                            (T0 + 60 * m, (m * 7 + h) % 100, h)
                            for h in range(100)))
    path = ("/api/query?start=%d&end=%d&m=avg:1m-avg:panel.cpu%%7Bhost=*%%7D"
            % (T0, T0 + 86400))
    c = http.client.HTTPConnection("127.0.0.1", port)
    times, size = [], 0
    for _ in range(5):
        t = time.time()
        c.request("GET", path)
        r = c.getresponse()
        body = r.read()
        times.append(time.time() - t)
        if r.status != 200:
            raise SystemExit("panel: status %d" % r.status)
        size = len(body)
        groups = json.loads(body)
    times.sort()
    ftimes = []
    q = ("start=%d&end=%d&m=avg:1m-avg:panel.cpu{host=*}" % (T0, T0 + 86400))
    for _ in range(5):
        t = time.time()
        with open(mnt + "/tsd/q/" + q, "rb") as f:
            while f.read(1 << 20):
                pass
        ftimes.append(time.time() - t)
    ftimes.sort()
    return times[2], times[0], size, len(groups), ftimes[2]


def main(argv):
    mnt, hp, tp = argv[1], int(argv[2]), int(argv[3])
    n, series = 200000, 100
    args = argv[4:]
    while args:
        if args[0] == "-n":
            n = int(args[1])
        elif args[0] == "-s":
            series = int(args[1])
        args = args[2:]
    print("%-8s %10s %10s %12s" % ("path", "points", "seconds", "points/s"))
    for name, fn, arg in (("file", bench_file, mnt),
                          ("telnet", bench_telnet, tp),
                          ("http", bench_http, hp)):
        el = fn(arg, n, series)
        print("%-8s %10d %10.2f %12.0f" % (name, n, el, n / el))
    med, best, size, groups, fmed = bench_panel(mnt, hp)
    print()
    print("panel: 1 day, 100 series, 1m-avg by host over HTTP: "
          "median %.3f s, best %.3f s, %d groups, %d bytes; "
          "the same query read from MNT/tsd/q/: median %.3f s"
          % (med, best, groups, size, fmed))


main(sys.argv)
