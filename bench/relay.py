"""`python bench/relay.py UPSTREAM`: the cheapest relay of GETs to UPSTREAM, as a yardstick.

It listens on 127.0.0.1 (a free port, printed), and for each GET opens a keep-alive connection to
UPSTREAM (`http://host:port`), sends the same request line and relays the answer's head and body
verbatim in reads of up to 1 MiB. No checks, no routing, no ETags: the least work a user-space
relay written in Python does per byte. `bench/serve.py --only passthrough` measures it beside
tlscope serve, so the server's share of a passthrough's cost can be told from what copying every
byte through a third process costs on the same cores.
"""

from __future__ import annotations

import asyncio
import re
import sys

_LENGTH = re.compile(rb"(?i)\r\ncontent-length: *(\d+)")


async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, port: int) -> None:
    up_reader, up_writer = await asyncio.open_connection(host, port, limit=1 << 20)
    try:
        while True:
            try:
                request = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            up_writer.write(request.split(b"\r\n", 1)[0] + f"\r\nHost: {host}:{port}\r\n\r\n".encode())
            head = await up_reader.readuntil(b"\r\n\r\n")
            writer.write(head)
            length = _LENGTH.search(head)
            remaining = int(length.group(1)) if length else 0
            while remaining:
                chunk = await up_reader.read(min(remaining, 1 << 20))
                if not chunk:
                    return
                remaining -= len(chunk)
                writer.write(chunk)
                await writer.drain()
    finally:
        up_writer.close()
        writer.close()


async def main(upstream: str) -> None:
    host, port = upstream.split("://", 1)[1].rsplit(":", 1)
    server = await asyncio.start_server(lambda r, w: relay(r, w, host, int(port)), "127.0.0.1", 0)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
