"""S3 specifics of serve/stores.py's reads: an object's facts from its HeadObject, GetObject's
parameters, whether its answer is a part of the object, its 416 told apart from other failures,
and its streamed body closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
from typing import Any


async def unless_unsatisfiable(call: Any) -> Any:
    """`call`'s answer, or None when it is S3's 416 (s3fs raises it as OSError EINVAL)."""
    try:
        return await call
    except OSError as err:
        if err.errno == errno.EINVAL and not isinstance(err, FileNotFoundError):
            return None
        raise


async def object_facts(fs: Any, key: str) -> dict[str, Any]:
    """An object's facts as s3fs's `_info` names them (`size`, `ETag`, `LastModified`), from its
    one HeadObject (s3fs's `_info` lists the prefix after a 404, to tell a directory)."""
    out = await fs._call_s3("head_object", **object_params(fs, key, None))
    return {"ETag": out.get("ETag", ""), "LastModified": out.get("LastModified", ""), "size": out["ContentLength"]}


def object_params(fs: Any, key: str, asked: str | None) -> dict[str, Any]:
    """GetObject's parameters for `key` (its version when the key names one), with `Range` asked."""
    bucket, path, version = fs.split_path(key)
    params: dict[str, Any] = {"Bucket": bucket, "Key": path}
    if version:
        params["VersionId"] = version
    if asked is not None:
        params["Range"] = asked
    return params


def is_partial(got: dict[str, Any]) -> bool:
    """Whether a GetObject answer is a part of the object (HTTP 206: a range honoured), by its
    status (botocore's ResponseMetadata), else by its ContentRange."""
    status = got.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return status == 206 if isinstance(status, int) else bool(got.get("ContentRange"))


async def close_body(body: Any) -> None:
    """Close a GetObject's streamed body, whatever its close returns, whatever it raises."""
    with contextlib.suppress(Exception):
        closed = body.close()
        if asyncio.iscoroutine(closed):
            await closed
