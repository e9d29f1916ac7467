"""vtk_frame.py — reads the VTK frames srd writes (ASCII .vtu, or `binary`: appended raw arrays) for the checks."""
import re
import struct
import xml.etree.ElementTree as ET


def frame_arrays(path):
    """Every DataArray of the frame in file order, as (name or None, list of floats)."""
    piece = ET.parse(path).getroot().find("UnstructuredGrid/Piece")
    return [(arr.get("Name"), [float(v) for v in (arr.text or "").split()]) for arr in piece.iter("DataArray")]


def frame_points(path):
    """The points of a frame, as (x, y, z) tuples in node order."""
    piece = ET.parse(path).getroot().find("UnstructuredGrid/Piece")
    values = [float(v) for v in piece.find("Points/DataArray").text.split()]
    return [tuple(values[i:i + 3]) for i in range(0, len(values), 3)]


def binary_arrays(path):
    """Every DataArray of a `binary` frame (appended raw data, 64-bit size headers) in file order,
    as (name or None, list of values), read through its offset."""
    data = open(path, "rb").read()
    head, raw = data.split(b'<AppendedData encoding="raw">', 1)
    raw = raw[raw.index(b"_") + 1:]
    arrays = []
    for tag in re.findall(rb"<DataArray [^>]*/>", head):
        kind = re.search(rb'type="(\w+)"', tag).group(1)
        name = re.search(rb'Name="(\w+)"', tag)
        at = int(re.search(rb'offset="(\d+)"', tag).group(1))
        size = struct.unpack("<Q", raw[at:at + 8])[0]
        fmt = {b"Float64": "d", b"Int32": "i", b"UInt8": "B"}[kind]
        count = size // struct.calcsize(fmt)
        arrays.append((name.group(1).decode() if name else None,
                       list(struct.unpack("<%d%s" % (count, fmt), raw[at + 8:at + 8 + size]))))
    return arrays
