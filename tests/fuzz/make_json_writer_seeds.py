#!/usr/bin/env python3
"""Writes the json-writer fuzz target's seeds (tests/fuzz/fuzz_json_writer.cpp)
into DIR: calls of roijson's JSON writer as the target reads them.

    tests/fuzz/make_json_writer_seeds.py tests/fuzz/corpus/json-writer
"""
import math
import struct
import sys

OBJECT, CLOSE, ARRAY, STRING, DOUBLE, INTEGER, TRUE = 0, 1, 2, 3, 5, 7, 8


def text(s):
    b = s if isinstance(s, bytes) else s.encode()
    return bytes([len(b)]) + b


def member(name, op, arg=b''):
    """A member of an object: the call, then its name, then its argument."""
    return bytes([op]) + text(name) + arg


def dbl(v):
    return struct.pack('<d', v)


seeds = {
    # a roijson line: NaN and infinite box, confidence and extra numbers
    'roijson-line': bytes([OBJECT])
    + member('timestamp', INTEGER, struct.pack('<q', 33333333))
    + member('objects', ARRAY)
    + bytes([OBJECT])
    + member('x', INTEGER, struct.pack('<q', 700))
    + member('roi_type', STRING, text('face'))
    + member('detection', OBJECT)
    + member('bounding_box', OBJECT)
    + member('x_min', DOUBLE, dbl(math.nan))
    + member('y_min', DOUBLE, dbl(math.inf))
    + member('x_max', DOUBLE, dbl(-math.inf))
    + member('y_max', DOUBLE, dbl(0.213))
    + bytes([CLOSE])
    + member('confidence', DOUBLE, dbl(-math.nan))
    + member('label', STRING, text(b'f\xc3ce\xff'))
    + bytes([CLOSE, CLOSE, CLOSE, CLOSE]),
    # numbers at the edges: exponents without a point, subnormal, -0, the largest
    'numbers': bytes([ARRAY])
    + b''.join(bytes([DOUBLE]) + dbl(v) for v in
               (1e22, 1e17, 1e16, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 100.0, 1e-7))
    + b''.join(bytes([INTEGER]) + struct.pack('<q', v) for v in (0, -1, 2**63 - 1, -2**62))
    + bytes([CLOSE]),
    # strings: escapes, control characters, invalid and overlong UTF-8, a surrogate, NUL
    'strings': bytes([OBJECT])
    + member(b'"\\\n\x01', STRING, text(b'tab\there "quoted" back\\slash \x7f'))
    + member(b'\xff\xfe', STRING, text(b'\xc0\xaf overlong, \xed\xa0\x80 surrogate, \xe2\x82 cut'))
    + member(b'nul\x00inside', STRING, text(b'a\x00b'))
    + member('ok', STRING, text('caf\u00e9 \u2026 \U0001F600'))
    + bytes([CLOSE]),
    # nesting, empty containers, true and null
    'nesting': bytes([ARRAY, ARRAY, CLOSE, OBJECT, CLOSE, ARRAY, TRUE, 4, 0, ARRAY, ARRAY, ARRAY, CLOSE]),
}

for name, data in seeds.items():
    with open(f'{sys.argv[1]}/{name}', 'wb') as f:
        f.write(data)
