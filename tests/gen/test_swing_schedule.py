"""The Schedule contract type: entries, block and element ranges, validation, execution order."""

import json

import numpy as np
import pytest

from innet.gen.swing import Entry, Schedule, build_schedule


def two_ranks(**changes):
    """A valid 2-rank, 1-step schedule: rank 0 sends block 1, rank 1 sends block 0."""
    args = {"algorithm": "x", "shape": (2,), "blocks": [2],
            "send_peer": [[[1, 0]]], "recv_peer": [[[1, 0]]],
            "send": [[[(1, 2), (0, 1)]]], "recv": [[[(0, 1), (1, 2)]]], "reduce": [[True]]}
    args.update(changes)
    return Schedule(**args)


def test_entries_are_plain_values():
    schedule = two_ranks()
    entry = schedule.entry(0, 0, 0)
    assert entry == Entry(collective=0, step=0, send_peer=1, recv_peer=1, send=(1, 2),
                          recv=(0, 1), reduce=True)
    assert all(type(v) in (int, bool, tuple) for v in vars(entry).values())
    assert not entry.idle
    assert schedule.table(1) == (schedule.entry(0, 0, 1),)
    assert list(schedule) == [schedule.entry(0, 0, 0), schedule.entry(0, 0, 1)]
    assert schedule.peers(0) == [[1, 0]]
    assert schedule.recv_peers(0) == [[1, 0]]
    assert schedule.blocks_sent() == [[1, 1]]
    assert repr(schedule) == "Schedule('x', shape=2, collectives=1, steps=1, blocks=[2])"


def test_none_means_idle():
    schedule = two_ranks(send_peer=[[[None, 0]]], recv_peer=[[[1, None]]],
                         send=[[[(0, 0), (0, 1)]]], recv=[[[(0, 1), (0, 0)]]])
    assert schedule.entry(0, 0, 0).send_peer is None
    assert schedule.entry(0, 0, 1).recv_peer is None
    assert schedule.table(0)[0].send == (0, 0)


def test_table_is_step_major():
    schedule = build_schedule("swing-b", (4, 4))
    table = schedule.table(5)
    assert len(table) == schedule.steps * schedule.collectives
    assert [(e.step, e.collective) for e in table] == [
        (s, c) for s in range(schedule.steps) for c in range(schedule.collectives)]


@pytest.mark.parametrize("n", [0, 1, 3, 7, 64, 1001])
def test_shares_and_blocks_tile_the_vector(n):
    schedule = build_schedule("swing-b", (2, 4))  # 4 collectives of 8 blocks
    covered = []
    for c in range(schedule.collectives):
        lo, hi = schedule.share(c, n)
        sizes = []
        for b in range(schedule.blocks[c]):
            b_lo, b_hi = schedule.elements(c, (b, b + 1), n)
            covered.extend(range(b_lo, b_hi))
            sizes.append(b_hi - b_lo)
        assert max(sizes) - min(sizes) <= 1  # balanced, empty blocks when n is small
        assert schedule.elements(c, (0, schedule.blocks[c]), n) == (lo, hi)
    assert covered == list(range(n))


def test_fraction_sent_weights_blocks_by_share():
    schedule = two_ranks()
    assert schedule.fraction_sent() == [0.5, 0.5]


