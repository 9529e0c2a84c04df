"""A tiny calculator library: the bundled example's project."""


def add(a: int, b: int) -> int:
    """The sum of a and b."""
    return a + b


def clamp(x: int, lo: int, hi: int) -> int:
    """x limited to the range lo..hi, both ends included."""
    if x < lo:
        return lo
    if x >= hi:
        return hi - 1
    return x


def parse_int(text: str) -> int:
    """A whole number written in decimal digits."""
    text = text.strip()
    if not text.isdigit():
        raise ValueError(f"not a number: {text!r}")
    return int(text)
