"""Zip archives (torch.save and np.savez both write them): the central directory is checked before any member is read.

No torch here.
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib

from gelu_core.messages import N_
from gelu_core.tensor_io.formats import ZIP_MAGIC
from gelu_core.tensor_io.limits import MAX_ZIP_DIRECTORY, MAX_ZIP_MEMBERS, TensorFileError

_EOCD = struct.Struct("<4s4H2LH")  # end of central directory record, 22 bytes
_ZIP64_LOCATOR = struct.Struct("<4sLQL")  # 20 bytes
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")  # 56 bytes


def _zip_directory(data: bytes) -> int:
    """The number of members from the end record, with it, the directory's size and its offset checked.

    torch.save and np.savez write no archive comment, so the end record must be
    the last 22 bytes: then Python's zipfile and torch's reader (miniz) both use it.
    """
    damaged = N_("This file is a damaged or unusual zip archive.")
    if len(data) < _EOCD.size or data[-_EOCD.size:-_EOCD.size + 4] != b"PK\x05\x06":
        raise TensorFileError(damaged)
    _, disk, cd_disk, here, total, cd_size, cd_offset, comment = _EOCD.unpack(data[-_EOCD.size:])
    if comment or disk or cd_disk or here != total:
        raise TensorFileError(damaged)
    if total == 0xFFFF or cd_size == 0xFFFFFFFF or cd_offset == 0xFFFFFFFF:  # zip64
        at = len(data) - _EOCD.size - _ZIP64_LOCATOR.size
        if at < 0 or data[at:at + 4] != b"PK\x06\x07":
            raise TensorFileError(damaged)
        record = _ZIP64_LOCATOR.unpack(data[at:at + _ZIP64_LOCATOR.size])[2]
        if record + _ZIP64_EOCD.size > at:
            raise TensorFileError(damaged)
        fields = _ZIP64_EOCD.unpack(data[record:record + _ZIP64_EOCD.size])
        if fields[0] != b"PK\x06\x06":
            raise TensorFileError(damaged)
        here, total, cd_size, cd_offset = fields[6:10]
        if here != total:
            raise TensorFileError(damaged)
    if total > MAX_ZIP_MEMBERS:
        raise TensorFileError(N_("This file holds {count} files; the limit is {limit}."), count=total,
                              limit=MAX_ZIP_MEMBERS)
    if cd_size > MAX_ZIP_DIRECTORY or cd_offset + cd_size > len(data):
        raise TensorFileError(damaged)
    return total


def open_zip(data: bytes) -> zipfile.ZipFile:
    """A zip whose end record passed its checks (members, directory size); encrypted ones refused."""
    total = _zip_directory(data)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError, struct.error):
        raise TensorFileError(N_("This file is a damaged zip archive.")) from None
    infos = archive.infolist()
    if len(infos) != total or len({info.filename for info in infos}) != len(infos):
        raise TensorFileError(N_("This file is a damaged or unusual zip archive."))
    if any(info.flag_bits & 0x1 for info in infos):
        raise TensorFileError(N_("This file is an encrypted zip archive."))
    return archive


def zip_kind(archive: zipfile.ZipFile) -> str:
    """'torch' if the archive has <dir>/data.pkl, 'npz' if every member is .npy, else a refusal kind."""
    names = archive.namelist()
    if not names:
        return "empty_zip"
    if any(re.fullmatch(r"[^/]+/data\.pkl", name) for name in names):
        return "torch"
    if all(name.endswith(".npy") for name in names):
        return "npz"
    return "other_zip"


def stored_member(data: bytes, info: zipfile.ZipInfo) -> memoryview:
    """The bytes of an uncompressed zip member, in place, after its local header and CRC are checked."""
    damaged = TensorFileError(N_("This file has a damaged member."))
    at = info.header_offset
    if data[at:at + 4] != ZIP_MAGIC or at + 30 > len(data):
        raise damaged
    name_length, extra_length = struct.unpack("<HH", data[at + 26:at + 30])
    start = at + 30 + name_length + extra_length
    name = info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437")
    if data[at + 30:at + 30 + name_length] != name or start + info.compress_size > len(data):
        raise damaged  # as zipfile.open checks: the local header must name the member the directory does
    member = memoryview(data)[start:start + info.compress_size]
    if zlib.crc32(member) != info.CRC:
        raise damaged
    return member