@pytest.mark.parametrize(("changes", "error", "message"), [
    ({"algorithm": 3}, TypeError, r"^Algorithm must be a string, not 3$"),
    ({"shape": ()}, ValueError,
     r"^Shape must be a non-empty sequence of positive integers, not \(\)$"),
    ({"send_peer": [[["a", 0]]]}, TypeError, r"^send_peer must be an array of integers$"),
    ({"send_peer": np.zeros((1, 1, 2))}, TypeError,
     r"^send_peer must be an array of integers, not float64$"),
    ({"recv_peer": [[1, 0]]}, ValueError, r"^recv_peer must have 3 dimensions, not 2$"),
    ({"reduce": [[1]]}, TypeError, r"^reduce must be an array of booleans, not int64$"),
    ({"recv_peer": [[[1, 0, 1]]]}, ValueError,
     r"^recv_peer must have shape \(1, 1, 2\), not \(1, 1, 3\)$"),
    ({"send": [[[(1, 2)]]]}, ValueError,
     r"^send must have shape \(1, 1, 2, 2\), not \(1, 1, 1, 2\)$"),
    ({"reduce": [[True, False]]}, ValueError,
     r"^reduce must have shape \(1, 1\), not \(1, 2\)$"),
    ({"blocks": [2, 2]}, ValueError,
     r"^blocks must have one count per collective \(1\), not 2$"),
    ({"blocks": [0]}, ValueError,
     r"^Block counts must be integers from 1 to 2147483648, not \(0,\)$"),
    ({"send_peer": [[[0, 0]]]}, ValueError,
     r"^Collective 0, step 0: rank 0 has send peer 0, not a rank other than itself in 0\.\.1$"),
    ({"recv": [[[(0, 3), (1, 2)]]]}, ValueError,
     r"^Collective 0, step 0: rank 0 has recv range \(0, 3\), not within 0\.\.2$"),
    ({"send": [[[(0, 0), (0, 1)]]]}, ValueError,
     (r"^Collective 0, step 0: rank 0's send has an empty range; a range is empty exactly "
     r"when there is no peer$")),
    ({"send_peer": [[[-1, 0]]]}, ValueError,
     (r"^Collective 0, step 0: rank 0's send has no peer; a range is empty exactly when "
     r"there is no peer$")),
    ({"recv": [[[(0, 2), (1, 2)]]]}, ValueError,
     (r"^Collective 0, step 0: rank 1 sends blocks \(0, 1\) to rank 0, but rank 0 receives "
     r"blocks \(0, 2\) from rank 1$")),
    ({"send_peer": [[[None, 0]]], "send": [[[(0, 0), (0, 1)]]]}, ValueError,
     (r"^Collective 0, step 0: rank 1 receives blocks \(1, 2\) from rank 0, but rank 0 sends "
     r"nothing$")),
])
def test_bad_schedules_are_rejected(changes, error, message):
    with pytest.raises(error, match=message):
        two_ranks(**changes)


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda s: s.entry(1, 0, 0), ValueError, r"^Collective must be in 0\.\.0, not 1$"),
    (lambda s: s.entry(0, -1, 0), ValueError, r"^Step must be in 0\.\.0, not -1$"),
    (lambda s: s.table(2), ValueError, r"^Rank must be in 0\.\.1, not 2$"),
    (lambda s: s.entry(0, 0, "0"), TypeError, r"^Rank must be an integer, not '0'$"),
    (lambda s: s.share(0, -1), ValueError, r"^Vector length must be non-negative, not -1$"),
    (lambda s: s.share(0, 1.5), TypeError, r"^Vector length must be an integer, not 1\.5$"),
    (lambda s: s.elements(0, (1, 3), 8), ValueError,
     r"^Block range must lie within 0\.\.2, not \(1, 3\)$"),
])
def test_bad_lookups(call, error, message):
    with pytest.raises(error, match=message):
        call(two_ranks())


def test_arrays_are_read_only():
    arrays = two_ranks().arrays()
    with pytest.raises(ValueError, match="read-only"):
        arrays["send_peer"][0, 0, 0] = 5


@pytest.mark.parametrize("algorithm", ["swing-b", "ring", "recdoub-l"])
def test_json_round_trip(algorithm):
    schedule = build_schedule(algorithm, (2, 3))
    text = schedule.to_json()
    again = Schedule.from_json(text)
    assert again.to_json() == text
    assert list(again) == list(schedule)
    assert (again.algorithm, again.shape, again.blocks) == (algorithm, (2, 3), schedule.blocks)


def _edit(mutate):
    data = json.loads(two_ranks().to_json())
    mutate(data)
    return json.dumps(data)


@pytest.mark.parametrize(("text", "message"), [
    ("{", (r"^Schedule JSON does not parse: Expecting property name enclosed in double quotes: "
          r"line 1 column 2 \(char 1\)$")),
    ("[]", r"^Schedule JSON must have format 'innet-swing-schedule'$"),
    (_edit(lambda d: d.update(version=2)), r"^Schedule JSON version must be 1, not 2$"),
    (_edit(lambda d: d.update(collectives=[])),
     r"^Schedule JSON must have at least one collective$"),
    (_edit(lambda d: d["collectives"][0].pop("recv")),
     r"^Schedule JSON is missing or mistypes a field: 'recv'$"),
    (_edit(lambda d: d["collectives"][0]["send"][0].append([1])),
     r"^Schedule JSON field 'send' is not a rectangular array of int64$"),
    (_edit(lambda d: d["collectives"][0]["send"][0][0].__setitem__(0, 0.5)),
     r"^Schedule JSON field 'send' is not a rectangular array of int64$"),
    (_edit(lambda d: d["collectives"][0]["send_peer"][0].__setitem__(0, 10**20)),
     r"^Schedule JSON field 'send_peer' is not a rectangular array of int64$"),
    (_edit(lambda d: d["collectives"][0]["reduce"].__setitem__(0, "a")),
     r"^Schedule JSON field 'reduce' is not a rectangular array of bool$"),
    ("[" * 100000 + "]" * 100000, r"^Schedule JSON does not parse: nested too deeply$"),
    ('{"shape": ' + "9" * 5000 + "}",
     r"^Schedule JSON does not parse: an integer of 5,000 digits, more than 1,000$"),
    (_edit(lambda d: d.update(shape=[2**62, 2**62])),
     (r"^Shape 4611686018427387904x4611686018427387904 has "
      r"21267647932558653966460912964485513216 ranks, more than the 1048576 supported$")),
    (_edit(lambda d: d["collectives"][0].update(blocks=10**30)),
     r"^Block counts must be integers from 1 to 2147483648, not \(10{30},"),
    (_edit(lambda d: d["collectives"][0]["send"][0][0].__setitem__(1, 1)),
     (r"^Collective 0, step 0: rank 0's send has an empty range; a range is empty exactly "
     r"when there is no peer$")),
])
def test_bad_json_is_rejected(text, message):
    with pytest.raises(ValueError, match=message):
        Schedule.from_json(text)
