"""vtk_frame.py — reads the VTK frames srd writes (ASCII .vtu) for the checks."""
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
