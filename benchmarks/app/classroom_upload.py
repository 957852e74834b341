"""A student's own CSV, put to the server's upload endpoint as a browser does (bench_classroom.py's uploaders,
bench_uploads.py's large files): the file_urls_request over the websocket, then a multipart PUT with the XSRF
cookie of a page visit and the browser's nginx route cookie."""
from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

UPLOAD_TIMEOUT = 180.0  # seconds for the server's file_urls_response


@dataclass(frozen=True)
class Uploaded:
    """A file put to the server's upload endpoint, as a file_uploader widget state refers to it."""

    file_id: str
    name: str
    size: int
    upload_url: str
    delete_url: str


def class_csv(rng: random.Random, rows: int = 200, columns: int = 12) -> bytes:
    """A student's own small CSV: numeric columns and a 0/1 label."""
    lines = [",".join([f"x{j}" for j in range(columns)] + ["label"])]
    for _ in range(rows):
        x = [rng.random() for _ in range(columns)]
        lines.append(",".join(f"{v:.5f}" for v in x) + f",{int(x[0] * x[1] > 0.25)}")
    return ("\n".join(lines) + "\n").encode()


def _put_file(base: str, upload_url: str, name: str, content: bytes, route: str) -> None:
    """PUT the file as a browser does: multipart form, with the XSRF cookie of a page visit and its header."""
    import urllib.request
    from http.cookies import SimpleCookie

    visit = urllib.request.Request(base + "/_stcore/health", headers={"Cookie": f"rkcore_route={route}"})
    with urllib.request.urlopen(visit, timeout=30) as page:  # sets the XSRF cookie
        cookie = SimpleCookie()
        for header in page.headers.get_all("Set-Cookie") or []:
            cookie.load(header)
    token = cookie["_streamlit_xsrf"].value if "_streamlit_xsrf" in cookie else ""
    boundary = f"----classroom{random.getrandbits(64):x}"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            f"Content-Type: text/csv\r\n\r\n").encode() + content + f"\r\n--{boundary}--\r\n".encode()
    url = upload_url if upload_url.startswith("http") else base + upload_url
    request = urllib.request.Request(url, data=body, method="PUT", headers={
        "Content-Type": f"multipart/form-data; boundary={boundary}", "X-Xsrftoken": token,
        "Cookie": f"_streamlit_xsrf={token}; rkcore_route={route}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()


async def upload_file(ws, base: str, session: str, name: str, content: bytes, route: str,
                      timeout: float = UPLOAD_TIMEOUT) -> Uploaded:
    """Ask the server for an upload URL (file_urls_request), PUT ``content`` to it; the widget state to send."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    back = BackMsg()
    back.file_urls_request.request_id = name
    back.file_urls_request.file_names.append(name)
    back.file_urls_request.session_id = session
    await ws.send(back.SerializeToString())
    while True:
        fm = ForwardMsg()
        fm.ParseFromString(await asyncio.wait_for(ws.recv(), timeout))
        if fm.WhichOneof("type") == "file_urls_response" and fm.file_urls_response.response_id == name:
            urls = fm.file_urls_response.file_urls[0]
            break
    await asyncio.to_thread(_put_file, base, urls.upload_url, name, content, route)
    return Uploaded(urls.file_id, name, len(content), urls.upload_url, urls.delete_url)


async def _upload(ws, base: str, session: str, rng: random.Random, route: str) -> Uploaded:
    """A student's own CSV (from its random stream), uploaded as a browser does."""
    return await upload_file(ws, base, session, f"class_{rng.randrange(10**6)}.csv", class_csv(rng), route)
