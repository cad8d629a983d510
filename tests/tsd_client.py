#!/usr/bin/env python3
"""tsd_client.py: the socket side of the tests of the daemon's OpenTSDB
servers (t1170, t1171), python3's standard library only.

  tsd_client.py port            a free TCP port of 127.0.0.1
  tsd_client.py wait PORT       waits (up to 10 s) until PORT accepts
  tsd_client.py closed PORT     waits (up to 10 s) until PORT refuses
  tsd_client.py telnet PORT     sends stdin, prints all the server says
                                until it closes the connection (stdin
                                should end with "exit"); 10 s at most
  tsd_client.py crowd PORT N    opens N idle connections, then does what
                                "telnet" does on one more, then closes all
  tsd_client.py hold PORT N     opens N connections, prints "open", then
                                "closed" once the server has closed all
                                of them (10 s at most after "open")
"""
import socket
import sys
import time


def connect(port):
    return socket.create_connection(("127.0.0.1", int(port)), timeout=10)


def wait(port, want_open):
    end = time.time() + 10
    while time.time() < end:
        try:
            connect(port).close()
            if want_open:
                return 0
        except OSError:
            if not want_open:
                return 0
        time.sleep(0.05)
    return 1


def telnet(port):
    s = connect(port)
    s.sendall(sys.stdin.buffer.read())
    out = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
    sys.stdout.buffer.write(out)
    return 0


def crowd(port, n):
    conns = [connect(port) for _ in range(int(n))]
    rc = telnet(port)
    for c in conns:
        c.close()
    return rc


def hold(port, n):
    conns = [connect(port) for _ in range(int(n))]
    print("open", flush=True)
    for c in conns:
        try:
            while c.recv(65536):
                pass
        except socket.timeout:
            return 1
        c.close()
    print("closed", flush=True)
    return 0


def main(argv):
    if argv[1] == "port":
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        print(s.getsockname()[1])
        s.close()
        return 0
    if argv[1] == "wait":
        return wait(argv[2], True)
    if argv[1] == "closed":
        return wait(argv[2], False)
    if argv[1] == "telnet":
        return telnet(argv[2])
    if argv[1] == "crowd":
        return crowd(argv[2], argv[3])
    if argv[1] == "hold":
        return hold(argv[2], argv[3])
    return 2


sys.exit(main(sys.argv))
