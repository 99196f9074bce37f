"""Hostile WebSocket clients of one kernel, for test_kernel_budgets.sh.

    ws_attack.py BASE TOKEN KID MODE

MODE:
  flood    20 messages of 1 MiB each, as fast as the server takes them
           (5 s send timeout); prints "sent N"
  hold     once the kernel answers, prints "live" and waits up to 90 s for
           the server to close the WebSocket; then prints "closed CODE
           T" (T: the Unix time it closed) or "open"
  (frags, noread and hold first wait for the kernel's kernel_info_reply, and
  print "not-started" when none comes within 90 s)
  conns    opens 9 WebSockets at once and holds them 2 s; prints one HTTP
           status per socket ("101" or the refusal's)
  frags    one valid execute_request, padded with blanks to 5000 bytes, as
           5000 one-byte frames; prints "dropped" when the server ended the
           connection without a close frame, "closed CODE" when it closed
           it, "accepted" when it took the message
  noread   connects, runs code that prints 32 MiB in 1 MiB lines, and
           never reads; after 20 s prints "dropped" when the server closed
           the connection, else "open"
"""
import json
import socket
import sys
import time
import uuid

import websocket
from websocket import ABNF


def url(base, token, kid):
    return base.replace("http://", "ws://", 1) + "/api/kernels/%s/channels?token=%s" % (kid, token)


def execute(code):
    return json.dumps({"channel": "shell", "header": {"msg_id": uuid.uuid4().hex, "msg_type": "execute_request",
                                                       "username": "t", "session": "s", "version": "5.3"},
                       "parent_header": {}, "metadata": {},
                       "content": {"code": code, "silent": False, "store_history": False,
                                   "user_expressions": {}, "allow_stdin": False}})


def answered(ws, limit=90):
    """Sends kernel_info_request until the kernel replies (the channel is
    live and the kernel runs); False after limit seconds."""
    msg = json.loads(execute(""))
    msg["header"]["msg_type"] = "kernel_info_request"
    msg["content"] = {}
    ws.settimeout(5)
    end = time.time() + limit
    ws.send(json.dumps(msg))
    while time.time() < end:
        try:
            m = json.loads(ws.recv())
        except (socket.timeout, websocket.WebSocketTimeoutException):
            continue
        if m.get("msg_type") == "kernel_info_reply":
            return True
    return False


def main():
    base, token, kid, mode = sys.argv[1:5]
    if mode == "conns":
        socks, codes = [], []
        for _ in range(9):
            try:
                socks.append(websocket.create_connection(url(base, token, kid), timeout=10))
                codes.append("101")
            except websocket.WebSocketBadStatusException as e:
                codes.append(str(e.status_code))
        time.sleep(2)
        for s in socks:
            s.close()
        print(" ".join(codes))
        return
    ws = websocket.create_connection(url(base, token, kid), timeout=10)
    if mode == "flood":
        ws.sock.settimeout(5)
        body = execute("x = '" + "a" * (1 << 20) + "'")
        n = 0
        try:
            for _ in range(20):
                ws.send(body)
                n += 1
        except (socket.timeout, websocket.WebSocketTimeoutException, OSError):
            pass
        print("sent", n)
    elif mode == "frags":
        if not answered(ws):
            print("not-started")
            return
        body = execute("1")
        body += " " * (5000 - len(body))
        try:
            ws.send_frame(ABNF(fin=0, opcode=ABNF.OPCODE_TEXT, data=body[0]))
            for ch in body[1:-1]:
                ws.send_frame(ABNF(fin=0, opcode=ABNF.OPCODE_CONT, data=ch))
            ws.send_frame(ABNF(fin=1, opcode=ABNF.OPCODE_CONT, data=body[-1]))
        except (BrokenPipeError, ConnectionResetError, websocket.WebSocketConnectionClosedException):
            print("dropped")
            return
        ws.sock.settimeout(10)
        try:
            while True:
                op, data = ws.recv_data(control_frame=True)
                if op == ABNF.OPCODE_CLOSE:
                    print("closed %d" % (int.from_bytes(data[:2], "big") if len(data) >= 2 else 1005))
                    return
        except (socket.timeout, websocket.WebSocketTimeoutException):
            print("accepted")
        except (ConnectionResetError, websocket.WebSocketConnectionClosedException):
            print("dropped")
    elif mode == "hold":
        if not answered(ws):
            print("not-started", flush=True)
            return
        print("live", flush=True)
        ws.settimeout(1)
        end = time.time() + 90
        while time.time() < end:
            try:
                op, data = ws.recv_data(control_frame=True)
            except (socket.timeout, websocket.WebSocketTimeoutException):
                continue
            except (ConnectionResetError, websocket.WebSocketConnectionClosedException):
                print("closed 1006 %.1f" % time.time())
                return
            if op == ABNF.OPCODE_CLOSE:
                code = int.from_bytes(data[:2], "big") if len(data) >= 2 else 1005
                print("closed %d %.1f" % (code, time.time()))
                return
        print("open")
    elif mode == "noread":
        if not answered(ws):
            print("not-started")
            return
        ws.send(execute("import time\nfor i in range(32):\n    print('y' * (1 << 20))\n    time.sleep(0.05)"))
        time.sleep(20)
        try:
            ws.sock.setblocking(False)
            ws.sock.send(b"")
            # A closed connection shows as EOF or a reset once we read.
            ws.sock.settimeout(2)
            total = 0
            while total < 64 << 20:
                chunk = ws.sock.recv(1 << 20)
                if not chunk:
                    print("dropped")
                    return
                total += len(chunk)
            print("open")
        except (ConnectionResetError, BrokenPipeError):
            print("dropped")
        except socket.timeout:
            print("open")
    ws.close()


if __name__ == "__main__":
    main()
