import unittest

from calc import parse_int


class ParseTest(unittest.TestCase):
    def test_positive(self) -> None:
        self.assertEqual(parse_int("42"), 42)

    def test_negative(self) -> None:
        self.assertEqual(parse_int("-7"), -7)


if __name__ == "__main__":
    unittest.main()
