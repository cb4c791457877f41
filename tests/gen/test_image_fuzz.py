"""Fuzzing the decoder: damaged images raise ImageError and nothing else.

Flips, truncations and extensions of every encoding; and binary images damaged behind a
recomputed length and CRC, which reach the topology parser, the target parser and the
validator instead of stopping at the CRC.
"""

import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from image_samples import reseal, sample

from innet.gen.image import HEADER_BYTES, Image, ImageError, decode, encode

IMAGE = sample()
DATA = {fmt: (lambda d: d if isinstance(d, bytes) else d.encode())(encode(IMAGE, fmt))
        for fmt in ("bin", "hex", "json")}
TARGETS = HEADER_BYTES + struct.unpack_from("<I", DATA["bin"], 52)[0]

SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def mutate(data, flips, cut, tail):
    data = bytearray(data)
    for position, mask in flips:
        data[position % len(data)] ^= mask
    data = data[:len(data) - cut % (len(data) + 1)] if cut else data
    return bytes(data) + tail


def check(data):
    try:
        result = decode(data)
    except ImageError as error:
        message = str(error)
        assert message
        assert "\n" not in message
    else:
        assert isinstance(result, Image)


flips = st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(1, 255)), max_size=4)


@SETTINGS
@given(fmt=st.sampled_from(sorted(DATA)), flips=flips, cut=st.integers(0, 1 << 16),
       tail=st.binary(max_size=16))
def test_damaged_images_raise_image_error(fmt, flips, cut, tail):
    check(mutate(DATA[fmt], flips, cut, tail))


@SETTINGS
@given(flips=st.lists(st.tuples(st.integers(8, 1 << 20), st.integers(1, 255)), min_size=1,
                      max_size=3),
       cut=st.integers(0, 64), tail=st.binary(max_size=12))
def test_damage_behind_a_valid_crc_raises_image_error(flips, cut, tail):
    check(reseal(mutate(DATA["bin"], flips, cut, tail)))


@SETTINGS
@given(changes=st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, (1 << 32) - 1)),
                        min_size=1, max_size=3))
def test_random_words_in_the_targets_raise_image_error(changes):
    data = bytearray(DATA["bin"])
    words = (len(data) - TARGETS) // 4
    for index, word in changes:
        struct.pack_into("<I", data, TARGETS + 4 * (index % words), word)
    check(reseal(bytes(data)))


@SETTINGS
@given(position=st.integers(0, 1 << 16), text=st.text(max_size=8))
def test_edited_json_raises_image_error(position, text):
    data = DATA["json"].decode()
    position %= len(data)
    check(data[:position] + text + data[position + len(text):])
