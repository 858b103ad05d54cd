"""Arrow arrays made from Python and numpy values, and numpy views of Arrow integers,
without pyarrow's conversions.

Converting any Python or numpy value (``pa.array``, ``pa.scalar``, ``pa.table`` of lists,
a Python literal passed to a compute function, ``to_numpy``) makes pyarrow import pandas
when it is installed: 0.2-0.3 s of CPU and ~60 MB, paid once by every fresh process that
converts (the CLI, a sensor's poke in reschedule mode, the compaction job's driver and
Python workers). A routine run needs none of pandas, so its arrays are built from buffers.
"""

from __future__ import annotations

import array
import itertools
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

# The offsets of a string array: 32-bit signed integers.
_OFFSETS = next(code for code in "ilh" if array.array(code).itemsize == 4)


def numpy_array(values: np.ndarray) -> pa.Array:
    """A numeric Arrow array (no nulls) of numpy's type, sharing ``values``' memory."""
    values = np.ascontiguousarray(values)
    kind = pa.from_numpy_dtype(values.dtype)
    return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(values)])


def string_array(values: Sequence[str]) -> pa.Array:
    """A string Arrow array (no nulls) of ``values``, encoded as UTF-8."""
    encoded = [value.encode() for value in values]
    offsets = array.array(_OFFSETS, itertools.accumulate(map(len, encoded), initial=0))
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(pa.string(), len(encoded), buffers)


def numbers(values: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Integers or floating-point values as a numpy view. What a null's slot holds is
    undefined: for values without nulls, or where a caller sets the nulls apart."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if len(values) == 0:
        return np.empty(0, np.int64)
    kind = values.type
    code = "f" if pa.types.is_floating(kind) else "u" if pa.types.is_unsigned_integer(kind) else "i"
    data = np.frombuffer(values.buffers()[1], np.dtype(f"{code}{kind.bit_width // 8}"))
    return data[values.offset : values.offset + len(values)]


def booleans(values: pa.Array) -> np.ndarray:
    """A boolean array as numpy's booleans (a null's slot: undefined, as in :func:`numbers`)."""
    if len(values) == 0:
        return np.empty(0, bool)
    packed = np.frombuffer(values.buffers()[1], np.uint8)
    bits = np.unpackbits(packed, count=values.offset + len(values), bitorder="little")
    return bits[values.offset :].astype(bool)
