"""Clipping event texts and tool requests: a text's first 2,000 bytes of UTF-8 (cut on a character
boundary) and its whole size in bytes, whatever its characters. clip_text and clip_input measure
ASCII texts without encoding them; these cases pin that they agree with the bytes."""

from __future__ import annotations

import pytest

from asz_core.textclip import EVENT_TEXT_BYTES, INPUT_DEPTH, clip_input, clip_text, depth_cuts

LIMIT = EVENT_TEXT_BYTES
TEXTS = [
    "", "a", "a" * LIMIT, "a" * (LIMIT + 1), "a" * (LIMIT * 3),
    "é" * (LIMIT // 2), "é" * (LIMIT // 2 + 1), "a" + "é" * LIMIT,  # two bytes a character, cut inside one
    "a" * (LIMIT - 1) + "€", "💥" * 600,  # three and four bytes a character, across the limit
]


def _bytes_of(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


@pytest.mark.parametrize("text", TEXTS, ids=lambda t: f"{len(t)}-{'ascii' if t.isascii() else 'utf8'}")
def test_clip_text_keeps_the_first_bytes_and_the_whole_size(text: str) -> None:
    got = clip_text(text)
    b = _bytes_of(text)
    assert got["size"] == len(b)
    kept = _bytes_of(got["text"])
    assert len(kept) <= LIMIT and b.startswith(kept)
    assert len(kept) > LIMIT - 4 if len(b) > LIMIT else got["text"] == text  # no more than a character short


@pytest.mark.parametrize("text", TEXTS, ids=lambda t: f"{len(t)}-{'ascii' if t.isascii() else 'utf8'}")
def test_clip_input_clips_every_long_string_and_says_its_size(text: str) -> None:
    got = clip_input({"path": text, "items": [text, 3, None, {"deep": text}]})
    b = _bytes_of(text)
    for value in (got["path"], got["items"][0], got["items"][3]["deep"]):
        if len(b) <= LIMIT:
            assert value == text
        else:
            head, tail = value.rsplit("…", 1)
            assert tail == f"[{len(b)} bytes]"
            assert b.startswith(_bytes_of(head)) and LIMIT - 4 < len(_bytes_of(head)) <= LIMIT
    assert got["items"][1:3] == [3, None]


def test_clip_input_cuts_nesting_and_lists_and_counts_the_cut() -> None:
    deep: object = "x"
    for _ in range(INPUT_DEPTH + 5):
        deep = {"k": [deep]}
    before = depth_cuts()
    got = clip_input({"deep": deep, "many": ["s"] * 300})
    assert depth_cuts() == before + 1
    assert len(got["many"]) == 200
    v: object = got["deep"]
    levels = 0
    while isinstance(v, dict | list):
        v = v["k"] if isinstance(v, dict) else v[0]
        levels += 1
    assert levels == INPUT_DEPTH - 1 and isinstance(v, str) and "nested deeper" in v


@pytest.mark.parametrize("value", [["text"], {"text": "x"}, 5])
def test_clip_text_of_no_string_fails_as_before(value: object) -> None:
    """Adapters catch this per line and warn with its words (a list where a text was)."""
    with pytest.raises(AttributeError, match="has no attribute 'encode'"):
        clip_text(value)  # type: ignore[arg-type]


def test_a_lone_surrogate_is_measured_as_written_and_left_out_of_the_clip() -> None:
    """JSON may carry one (``"\\ud800"``): three bytes in the size, not valid UTF-8 in the text kept."""
    text = "\ud800" + "a" * LIMIT
    assert clip_text(text) == {"text": "a" * (LIMIT - 3), "size": LIMIT + 3}
    assert clip_input([text]) == ["a" * (LIMIT - 3) + f"…[{LIMIT + 3} bytes]"]
    assert clip_text("\ud800") == {"text": "\ud800", "size": 3}
